"""The caches `pbdlab-cli simulate --cache` writes, read by tools nobody here wrote: VTK's own
XML readers (Debian's python3-vtk9) for every grid the ParaView collection lists, and the
formats' specifications for the collection itself (VTK's Python has no .pvd reader: ParaView's
is checked by scripts/test-interop), the glTF file and the point cache. The frame count, the times and the
last frame's positions must equal what `simulate --out` reports for the same run."""

import json
import os
import pathlib
import struct
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import vtk
from vtk.util.numpy_support import vtk_to_numpy

CLI = os.environ.get("PBDLAB_CLI")


def simulate(tmp_path, scene, steps, every, formats="all", extra=()):
    folder = tmp_path / "cache"
    out = tmp_path / "run.json"
    done = subprocess.run([CLI, "simulate", scene, "--steps", str(steps), "--cache", str(folder),
                           "--cache-every", str(every), "--cache-format", formats,
                           "--out", str(out), *extra], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return folder, json.loads(out.read_text())


def read_vtu(path):
    reader = vtk.vtkXMLUnstructuredGridReader()
    reader.SetFileName(str(path))
    reader.Update()
    assert reader.GetErrorCode() == 0, path
    grid = reader.GetOutput()
    assert grid is not None and grid.GetNumberOfPoints() > 0, path
    return grid


def pvd_entries(folder, scene):
    root = ET.parse(folder / f"{scene}.pvd").getroot()
    assert root.get("type") == "Collection"
    return [(float(d.get("timestep")), int(d.get("part")), d.get("name"), folder / d.get("file"))
            for d in root.iter("DataSet")]


def point_array(grid, name):
    a = grid.GetPointData().GetArray(name)
    assert a is not None, name
    return vtk_to_numpy(a)


def cell_array(grid, name):
    a = grid.GetCellData().GetArray(name)
    assert a is not None, name
    return vtk_to_numpy(a)


def read_pc2(path):
    data = path.read_bytes()
    assert data[:12] == b"POINTCACHE2\0"
    version, points, start, rate, samples = struct.unpack_from("<iiffi", data, 12)
    assert version == 1 and rate == 1.0 and start == 0.0
    frames = np.frombuffer(data, dtype="<f4", offset=32).reshape(samples, points, 3)
    return frames


def read_obj_vertices(path):
    return np.array([[float(v) for v in line.split()[1:4]]
                     for line in path.read_text().splitlines() if line.startswith("v ")])


@pytest.mark.parametrize("scene,steps,every,blocks", [
    ("cloth", 60, 10, {"particles", "surfaces"}),
    ("air-boxes", 40, 8, {"particles", "tets", "surfaces", "air"}),
    ("stack", 40, 10, {"rigid"}),
    ("cloth-on-rigid", 40, 10, {"particles", "surfaces", "rigid"}),
])
def test_vtk_reads_every_frame_of_the_collection(tmp_path, scene, steps, every, blocks):
    formats = "pvd" if scene == "stack" else "pvd,pc2"
    folder, run = simulate(tmp_path, scene, steps, every, formats)
    entries = pvd_entries(folder, scene)
    times = sorted({t for t, *_ in entries})
    assert len(times) == steps // every + 1 == run["cache"]["frames"]
    assert times[0] == 0.0
    assert times[-1] == pytest.approx(run["time"], rel=1e-12)
    dt = run["time"] / steps
    np.testing.assert_allclose(times, [i * every * dt for i in range(len(times))], rtol=1e-9)
    assert {name for *_, name, _ in entries} == blocks
    # A block keeps its part number in every frame.
    assert len({(part, name) for _, part, name, _ in entries}) == len(blocks)

    grids = {}
    for time, part, name, path in entries:
        grid = read_vtu(path)
        if time == times[-1]:
            grids[name] = grid
    # The last frame's particles are simulate's positions, bit for bit.
    positions = np.array(run["positions"])
    if "particles" in blocks:
        particles = grids["particles"]
        np.testing.assert_array_equal(vtk_to_numpy(particles.GetPoints().GetData()), positions)
        assert particles.GetNumberOfCells() == 1
    # Every cell block's points are the particles it names.
    for name in blocks & {"tets", "surfaces", "air"}:
        g = grids[name]
        index = point_array(g, "particle")
        np.testing.assert_array_equal(vtk_to_numpy(g.GetPoints().GetData()), positions[index])
    fields = run["fields"]
    if "surfaces" in blocks:
        np.testing.assert_allclose(cell_array(grids["surfaces"], "area_ratio"),
                                   fields["triangle_area_ratio"], rtol=1e-12)
        assert cell_array(grids["surfaces"], "principal_stretch").shape == \
            (len(fields["triangle_area_ratio"]), 2)
    if "tets" in blocks:
        np.testing.assert_allclose(cell_array(grids["tets"], "volume_ratio"),
                                   fields["tet_volume_ratio"], rtol=1e-12)
        np.testing.assert_allclose(cell_array(grids["tets"], "green_strain"),
                                   fields["tet_green_strain"], rtol=1e-9, atol=1e-15)
    if "air" in blocks:
        air = grids["air"]
        assert air.GetNumberOfCells() == run["air"]["tets"] + run["air"]["triangles"]
        assert int(cell_array(air, "inverted").sum()) == run["air"]["inverted_after"]
    if "rigid" in blocks:
        rigid = grids["rigid"]
        body = cell_array(rigid, "body")
        assert set(body) == set(range(len(run["rigid"]["bodies"])))
        # Each body's posed shape is centred on its centre of mass (boxes: the vertices' mean).
        points = vtk_to_numpy(rigid.GetPoints().GetData())
        for b, info in enumerate(run["rigid"]["bodies"]):
            cells = np.flatnonzero(body == b)
            ids = set()
            for c in cells:
                cell = rigid.GetCell(int(c))
                ids.update(cell.GetPointId(k) for k in range(3))
            np.testing.assert_allclose(points[sorted(ids)].mean(axis=0), info["position"],
                                       atol=1e-9)

    if "pc2" in formats:
        cache = read_pc2(folder / f"{scene}.pc2")
        rest = read_obj_vertices(folder / f"{scene}.obj")
        assert cache.shape == (len(times), len(rest), 3)
        # The obj is frame 0; the last sample is the last frame, to float precision.
        first = {name: read_vtu(p) for t, _, name, p in entries if t == 0.0}
        first_surface = vtk_to_numpy(first["surfaces"].GetPoints().GetData())
        np.testing.assert_allclose(rest, first_surface, atol=1e-6)
        np.testing.assert_allclose(cache[0], first_surface, atol=1e-6)
        last_surface = vtk_to_numpy(grids["surfaces"].GetPoints().GetData())
        np.testing.assert_allclose(cache[-1], last_surface, atol=1e-6)


def read_glb(path):
    data = path.read_bytes()
    magic, version, length = struct.unpack_from("<4sII", data, 0)
    assert magic == b"glTF" and version == 2 and length == len(data)
    json_length, json_type = struct.unpack_from("<I4s", data, 12)
    assert json_type == b"JSON"
    doc = json.loads(data[20:20 + json_length])
    bin_length, bin_type = struct.unpack_from("<I4s", data, 20 + json_length)
    assert bin_type == b"BIN\0"
    blob = data[28 + json_length:28 + json_length + bin_length]
    sizes = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}
    kinds = {5126: "<f4", 5125: "<u4"}

    def accessor(i):
        a = doc["accessors"][i]
        view = doc["bufferViews"][a["bufferView"]]
        n = a["count"] * sizes[a["type"]]
        out = np.frombuffer(blob, dtype=kinds[a["componentType"]], count=n,
                            offset=view.get("byteOffset", 0) + a.get("byteOffset", 0))
        return out.reshape(a["count"], sizes[a["type"]]) if sizes[a["type"]] > 1 else out

    return doc, accessor


