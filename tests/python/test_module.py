"""The pbdlab module against pbdlab-cli: the same scenes, the same answers bit for bit, the
same messages; numpy views that are views; errors that are Python exceptions."""

import json
import subprocess
import threading
import time

import numpy
import pytest

import pbdlab


def cli_run(cli, tmp_path, *args):
    out = tmp_path / "run.json"
    subprocess.run([cli, "simulate", *args, "--out", str(out)], check=True, capture_output=True)
    return json.loads(out.read_text())


def cli_positions(cli, tmp_path, *args):
    return numpy.array(cli_run(cli, tmp_path, *args)["positions"], dtype=float)


def test_the_issue_script_works_as_written():
    s = pbdlab.generate("cloth")
    s.step(20, threads=1)
    p = s.positions
    assert isinstance(p, numpy.ndarray)
    assert p.shape == (2500, 3) and p.dtype == numpy.float64
    assert s.step_count == 20
    assert s.time == pytest.approx(20 * 0.005)
    # The cloth hangs from two corners: after 0.1 s it has fallen, and not through anything.
    start = pbdlab.generate("cloth").positions
    assert p[:, 1].mean() < start[:, 1].mean() - 0.01
    assert numpy.isfinite(p).all()


@pytest.mark.parametrize("scene,steps", [("drape", 40), ("cloth-on-rigid", 30), ("layered-cloth", 20)])
def test_the_threads_change_only_the_speed(scene, steps):
    # Since session 54 the sweeps go in the plain colour order whatever the threads.
    runs = []
    for threads in (1, 2, 3):
        s = pbdlab.generate(scene)
        s.step(steps, threads=threads)
        runs.append(s.positions)
    assert not numpy.array_equal(runs[0], pbdlab.generate(scene).positions)
    assert numpy.array_equal(runs[0], runs[1])
    assert numpy.array_equal(runs[0], runs[2])


@pytest.mark.parametrize("scene,steps,threads", [
    ("cloth", 20, 1),
    ("cloth", 20, 2),
    ("tetbar", 10, 2),
    ("stack", 30, 1),
    ("air-boxes", 10, 1),
])
def test_stepping_from_python_is_bit_for_bit_the_cli(cli, tmp_path, scene, steps, threads):
    s = pbdlab.generate(scene)
    s.step(steps, threads=threads)
    run = cli_run(cli, tmp_path, scene, "--steps", str(steps), "--threads", str(threads))
    ours = s.positions
    theirs = numpy.array(run["positions"], dtype=float).reshape(-1, 3)
    assert ours.shape == theirs.shape
    assert numpy.array_equal(ours, theirs), numpy.abs(ours - theirs).max()
    if "rigid" in run:
        bodies = run["rigid"]["bodies"]
        assert len(bodies) > 0
        r = s.rigid_bodies
        assert numpy.array_equal(r["positions"], [b["position"] for b in bodies])
        assert numpy.array_equal(r["orientations"], [b["orientation"] for b in bodies])


def test_kernels_are_chosen_as_the_clis(cli, tmp_path):
    runs = pbdlab.kernels()
    assert runs and runs[0] in ("native", "avx512", "avx2", "sse2")
    assert pbdlab.set_kernels() == runs[0]
    with pytest.raises(ValueError, match="no 'neon' kernels"):
        pbdlab.set_kernels("neon")
    for name in runs:  # the same bits as the CLI with the same kernels
        assert pbdlab.set_kernels(name) == name
        s = pbdlab.generate("cloth")
        s.step(10)
        run = cli_run(cli, tmp_path, "cloth", "--steps", "10", "--kernels", name)
        theirs = numpy.array(run["positions"], dtype=float).reshape(-1, 3)
        assert numpy.array_equal(s.positions, theirs)
    pbdlab.set_kernels("auto")


def test_steps_split_across_calls_and_settings_match_the_cli(cli, tmp_path):
    s = pbdlab.generate("cloth")
    s.set(iterations=3, dt=0.01)
    for _ in range(4):
        s.step(3, threads=1)
    theirs = cli_positions(cli, tmp_path, "cloth", "--steps", "12", "--threads", "1",
                           "--iterations", "3", "--dt", "0.01")
    assert numpy.array_equal(s.positions, theirs)
    assert s.settings["iterations"] == 3 and s.settings["dt"] == 0.01


