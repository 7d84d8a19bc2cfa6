"""PBD Lab, scripted: position-based simulation assets (PBD, XPBD, Strain Based Dynamics,
Air Meshes, rigid bodies) with the scenes, solver and messages of pbdlab-cli.

    import pbdlab
    s = pbdlab.generate("cloth")            # any name of pbdlab.scenes()
    s.step(20, threads=1)                    # the GIL is released while it steps
    p = s.positions                          # (N, 3) float64, a view of the scene's memory
    table = pbdlab.sweep("cloth", {"iterations": [2, 5], "dt": [0.005, 0.01]}, steps=20)

Scenes come from generate() (a generated scene), load() (a project or cooked asset) or
prepare() (meshes, as pbdlab-cli prepare). sweep() runs parameter sets on Dask distributed.
"""

from ._pbdlab import Scene, __version__, generate, kernels, load, prepare, scenes, set_kernels
from .sweep import grid, run_task, sweep

__all__ = [
    "Scene",
    "__version__",
    "generate",
    "grid",
    "kernels",
    "load",
    "prepare",
    "run_task",
    "scenes",
    "set_kernels",
    "sweep",
]
