"""Blender reads what PBD Lab wrote (run inside `blender --background`):

1. the rest mesh (.obj) with the point cache (.pc2) applied by a Mesh Cache modifier: at cached
   frames 1, the middle one and the last, the evaluated vertices equal ours within 1e-6 m;
2. the binary glTF (.glb): its morph targets' weight animation evaluated at each of those
   frames' keys gives the same vertices, and the rigid bodies' nodes end at their last poses.

    blender --background --factory-startup --python-exit-code 1 \\
        --python blender_check.py -- CACHE_FOLDER NAME
"""

import json
import pathlib
import sys

import bpy
import numpy
from mathutils import Vector

# Debian bookworm's Blender 3.4 glTF importer uses numpy.bool, which Debian's numpy 1.24 no
# longer has (the importer fails in set_poly_smoothing): give it the alias back.
if "bool" not in numpy.__dict__:
    numpy.bool = numpy.bool_

folder, name = pathlib.Path(sys.argv[sys.argv.index("--") + 1]), sys.argv[sys.argv.index("--") + 2]
expected = json.loads((folder / "expected.json").read_text())
frames = expected["frames"]
checked = sorted({1, len(frames) // 2, len(frames) - 1})
TOLERANCE = 1e-6
failures = []


def compare(label, got, want):
    if len(got) != len(want):
        failures.append(f"{label}: {len(got)} vertices, expected {len(want)}")
        return
    worst = max((Vector(g) - Vector(w)).length for g, w in zip(got, want))
    print(f"blender: {label}: {len(got)} vertices, largest difference {worst:.3g} m")
    if worst > TOLERANCE:
        failures.append(f"{label}: vertices differ by up to {worst:.3g} m")


def evaluated_vertices(obj, world=False):
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(depsgraph)
    mesh = ev.to_mesh()
    m = ev.matrix_world.copy()
    out = [tuple(m @ v.co) if world else tuple(v.co) for v in mesh.vertices]
    ev.to_mesh_clear()
    return out


# 1. OBJ + Mesh Cache. Our axes as they are (forward +Y, up +Z is Blender's own: no conversion).
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.wm.obj_import(filepath=str(folder / f"{name}.obj"), forward_axis="Y", up_axis="Z")
(obj,) = bpy.context.selected_objects
cache = obj.modifiers.new("pbdlab", "MESH_CACHE")
cache.cache_format = "PC2"
cache.filepath = str(folder / f"{name}.pc2")
cache.frame_start = 0
scene = bpy.context.scene
for k in checked:
    scene.frame_set(k)
    compare(f"obj + pc2 at frame {k}", evaluated_vertices(obj), frames[k])

# 2. glTF: Y up in the file, Z up in Blender: (x, y, z) -> (x, -z, y).
def to_blender(p):
    return (p[0], -p[2], p[1])


bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=str(folder / f"{name}.glb"))
scene = bpy.context.scene
cloth = next(o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys)
keys = cloth.data.shape_keys
targets = [kb.name for kb in keys.key_blocks[1:]]
if len(targets) != len(frames):
    failures.append(f"glb: {len(targets)} morph targets, expected {len(frames)}")
key_frame = {}
for fc in keys.animation_data.action.fcurves:
    target = fc.data_path.split('"')[1]
    for point in fc.keyframe_points:
        if abs(point.co[1] - 1) < 1e-6:
            key_frame[target] = point.co[0]
for k in checked:
    f = key_frame[targets[k]]
    scene.frame_set(int(f), subframe=f - int(f))
    compare(f"glb at frame {k} (Blender frame {f:.3f})", evaluated_vertices(cloth, world=True),
            [to_blender(p) for p in frames[k]])
last = key_frame[targets[-1]]
scene.frame_set(int(last), subframe=last - int(last))
for body in expected["rigid"]:
    node = bpy.data.objects.get(body["name"])
    if node is None:
        failures.append(f"glb: no node for rigid body {body['name']}")
        continue
    got = node.matrix_world.to_translation()
    want = Vector(to_blender(body["position"]))
    print(f"blender: rigid body {body['name']} ends {(got - want).length:.3g} m from ours")
    if (got - want).length > 1e-5:
        failures.append(f"glb: rigid body {body['name']} at {tuple(got)}, expected {tuple(want)}")

if failures:
    raise SystemExit("blender check failed:\n  " + "\n  ".join(failures))
print("blender: all checks passed")