def test_continuous_collision_is_the_clis_on_any_threads(cli, tmp_path):
    # The drape with continuous collision: the same bits from Python on one and two threads as
    # from pbdlab-cli, and the setting reported.
    runs = []
    for threads in (1, 2):
        s = pbdlab.generate("drape")
        s.set(continuous_collision=True)
        assert s.settings["continuous_collision"] is True
        s.step(60, threads=threads)
        runs.append(s.positions)
    assert numpy.array_equal(runs[0], runs[1])
    theirs = cli_positions(cli, tmp_path, "drape", "--steps", "60", "--threads", "1",
                           "--continuous-collision", "on")
    assert numpy.array_equal(runs[0], theirs)
    plain = pbdlab.generate("drape")
    plain.step(60, threads=1)
    assert not numpy.array_equal(runs[0], plain.positions)  # it held something
    with pytest.raises((RuntimeError, TypeError, ValueError)):
        pbdlab.generate("drape").set(continuous_collision="yes please")


def test_group_edits_and_colliders_are_the_clis(cli, tmp_path):
    s = pbdlab.generate("cloth")
    s.edit_group("cloth stretch:compliance=1e-4")
    s.add_collider("sphere:position=0 1.5 0,radius=0.3")
    s.step(30, threads=1)
    theirs = cli_positions(cli, tmp_path, "cloth", "--steps", "30", "--threads", "1",
                           "--group", "cloth stretch:compliance=1e-4",
                           "--collider", "sphere:position=0 1.5 0,radius=0.3")
    assert numpy.array_equal(s.positions, theirs)
    assert s.groups[0]["material"]["compliance"] == 1e-4
    assert s.colliders[-1]["shape"] == "sphere"


def test_the_bending_model_is_the_clis(cli, tmp_path):
    s = pbdlab.generate("cloth")
    assert s.bending_model == "bridson"
    s.bending_model = "isometric"
    assert s.bending_model == "isometric"
    s.step(30, threads=1)
    theirs = cli_positions(cli, tmp_path, "cloth", "--steps", "30", "--threads", "1",
                           "--bending-model", "isometric")
    assert numpy.array_equal(s.positions, theirs)
    bridson = pbdlab.generate("cloth")
    bridson.step(30, threads=1)
    assert not numpy.array_equal(bridson.positions, s.positions)
    with pytest.raises(ValueError, match="'quadratic' is not a bending model"):
        s.bending_model = "quadratic"
    with pytest.raises(ValueError, match="no bending"):
        pbdlab.generate("rope").bending_model = "isometric"


def test_positions_are_a_view_that_writes_through():
    s = pbdlab.generate("cloth")
    p = s.positions
    assert not p.flags["OWNDATA"]
    p[5] = (0.25, 3.0, 0.5)
    assert tuple(s.positions[5]) == (0.25, 3.0, 0.5)
    s.step(1, threads=1)
    assert p[5][1] < 3.0  # the same memory, moved by the solver
    assert numpy.array_equal(p, s.positions)
    del s  # the view keeps the scene alive
    assert numpy.isfinite(p).all()


def test_a_tearing_scene_hands_out_copies():
    s = pbdlab.generate("tear")
    assert s.settings is not None
    p = s.positions
    assert p.flags["OWNDATA"]


def test_setting_positions_checks_the_shape_and_numbers():
    s = pbdlab.generate("rope")
    with pytest.raises(ValueError, match=r"\(30, 3\)"):
        s.positions = numpy.zeros((3, 3))
    bad = s.positions.copy()
    bad[4, 1] = numpy.nan
    with pytest.raises(ValueError, match="row 4 is not finite"):
        s.positions = bad


