"""Parameter sweeps on Dask distributed: each parameter set is a task that makes the scene,
applies the parameters, steps it and returns its metrics; the result is one row per set.

    table = pbdlab.sweep("cloth", {"iterations": [2, 5], "dt": [0.005, 0.01]}, steps=20)

A LocalCluster of `workers` processes is started (and stopped) by default; `address` uses a
running scheduler instead (a cluster of any size, "tcp://host:8786"); workers=0 runs the tasks
here, one after the other.
"""

import contextlib
import csv as _csv
import itertools
import logging
import math
import os
import sys
import time

import numpy

from . import _pbdlab

# The metrics every task returns, in the table's order after the parameters.
METRICS = (
    "max_strain",
    "min_volume_ratio",
    "inverted_tets",
    "air_inverted",
    "air_max_inverted",
    "energy",
    "max_residual",
    "ms_per_step",
    "seconds",
    "diverged",
)

_STATISTICS = {
    "min": lambda v: float(numpy.min(v)),
    "max": lambda v: float(numpy.max(v)),
    "mean": lambda v: float(numpy.mean(v)),
    "median": lambda v: float(numpy.median(v)),
    "p90": lambda v: float(numpy.percentile(v, 90)),
    "p95": lambda v: float(numpy.percentile(v, 95)),
    "p99": lambda v: float(numpy.percentile(v, 99)),
}


def grid(parameters):
    """The parameter sets of a sweep, as a list of dicts.

    A dict of lists is the grid of every combination (in the dict's order, the last key
    varying fastest); a list of dicts is taken as it is. A key is a solver setting, as
    Scene.set() takes it (iterations, dt, substeps, method, air_optimization, ...), or
    'GROUP:KEY' to edit a constraint group as Scene.edit_group('GROUP:KEY=VALUE') does
    (for example 'cloth distance:compliance'), or 'bending_model' (Scene.bending_model:
    'bridson', 'pbd-appendix', 'isometric')."""
    if isinstance(parameters, dict):
        keys = list(parameters)
        values = []
        for key in keys:
            v = parameters[key]
            if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
                v = [v]
            v = list(v)
            if not v:
                raise ValueError(f"sweep: parameter '{key}' has no values")
            values.append(v)
        return [dict(zip(keys, combination)) for combination in itertools.product(*values)]
    sets = [dict(p) for p in parameters]
    if not sets:
        raise ValueError("sweep: no parameter sets")
    return sets


def _make_scene(scene):
    if isinstance(scene, _pbdlab.Scene):
        return scene.copy()
    if callable(scene):
        made = scene()
        if not isinstance(made, _pbdlab.Scene):
            raise TypeError("sweep: the scene callable must return a pbdlab.Scene")
        return made
    if isinstance(scene, dict):
        options = dict(scene)
        meshes = options.pop("meshes", None)
        if not meshes:
            raise ValueError("sweep: a scene given as a dict needs 'meshes' (and prepare() options)")
        if isinstance(meshes, str):
            meshes = [meshes]
        return _pbdlab.prepare(list(meshes), **options)
    if isinstance(scene, str):
        if scene.endswith(".json"):
            return _pbdlab.load(scene)
        return _pbdlab.generate(scene)
    raise TypeError(f"sweep: a scene is a name, a .json path, a dict of prepare() options, a "
                    f"pbdlab.Scene or a callable, not {type(scene).__name__}")


def _apply(s, parameters):
    settings = {}
    for key, value in parameters.items():
        if ":" in key:
            group, field = key.split(":", 1)
            if isinstance(value, bool):
                value = "on" if value else "off"
            s.edit_group(f"{group}:{field}={value}")
        elif key == "bending_model":
            s.bending_model = value  # before the first step: the positions are the rest shape
        else:
            settings[key] = value
    if settings:
        s.set(**settings)


