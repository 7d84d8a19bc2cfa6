"""Sweeps on Dask distributed: a LocalCluster of 2 workers, the issue's call as written, the
same rows as the tasks run here, CSV and errors."""

import csv
import os
import subprocess
import sys

import pytest

import pbdlab


def test_grid():
    sets = pbdlab.grid({"iterations": [2, 5], "dt": [0.005, 0.01]})
    assert sets == [{"iterations": 2, "dt": 0.005}, {"iterations": 2, "dt": 0.01},
                    {"iterations": 5, "dt": 0.005}, {"iterations": 5, "dt": 0.01}]
    assert pbdlab.grid([{"iterations": 3}]) == [{"iterations": 3}]
    assert pbdlab.grid({"method": "pbd"}) == [{"method": "pbd"}]
    with pytest.raises(ValueError, match="no values"):
        pbdlab.grid({"iterations": []})


def test_the_issue_sweep_on_a_local_cluster_of_two_workers(tmp_path):
    table = pbdlab.sweep("cloth", {"iterations": [2, 5], "dt": [0.005, 0.01]}, steps=20,
                         workers=2, csv=str(tmp_path / "sweep.csv"),
                         fields=["max:triangle_area_ratio"])
    assert len(table) == 4
    rows = table.to_dict("records") if hasattr(table, "to_dict") else table
    assert [(r["iterations"], r["dt"]) for r in rows] == [(2, 0.005), (2, 0.01), (5, 0.005),
                                                         (5, 0.01)]
    for r in rows:
        assert r["diverged"] == ""
        assert r["max_strain"] > 0 and r["ms_per_step"] > 0 and r["max_triangle_area_ratio"] > 0
    # More sweeps hold the rigid cloth closer to its length.
    by = {(r["iterations"], r["dt"]): r for r in rows}
    assert by[(5, 0.01)]["max_strain"] < by[(2, 0.01)]["max_strain"]
    # The same rows as running each task here (the solver is deterministic).
    here = pbdlab.run_task("cloth", {"iterations": 5, "dt": 0.01}, 20, 1,
                           ("max:triangle_area_ratio",))
    for key in ("max_strain", "min_volume_ratio", "energy", "max_residual",
                "max_triangle_area_ratio"):
        assert here[key] == by[(5, 0.01)][key], key
    with open(tmp_path / "sweep.csv") as f:
        written = list(csv.DictReader(f))
    assert len(written) == 4 and float(written[3]["max_strain"]) == by[(5, 0.01)]["max_strain"]


def test_group_parameters_and_field_statistics_without_dask():
    rows = pbdlab.sweep("tetbar", {"bar strain (tets):stretch_z": [1e5, 1e7]}, steps=30,
                        workers=0, fields=["min:tet_volume_ratio", "max:tet_green_strain[2]"])
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    soft, stiff = rows
    assert soft["max_tet_green_strain_2"] > stiff["max_tet_green_strain_2"] > 0
    assert 0 < soft["min_tet_volume_ratio"] <= 1.01


def test_a_sweep_over_the_bending_models():
    rows = pbdlab.sweep("cloth", {"bending_model": ["bridson", "isometric"]}, steps=20, workers=0)
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    bridson, isometric = rows
    assert (bridson["bending_model"], isometric["bending_model"]) == ("bridson", "isometric")
    assert not bridson["diverged"] and not isometric["diverged"]
    assert bridson["max_residual"] != isometric["max_residual"]  # another model ran
    assert abs(isometric["energy"] / bridson["energy"] - 1) < 1e-3  # the same drop, nearly
    with pytest.raises(ValueError, match="'quadratic' is not a bending model"):
        pbdlab.sweep("cloth", {"bending_model": ["quadratic"]}, steps=1, workers=0)


def test_a_sweep_names_what_is_wrong():
    with pytest.raises(ValueError, match="STAT:FIELD"):
        pbdlab.sweep("cloth", {"iterations": [2]}, steps=1, workers=0, fields=["area"])
    with pytest.raises(KeyError, match="unknown setting"):
        pbdlab.sweep("cloth", {"itterations": [2]}, steps=1, workers=0)
    with pytest.raises(ValueError, match="PBD Lab generates"):
        pbdlab.sweep("nope", {"iterations": [2]}, steps=1, workers=0)


def test_the_example_study_runs(tmp_path, source_dir):
    example = source_dir / "python" / "examples" / "stretch_study.py"
    env = dict(os.environ, PBDLAB_EXAMPLE_QUICK="1")
    r = subprocess.run([sys.executable, str(example), "--out", str(tmp_path)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "cheapest under 3%" in r.stdout
    assert (tmp_path / "stretch_study.csv").exists()


def test_the_issue_script_runs_as_a_file(tmp_path):
    # Run as a script, with the sweep at its top level (no __main__ guard): the LocalCluster's
    # spawned workers must not run the script again.
    script = tmp_path / "issue.py"
    script.write_text(
        "import pbdlab\n"
        "s = pbdlab.generate(\"cloth\")            # any name of `pbdlab-cli scenes`\n"
        "s.step(20, threads=1)\n"
        "p = s.positions                          # (N, 3) float64 numpy array\n"
        "table = pbdlab.sweep(\"cloth\", {\"iterations\": [2, 5], \"dt\": [0.005, 0.01]}, steps=20, workers=2)\n"
        "len(table)                               # 4: one row per parameter set\n"
        "print('rows', len(table), p.shape)\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "rows 4 (2500, 3)" in r.stdout
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