def test_errors_are_python_exceptions_with_the_clis_messages(cli, tmp_path):
    with pytest.raises(ValueError) as e:
        pbdlab.generate("no-such-scene")
    r = subprocess.run([cli, "simulate", "no-such-scene"], capture_output=True, text=True)
    assert str(e.value) in r.stderr
    assert "PBD Lab generates" in str(e.value)
    s = pbdlab.generate("cloth")
    with pytest.raises(ValueError) as e:
        s.edit_group("nope:compliance=1")
    r = subprocess.run([cli, "simulate", "cloth", "--group", "nope:compliance=1"],
                       capture_output=True, text=True)
    assert str(e.value) in r.stderr
    with pytest.raises(KeyError, match="unknown setting 'itterations'"):
        s.set(itterations=3)
    with pytest.raises(ValueError, match="positive time step"):
        s.set(iterations=3, dt=-1)
    assert s.settings["iterations"] == 5  # nothing set
    with pytest.raises(ValueError):
        pbdlab.load(str(tmp_path / "missing.json"))
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "pbdlab-project", "version": 1, "particles": ')
    with pytest.raises(ValueError, match="broken.json"):
        pbdlab.load(str(broken))


def test_a_diverging_scene_raises(tmp_path):
    s = pbdlab.generate("rope")
    v = s.velocities
    v[3] = (numpy.inf, 0, 0)
    with pytest.raises(RuntimeError, match="diverged"):
        s.step(2)