def _field_values(fields, name):
    """The values of a field 'NAME' or one column 'NAME[K]' as a flat array."""
    column = None
    if name.endswith("]") and "[" in name:
        name, index = name[:-1].split("[", 1)
        column = int(index)
    if name not in fields:
        known = ", ".join(k for k in fields if k != "inverted_tets")
        raise KeyError(f"sweep: unknown field '{name}' (fields: {known})")
    a = fields[name]
    if getattr(a, "ndim", 0) == 2 and column is not None:
        if not 0 <= column < a.shape[1]:
            raise KeyError(f"sweep: field '{name}' has columns 0 to {a.shape[1] - 1}")
        return a[:, column]
    return numpy.ravel(a)


def _statistic(fields, spec):
    if ":" not in spec:
        raise ValueError(f"sweep: a field statistic is STAT:FIELD (STAT one of "
                         f"{', '.join(_STATISTICS)}), not '{spec}'")
    stat, name = spec.split(":", 1)
    if stat not in _STATISTICS:
        raise ValueError(f"sweep: unknown statistic '{stat}' (one of {', '.join(_STATISTICS)})")
    values = _field_values(fields, name)
    return _STATISTICS[stat](values) if len(values) else math.nan


def _column(spec):
    return spec.replace(":", "_").replace("[", "_").replace("]", "")


def run_task(scene, parameters, steps, threads=1, fields=()):
    """One task of a sweep: makes `scene`, applies `parameters`, steps it `steps` times on
    `threads` threads and returns the parameters with the metrics: max_strain (the largest
    principal stretch of any tet or triangle, minus 1), min_volume_ratio (the smallest det F of
    a tet, or area ratio of a triangle), inverted_tets, air_inverted (after the last step),
    air_max_inverted (after any step), energy (the particles' kinetic and gravitational
    energy, J, the height measured from 0), max_residual (the largest |C| of any constraint),
    ms_per_step, seconds (the task's wall time) and diverged (the message, or ''), and one
    column per field statistic asked for ('max:tet_volume_ratio' -> max_tet_volume_ratio)."""
    started = time.perf_counter()
    row = dict(parameters)
    s = _make_scene(scene)
    _apply(s, parameters)
    diverged = ""
    try:
        s.step(int(steps), threads=threads)
    except RuntimeError as e:
        diverged = str(e)
    f = s.fields()
    stretches = numpy.concatenate([f["tet_principal_stretch"].ravel(),
                                   f["triangle_principal_stretch"].ravel()])
    ratios = numpy.concatenate([f["tet_volume_ratio"], f["triangle_area_ratio"]])
    energy = math.nan
    if not diverged:
        w = s.inverse_masses
        moving = w > 0
        m = 1.0 / w[moving]
        v = s.velocities[moving]
        x = s.positions[moving]
        g = numpy.asarray(s.settings["gravity"], dtype=float)
        energy = float(numpy.sum(m * (0.5 * numpy.einsum("ij,ij->i", v, v) - x @ g)))
    residuals = [r["max_abs_residual"] for r in s.residuals()]
    air = s.air
    row.update({
        "max_strain": float(stretches.max()) - 1 if stretches.size else math.nan,
        "min_volume_ratio": float(ratios.min()) if ratios.size else math.nan,
        "inverted_tets": int(f["inverted_tets"]),
        "air_inverted": int(air["inverted_after"]),
        "air_max_inverted": int(air["max_inverted_after"]),
        "energy": energy,
        "max_residual": max(residuals) if residuals else 0.0,
        "ms_per_step": s.ms_per_step,
        "seconds": time.perf_counter() - started,
        "diverged": diverged,
    })
    for spec in fields:
        row[_column(spec)] = _statistic(f, spec)
    return row


