"""ParaView reads what PBD Lab wrote (run with ParaView's pvpython, in a root of its own: see
scripts/test-interop): its PVD reader loads the collection, lists the frames' times, and the
last frame's particles block holds the run's positions bit for bit.

    pvpython paraview_check.py CACHE_FOLDER NAME RUN.json
"""

import json
import sys

from paraview import servermanager
from paraview.simple import PVDReader, UpdatePipeline

folder, name, run_path = sys.argv[1], sys.argv[2], sys.argv[3]
run = json.load(open(run_path))
expected = json.load(open(f"{folder}/expected.json"))
failures = []

reader = PVDReader(FileName=f"{folder}/{name}.pvd")
times = list(reader.TimestepValues)
print(f"paraview: {len(times)} time steps, {times[0]} to {times[-1]} s")
if len(times) != len(expected["times"]):
    failures.append(f"{len(times)} time steps, expected {len(expected['times'])}")
elif max(abs(a - b) for a, b in zip(times, expected["times"])) > 1e-12:
    failures.append(f"times {times}, expected {expected['times']}")
if abs(times[-1] - run["time"]) > 1e-12:
    failures.append(f"last time {times[-1]}, the run ended at {run['time']}")

UpdatePipeline(time=times[-1], proxy=reader)
data = servermanager.Fetch(reader)
blocks = {}
iterator = data.NewIterator()
iterator.InitTraversal()
while not iterator.IsDoneWithTraversal():
    block = iterator.GetCurrentDataObject()
    meta = iterator.GetCurrentMetaData()
    label = meta.Get(data.NAME()) if meta and meta.Has(data.NAME()) else str(len(blocks))
    blocks[label] = block
    iterator.GoToNextItem()
print(f"paraview: blocks {sorted(blocks)}")
particles = None
for block in blocks.values():
    if block.GetPointData().GetArray("inverse_mass") is not None:
        particles = block
if particles is None:
    failures.append("no particles block (with inverse_mass) in the last frame")
else:
    points = particles.GetPoints()
    positions = run["positions"]
    if points.GetNumberOfPoints() != len(positions):
        failures.append(f"{points.GetNumberOfPoints()} particles, the run has {len(positions)}")
    else:
        worst = max(abs(points.GetPoint(i)[k] - positions[i][k])
                    for i in range(len(positions)) for k in range(3))
        print(f"paraview: last frame's {len(positions)} particles differ by {worst} m")
        if worst != 0:
            failures.append(f"particles differ by up to {worst} m")
    fields = [particles.GetPointData().GetArrayName(i)
              for i in range(particles.GetPointData().GetNumberOfArrays())]
    print(f"paraview: particle arrays {fields}")

if failures:
    raise SystemExit("paraview check failed:\n  " + "\n  ".join(failures))
print("paraview: all checks passed")