def test_prepare_load_and_export_round_trip(tmp_path, source_dir):
    cube = source_dir / "tests" / "data" / "cube.obj"
    if not cube.exists():
        cube = tmp_path / "cube.obj"
        corners = [(x, y, z) for x in (0, 1) for y in (0, 1) for z in (0, 1)]
        faces = [(1, 3, 4, 2), (5, 6, 8, 7), (1, 2, 6, 5), (3, 7, 8, 4), (1, 5, 7, 3), (2, 4, 8, 6)]
        cube.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in corners) +
                        "".join(f"f {a} {b} {c}\nf {a} {c} {d}\n" for a, b, c, d in faces))
    s = pbdlab.prepare([str(cube)], tet=True, constraints=True)
    assert s.bodies[0]["kind"] == "tet body"
    assert s.bodies[0]["tets"].shape[1] == 4 and len(s.bodies[0]["tets"]) > 0
    project = tmp_path / "cube.json"
    s.save(str(project))
    again = pbdlab.load(str(project))
    assert numpy.array_equal(again.positions, s.positions)
    s.export(str(tmp_path / "cube.vtu"))
    assert (tmp_path / "cube.vtu").read_text().startswith("<?xml")
    with pytest.raises(ValueError, match="name a format"):
        s.export(str(tmp_path / "cube.xyz"))
    with pytest.raises(RuntimeError, match="prepare failed"):
        pbdlab.prepare([str(tmp_path / "missing.obj")], tet=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'tets'"):
        pbdlab.prepare([str(cube)], tets=True)


def test_fields_and_air_statistics():
    s = pbdlab.generate("air-boxes")
    s.step(20, threads=1)
    f = s.fields()
    assert f["tet_volume_ratio"].shape == (len(f["tet_green_strain"]),)
    assert 0.9 < f["tet_volume_ratio"].min() <= f["tet_volume_ratio"].max() < 1.1
    assert f["inverted_tets"] == 0
    assert s.air["tets"] > 2000 and s.air["inverted_after"] == 0
    assert s.air["inverted_fixed"] == 0  # no skin here: every air tet has a corner that moves
    assert s.air["optimisation_passes"] == 20
    # The last step's air: its whole share holds its projections; its pass left some of its
    # candidates for later (air-boxes at rest: unchanged since a pass could not improve them).
    assert s.air["ms"] > 0 and s.air["ms"] >= s.air["projection_ms"]
    assert 0 < s.air["optimisation_deferred"] < s.air["optimisation_candidates"]
    residuals = s.residuals()
    assert {r["type"] for r in residuals} >= {"strain_tet", "volume"}
    # The air off (its iterations 0): counted, never projected, as the CLI's --air-iterations.
    s.set(air_iterations=0)
    assert s.air["iterations"] == 0
    s.step(5, threads=1)
    assert s.air["projections"] == 0
    with pytest.raises(ValueError, match="air_iterations"):
        s.set(air_iterations=-2)


def test_rigid_poses():
    s = pbdlab.generate("stack")
    s.step(10, threads=1)
    r = s.rigid_bodies
    assert r["positions"].shape == (len(r["names"]), 3)
    assert numpy.allclose(numpy.linalg.norm(r["orientations"], axis=1), 1)


def test_pins_hold_particles():
    s = pbdlab.generate("rope")
    s.set(gravity=(0, -9.81, 0))
    end = s.particle_count - 1
    held = s.positions[end].copy()
    assert s.pin([end]) == 1
    s.step(30)
    assert numpy.allclose(s.positions[end], held)
    with pytest.raises(IndexError, match="out of range"):
        s.pin([10_000])


def test_the_gil_is_released_while_stepping():
    s = pbdlab.generate("tetbar")
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    started = time.perf_counter()
    s.step(40, threads=1)
    took = time.perf_counter() - started
    stop.set()
    t.join()
    during = [x for x in ticks if started < x < started + took]
    # Another Python thread ran all along the steps (held, the GIL would allow none).
    assert took > 0.05
    assert len(during) > 0.3 * took / 0.0015


def test_docstrings_everywhere():
    for name in ("generate", "load", "prepare", "scenes", "sweep", "grid", "run_task"):
        assert getattr(pbdlab, name).__doc__, name
    for name in dir(pbdlab.Scene):
        if not name.startswith("_"):
            assert getattr(pbdlab.Scene, name).__doc__, name


def test_scenes_are_the_clis(cli):
    listed = subprocess.run([cli, "scenes"], capture_output=True, text=True, check=True).stdout
    ours = [name for name, _ in pbdlab.scenes()]
    assert ours == [line.split("\t")[0] for line in listed.splitlines()]


def test_a_state_that_would_not_load_is_not_saved(tmp_path):
    s = pbdlab.generate("air-boxes")
    x = s.positions
    tet = s.air_mesh["tets"][0]
    x[tet[0]], x[tet[1]] = x[tet[1]].copy(), x[tet[0]].copy()  # turn one air tet inside out
    path = tmp_path / "inverted.json"
    with pytest.raises(ValueError, match="would not load again: air tetrahedron 0"):
        s.save(str(path))
    assert not path.exists()


def test_a_run_going_on_with_an_inverted_element_steps_on_after_an_edit_and_in_a_copy(tmp_path):
    # Mid-run an element may be inverted for now (the full dancer's air has some every step).
    # The original steps on; a copy of it, and the scene after an edit (which builds its
    # solver again), must too: they used to be refused as "non-positive volume". Before the
    # first step the same state is still refused.
    s = pbdlab.generate("air-boxes")
    s.step(5)
    x = s.positions
    tet = s.air_mesh["tets"][0]
    x[tet[0]], x[tet[1]] = x[tet[1]].copy(), x[tet[0]].copy()  # turn one air tet inside out
    c = s.copy()
    s.step(3)
    c.step(3)
    assert numpy.array_equal(s.positions, c.positions)
    # Its corners are the container's, pinned: it stays inverted, whatever the steps do.
    with pytest.raises(ValueError, match="would not load again: air tetrahedron 0"):
        s.save(str(tmp_path / "inverted.json"))
    s.edit_group("box-1 volume:modulus=2e8")
    s.step(2)
    assert s.step_count == 10 and numpy.isfinite(s.positions).all()
    fresh = pbdlab.generate("air-boxes")
    x = fresh.positions
    tet = fresh.air_mesh["tets"][0]
    x[tet[0]], x[tet[1]] = x[tet[1]].copy(), x[tet[0]].copy()
    with pytest.raises(ValueError, match="air tetrahedron 0 has non-positive volume"):
        fresh.step(1)


@pytest.mark.parametrize("scene", ["cloth", "tetbar", "air-boxes", "stack", "cloth-on-rigid"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_copy_goes_on_as_the_original_would(scene, threads):
    # A copy taken mid-run carries the scene and what the solver keeps between steps (the time,
    # the rigid bodies' warm-start contacts): stepped by a solver of its own it lands bit for bit
    # where the uninterrupted run does. (Without the rigid warm start, `stack` and
    # `cloth-on-rigid` went elsewhere.)
    whole = pbdlab.generate(scene)
    whole.step(40, threads=threads)
    first = pbdlab.generate(scene)
    first.step(20, threads=threads)
    rest = first.copy()
    rest.step(20, threads=threads)
    assert numpy.array_equal(whole.positions, rest.positions)
    assert numpy.array_equal(whole.velocities, rest.velocities)
    w, r = whole.rigid_bodies, rest.rigid_bodies
    assert numpy.array_equal(w["positions"], r["positions"])
    assert numpy.array_equal(w["orientations"], r["orientations"])
    assert rest.step_count == 40 and rest.time == pytest.approx(whole.time)


def test_write_cache_writes_what_the_cli_writes(cli, tmp_path):
    # The same run cached from Python and from pbdlab-cli: the same files, byte for byte.
    s = pbdlab.generate("air-boxes")
    summary = s.write_cache(str(tmp_path / "py"), 12, every=4, formats="pvd,pc2")
    assert summary["frames"] == 4
    subprocess.run([cli, "simulate", "air-boxes", "--steps", "12", "--cache",
                    str(tmp_path / "cli"), "--cache-every", "4", "--cache-format", "pvd,pc2"],
                   check=True, capture_output=True)
    written = sorted(p.relative_to(tmp_path / "py") for p in (tmp_path / "py").rglob("*.*"))
    assert written == sorted(p.relative_to(tmp_path / "cli")
                             for p in (tmp_path / "cli").rglob("*.*"))
    assert len(written) > 4 * 4
    for p in written:
        assert (tmp_path / "py" / p).read_bytes() == (tmp_path / "cli" / p).read_bytes(), p
    with pytest.raises(ValueError, match="unknown cache format 'usd'"):
        s.write_cache(str(tmp_path / "x"), 1, formats="usd")


def test_intersections_are_the_clis(cli, tmp_path):
    # The same state, the same crossing pairs as pbdlab-cli simulate's count.
    s = pbdlab.generate("drape")
    s.step(200, threads=1)
    ours = s.intersections()
    run = cli_run(cli, tmp_path, "drape", "--steps", "200", "--threads", "1")
    assert len(ours) == run["intersections"]["last"]
    assert ours[:20] == run["intersections"]["pairs"]
    # No character, no skin to fold: none of the cloth's own crossings is at a skin's fold.
    assert ours and not any(p["at_skin_fold"] for p in ours)
    assert run["intersections"]["at_skin_folds"] == 0
    assert pbdlab.generate("cloth").intersections() == []


def test_the_dancer_in_her_skirt_is_a_generated_scene(cli, tmp_path):
    # dancer-small from Python: the character, the skin body the air holds on to, the air, and
    # the same first steps as the CLI's, bit for bit, without crossing triangles.
    s = pbdlab.generate("dancer-small")
    assert s.characters[0]["name"] == "BCN_Epileptic"
    assert s.air["tets"] > 5000 and s.air["optimisation_interval"] == 1
    s.step(10, threads=2)
    theirs = cli_positions(cli, tmp_path, "dancer-small", "--steps", "10", "--threads", "2")
    assert numpy.array_equal(s.positions, theirs)
    assert s.intersections() == []
    assert s.air["inverted_after"] == 0


def test_a_character_moves_the_cloth_as_the_clis_does(cli, tmp_path):
    # Added from Python, the dancer drives the same run as pbdlab-cli's --character, bit for bit;
    # problems come back as ValueError with the CLI's message.
    dancer = "/usr/share/assimp/models/X/BCN_Epileptic.X,position=0 1.0244 0,speed=0.5"
    s = pbdlab.generate("cloth")
    assert s.add_character(dancer) == 0
    s.step(30, threads=1)
    theirs = cli_positions(cli, tmp_path, "cloth", "--steps", "30", "--threads", "1",
                           "--character", dancer)
    assert numpy.array_equal(s.positions, theirs)
    c = s.characters[0]
    assert c["name"] == "BCN_Epileptic" and c["clip"] == "Epileptisch"
    assert c["clip_time"] == pytest.approx(0.5 * s.time)
    with pytest.raises(ValueError, match="'Epileptisch'"):
        s.add_character(dancer + ",clip=waltz")
    # The skin as posed now: the character's triangles, moving as the clip plays.
    skin = s.collider_surface(c["collider"])
    assert skin["name"] == "BCN_Epileptic"
    assert skin["triangles"].shape == (c["triangles"], 3)
    assert skin["vertices"].shape[1] == 3
    assert skin["triangles"].max() < len(skin["vertices"])
    s.step(1, threads=1)
    later = s.collider_surface(c["collider"])["vertices"]
    assert later.shape == skin["vertices"].shape
    assert numpy.abs(later - skin["vertices"]).max() > 1e-4  # a copy, and the dance goes on
    with pytest.raises(IndexError, match="no collider 5"):
        s.collider_surface(5)
    drape = pbdlab.generate("drape")
    with pytest.raises(ValueError, match="is a sphere, not a mesh"):
        drape.collider_surface(1)
    # A clip stopped at a time holds that pose, and says so.
    held = pbdlab.generate("cloth")
    held.add_character(dancer + ",end=0.05,wrap=clamp")
    held.step(30, threads=1)
    assert held.characters[0]["end"] == 0.05
    assert held.characters[0]["clip_time"] == pytest.approx(0.05)
    with pytest.raises(ValueError, match="end cannot be"):
        held.add_character(dancer + ",end=soon")
    # The skin subdivided once (Loop): four triangles for each of the file's, its vertices
    # moved off the file's mesh (inside it where it is convex), and the CLI's run to the bit.
    smooth = pbdlab.generate("cloth")
    smooth.add_character(dancer + ",subdivide=1")
    sc = smooth.characters[0]
    assert sc["subdivisions"] == 1 and sc["triangles"] == 4 * c["triangles"]
    assert smooth.collider_surface(sc["collider"])["triangles"].shape == (4 * c["triangles"], 3)
    smooth.step(10, threads=1)
    theirs = cli_positions(cli, tmp_path, "cloth", "--steps", "10", "--threads", "1",
                           "--character", dancer + ",subdivide=1")
    assert numpy.array_equal(smooth.positions, theirs)
    with pytest.raises(ValueError, match="0 to 3"):
        held.add_character(dancer + ",subdivide=5")
    # Pins on the skin (the cloth's corner, particle 0, is pinned already).
    assert s.pin_to_character([1, 2]) == 2
    with pytest.raises(ValueError, match="attached already"):
        s.pin_to_character([0])
    p = numpy.array(s.positions[1])
    s.step(1, threads=1)
    assert not numpy.array_equal(s.positions[1], p)  # carried by the dancing skin


def test_a_skirt_is_fitted_as_the_clis_does(cli, tmp_path):
    # A skirt of two layers fitted to the dancer from Python runs as pbdlab-cli's --skirt, bit
    # for bit; a bad key or no character comes back as ValueError with the CLI's message.
    dancer = "/usr/share/assimp/models/X/BCN_Epileptic.X,position=0 1.0244 0,start=0.3"
    skirt = "layers=2,waist=1.0,length=0.35,segments=48,rows=12,gap=0.01"
    s = pbdlab.generate("rope")
    with pytest.raises(ValueError, match="there is no character 0"):
        s.add_skirt(skirt)
    s.add_character(dancer)
    particles = len(s.positions)
    first = s.add_skirt(skirt)
    assert first == 1  # after the rope
    assert len(s.positions) == particles + 2 * 48 * 12  # two layers of 48 x 12 vertices
    with pytest.raises(ValueError, match="unknown skirt key 'hem'"):
        s.add_skirt("hem=2")
    s.step(10, threads=1)
    theirs = cli_positions(cli, tmp_path, "rope", "--steps", "10", "--threads", "1",
                           "--character", dancer, "--skirt", skirt)
    assert numpy.array_equal(s.positions, theirs)


def test_a_cloth_collapsed_into_itself_raises():
    # The cloth crumpled into 50 layers folded both ways within a 4 cm square and 5 mm of
    # height, with a 1 cm thickness: every vertex is in reach of hundreds of triangles, and the
    # run stops at the first step, as pbdlab-cli simulate does.
    s = pbdlab.generate("cloth")
    s.set(self_collision=True, cloth_thickness=0.01)
    k, i = numpy.divmod(numpy.arange(len(s.positions)), 50)
    p = s.positions
    p[:, 0] = 0.04 * numpy.modf(i * 0.382)[0]
    p[:, 1] = 1e-4 * k + 1e-5 * i
    p[:, 2] = 0.04 * numpy.modf(k * 0.618034)[0]
    with pytest.raises(RuntimeError, match="ran away in step 1: .*collapsed into itself"):
        s.step(5)
    assert s.step_count == 1  # the step that ran away is kept, no more
