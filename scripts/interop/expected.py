"""What the other tools must find in a cache `pbdlab-cli simulate --cache` wrote, read with
VTK's own readers (Debian python3-vtk9): per cached frame its time and the surface's vertices
(the "surfaces" block: the .obj's vertices, in its order, for a scene without cages), and the
rigid bodies' last poses from the run's JSON. Writes FOLDER/expected.json.

    /usr/bin/python3 expected.py CACHE_FOLDER NAME RUN.json
"""

import json
import pathlib
import sys
import xml.etree.ElementTree as ET

import vtk
from vtk.util.numpy_support import vtk_to_numpy

folder, name, run_path = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
run = json.loads(run_path.read_text())
frames, times = [], []
for d in ET.parse(folder / f"{name}.pvd").getroot().iter("DataSet"):
    if d.get("name") != "surfaces":
        continue
    reader = vtk.vtkXMLUnstructuredGridReader()
    reader.SetFileName(str(folder / d.get("file")))
    reader.Update()
    frames.append(vtk_to_numpy(reader.GetOutput().GetPoints().GetData()).tolist())
    times.append(float(d.get("timestep")))
rigid = [{"name": b["name"], "position": b["position"], "orientation": b["orientation"]}
         for b in run.get("rigid", {}).get("bodies", [])]
(folder / "expected.json").write_text(json.dumps({"times": times, "frames": frames,
                                                  "rigid": rigid, "time": run["time"]}))
print(f"expected.json: {len(frames)} frames of {len(frames[0])} vertices, "
      f"{len(rigid)} rigid bodies")