@contextlib.contextmanager
def _main_hidden():
    """Hides the script that runs (its __main__) from the worker processes the LocalCluster
    starts: multiprocessing's spawn would run it again in each of them, and a script that calls
    sweep() at its top level (no `if __name__ == "__main__":`) would start clusters in every
    worker, for ever. The tasks need nothing of it: callables from it travel by value
    (cloudpickle)."""
    main = sys.modules.get("__main__")
    saved = {}
    if main is not None:
        for attr in ("__file__", "__spec__"):
            if attr in main.__dict__:
                saved[attr] = main.__dict__[attr]
        main.__dict__.pop("__file__", None)
        main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        if main is not None:
            main.__dict__.pop("__spec__", None)
            main.__dict__.update(saved)


def _table(rows):
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


def _write_csv(path, rows):
    columns = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", newline="") as out:
        writer = _csv.DictWriter(out, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    os.replace(tmp, path)


def _plot(path, rows, keys, y):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("sweep: plot= needs matplotlib (Debian: python3-matplotlib)") from e
    if y not in rows[0]:
        raise KeyError(f"sweep: nothing to plot as '{y}' (columns: {', '.join(rows[0])})")
    x = keys[0]
    others = keys[1:]
    lines = {}
    for row in rows:
        label = ", ".join(f"{k}={row[k]}" for k in others) or y
        lines.setdefault(label, []).append((row[x], row[y]))
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, points in lines.items():
        points.sort(key=lambda p: p[0])
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def sweep(scene, parameters, steps=100, workers=2, address=None, threads=1, fields=(), csv=None,
          plot=None, y="max_strain", timeout=None):
    """Runs every parameter set of `parameters` (see grid()) on `scene` for `steps` steps, each
    as a Dask task, and returns one row per set: its parameters and metrics (see run_task()),
    in the order of the sets.

    scene: a generated scene's name, a project or asset (.json), a dict of prepare() options
        with 'meshes', a pbdlab.Scene (copied into each task) or a callable making one.
    workers: the LocalCluster's worker processes (one thread each); 0 runs the tasks here.
    address: a running Dask scheduler ("tcp://host:8786") to run on instead of a LocalCluster.
    threads: solver threads per task.
    fields: field statistics to add as columns, 'STAT:FIELD' or 'STAT:FIELD[COLUMN]' with STAT
        min, max, mean, median, p90, p95 or p99 (percentiles) and FIELD one of Scene.fields() (e.g. 'max:tet_volume_ratio').
    csv: also write the table there (always possible; pandas is not needed).
    plot: also draw `y` against the first parameter, one line per value of the others, into
        this image (matplotlib).
    timeout: seconds to wait for the tasks (None: no limit).

    Returns a pandas DataFrame when pandas is installed, else a list of dicts."""
    sets = grid(parameters)
    for spec in fields:
        if ":" not in spec or spec.split(":", 1)[0] not in _STATISTICS:
            raise ValueError(f"sweep: a field statistic is STAT:FIELD with STAT one of "
                             f"{', '.join(_STATISTICS)}, not '{spec}'")
    if address is None and not workers:
        rows = [run_task(scene, p, steps, threads, tuple(fields)) for p in sets]
    else:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as e:
            raise ImportError("sweep: needs Dask distributed (Debian: python3-distributed); "
                              "workers=0 runs the tasks here without it") from e
        with _main_hidden():
            cluster = None
            if address is None:
                cluster = LocalCluster(n_workers=int(workers), threads_per_worker=1,
                                       processes=True, dashboard_address=":0",
                                       silence_logs=logging.ERROR)
                client = Client(cluster)
            else:
                client = Client(address, timeout=timeout or 30)
            try:
                n = len(sets)
                futures = client.map(run_task, [scene] * n, sets, [steps] * n, [threads] * n,
                                     [tuple(fields)] * n, pure=False)
                rows = client.gather(futures) if timeout is None else [
                    f.result(timeout=timeout) for f in futures]
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
    if csv:
        _write_csv(csv, rows)
    if plot:
        _plot(plot, rows, list(sets[0]), y)
    return _table(rows)