def test_the_gltf_morph_animation_ends_where_the_run_does(tmp_path):
    folder, run = simulate(tmp_path, "cloth-on-rigid", 40, 10, "glb,pc2")
    doc, accessor = read_glb(folder / "cloth-on-rigid.glb")
    cache = read_pc2(folder / "cloth-on-rigid.pc2")
    frames = cache.shape[0]
    mesh = doc["meshes"][0]
    prim = mesh["primitives"][0]
    assert len(prim["targets"]) == frames == run["cache"]["frames"]
    rest = accessor(prim["attributes"]["POSITION"])
    (anim,) = doc["animations"]
    weights_channel = next(c for c in anim["channels"] if c["target"]["path"] == "weights")
    sampler = anim["samplers"][weights_channel["sampler"]]
    times = accessor(sampler["input"])
    assert times[-1] == pytest.approx(run["time"], rel=1e-6)
    weights = accessor(sampler["output"]).reshape(frames, frames)
    # The vertices at each key time: rest + sum_k w_k target_k.
    for f in (0, frames // 2, frames - 1):
        shape = rest + sum(weights[f, k] * accessor(prim["targets"][k]["POSITION"])
                           for k in range(frames))
        np.testing.assert_allclose(shape, cache[f], atol=1e-6)
    # Halfway between two keys, linear interpolation of the weights is that of the vertices.
    half = 0.5 * (weights[1] + weights[2])
    shape = rest + sum(half[k] * accessor(prim["targets"][k]["POSITION"]) for k in range(frames))
    np.testing.assert_allclose(shape, 0.5 * (cache[1] + cache[2]), atol=1e-6)
    # The rigid bodies are nodes animated to their last pose.
    rigid = run["rigid"]["bodies"]
    nodes = [n for n in doc["nodes"] if n.get("mesh", 0) != 0]
    assert len(nodes) == len(rigid)
    for node_index, node in enumerate(doc["nodes"]):
        if node.get("mesh", 0) == 0:
            continue
        body = rigid[node_index - 1]
        for path, key in (("translation", "position"), ("rotation", "orientation")):
            channel = next(c for c in anim["channels"]
                           if c["target"]["node"] == node_index and c["target"]["path"] == path)
            values = accessor(anim["samplers"][channel["sampler"]]["output"])
            expected = np.array(body[key])
            if path == "rotation":  # ours w, x, y, z; glTF x, y, z, w
                expected = np.roll(expected, -1)
                if np.dot(values[-1], expected) < 0:
                    expected = -expected
            np.testing.assert_allclose(values[-1], expected, atol=1e-6)


def test_a_scene_that_tears_keeps_its_collection_and_says_why_no_point_cache(tmp_path):
    folder = tmp_path / "cache"
    done = subprocess.run([CLI, "simulate", "tear", "--steps", "200", "--cache", str(folder),
                           "--cache-every", "20", "--cache-format", "pvd,pc2"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "tore at" in done.stderr and "the .pvd collection is complete" in done.stderr
    entries = pvd_entries(folder, "tear")
    counts = [read_vtu(p).GetNumberOfPoints() for t, _, name, p in entries if name == "particles"]
    assert counts[-1] > counts[0]  # the collection follows the tear
    assert not (folder / "tear.pc2").exists()


def test_bad_cache_options_are_named(tmp_path):
    done = subprocess.run([CLI, "simulate", "cloth", "--steps", "2", "--cache",
                           str(tmp_path / "c"), "--cache-format", "abc"],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "unknown cache format 'abc'" in done.stderr
    done = subprocess.run([CLI, "simulate", "rope", "--steps", "2", "--cache",
                           str(tmp_path / "r"), "--cache-format", "pc2"],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "no deforming surface" in done.stderr


def write_box_obj(path, n=4):
    """A closed unit box of n x n squares per face, as a user's OBJ."""
    index, lines, faces = {}, [], []

    def vertex(c):
        if c not in index:
            index[c] = len(index) + 1
            lines.append("v %g %g %g" % tuple(x / n - 0.5 for x in c))
        return index[c]

    for axis in range(3):
        for side in (0, n):
            for a in range(n):
                for b in range(n):
                    def at(da, db):
                        c = [0, 0, 0]
                        c[axis], c[(axis + 1) % 3], c[(axis + 2) % 3] = side, a + da, b + db
                        return vertex(tuple(c))
                    faces.append("f %d %d %d %d" % (at(0, 0), at(1, 0), at(1, 1), at(0, 1)))
    path.write_text("o box\n" + "\n".join(lines + faces) + "\n")


def test_a_cage_scene_caches_the_mesh_it_carries(tmp_path):
    # The point cache and the glTF file carry the render mesh a cage drives, not the cage.
    write_box_obj(tmp_path / "box.obj")
    project = tmp_path / "caged.json"
    done = subprocess.run([CLI, "prepare", str(tmp_path / "box.obj"), "--cage", "200", "-o",
                           str(project)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    folder, run = simulate(tmp_path, str(project), 20, 10, "pvd,pc2")
    (embedded,) = run["embedded"]
    name = run["scene"]
    cache = read_pc2(folder / f"{name}.pc2")
    assert cache.shape == (3, embedded["vertices"], 3)
    np.testing.assert_allclose(cache[-1], embedded["positions"], atol=1e-6)
    assert "g " + embedded["name"] in (folder / f"{name}.obj").read_text()
    entries = pvd_entries(folder, name)
    last = [p for t, _, block, p in entries if block == "embedded" and t == max(e[0] for e in entries)]
    grid = read_vtu(last[0])
    np.testing.assert_allclose(vtk_to_numpy(grid.GetPoints().GetData()), embedded["positions"],
                               rtol=0, atol=0)
    assert grid.GetNumberOfCells() == embedded["triangles"]
