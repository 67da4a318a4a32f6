"""The Python package against the command line: the same bake folder, the same path answers,
the same random points and info; errors with the command line's exit codes; the GIL released
while a bake runs.

The command line's answers come from the `tessera` binary: $TESSERA_BIN, else
target/release/tessera in the repository (or under $CARGO_TARGET_DIR), else `tessera` on PATH.
"""

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import tessera

REPO = Path(__file__).resolve().parents[3]


def tessera_bin():
    candidates = [os.environ.get("TESSERA_BIN")]
    for target in (os.environ.get("CARGO_TARGET_DIR"), REPO / "target"):
        if target:
            candidates.append(str(Path(target) / "release" / "tessera"))
    candidates.append(shutil.which("tessera"))
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    pytest.skip("no tessera binary: set TESSERA_BIN or `cargo build --release`")


def cli(*args):
    out = subprocess.run([tessera_bin(), *map(str, args)], check=True, capture_output=True)
    return json.loads(out.stdout)


SMALL_OBJ = """v 0 0 0\nv 20 0 0\nv 20 20 0\nv 0 20 0\nf 1 2 3 4
v 5 5 0\nv 7 5 0\nv 7 7 0\nv 5 7 0\nv 5 5 1\nv 7 5 1\nv 7 7 1\nv 5 7 1
f 9 10 11 12\nf 5 6 10\nf 5 10 9
v 12 4 1\nv 16 4 1\nv 16 12 1\nv 12 12 1\nf 13 14 15 16
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo world baked through the package: (folder, summary)."""
    out = tmp_path_factory.mktemp("bake") / "demo"
    summary = tessera.bake(None, out, threads=2, progress=False)
    return out, summary


@pytest.fixture(scope="module")
def mesh(demo):
    return tessera.NavMesh(demo[0] / "navmesh.tsn")


@pytest.fixture
def small_scene(tmp_path):
    scene = tmp_path / "s.obj"
    scene.write_text(SMALL_OBJ)
    return scene


def test_a_bake_writes_the_folder_tessera_bake_writes(demo, mesh):
    out, summary = demo
    for name in ["navmesh.tsn", "summary.json", "config.toml", "preview.png", "report.html"]:
        assert (out / name).is_file(), name
    assert summary == json.loads((out / "summary.json").read_text())
    assert summary["polygons"] == mesh.info()["polygons"] > 100
    assert summary["threads"] == 2


def test_info_is_what_tessera_info_prints(demo, mesh):
    want = cli("info", demo[0] / "navmesh.tsn", "--json")
    assert mesh.info() == want


def test_random_points_are_the_command_lines_random_pairs(demo, mesh):
    pairs = cli("path", demo[0] / "navmesh.tsn", "--random-pairs", 20, "--seed", 3, "--json")
    points = mesh.random_points(40, seed=3)
    assert points.shape == (40, 3) and points.dtype == np.float64
    assert np.array_equal(points[0::2], np.array([p["from"] for p in pairs]))
    assert np.array_equal(points[1::2], np.array([p["to"] for p in pairs]))
    for pair in pairs:
        got = mesh.path(pair["from"], pair["to"])
        assert got["found"] == pair["found"]
        assert got["length"] == pair["length"]


def test_paths_are_what_tessera_path_answers(demo, mesh):
    nav = demo[0] / "navmesh.tsn"
    points = mesh.random_points(12, seed=11)
    pairs = [(points[i], points[i + 1]) for i in range(0, 12, 2)]
    pairs.append(((27.7, 85.5, 4.2), (64.8, 8.9, 2.3)))
    pairs.append(((27.7, 85.5, 4.2), (5000.0, 5000.0, 0.0)))  # an end off the mesh
    for a, b in pairs:
        want = cli("path", nav, "--from", ",".join(map(repr, map(float, a))),
                   "--to", ",".join(map(repr, map(float, b))), "--json")
        got = mesh.path(a, b)
        assert sorted(got) == sorted(want)
        assert got["found"] == want["found"]
        assert got["length"] == want["length"]
        assert got["links"] == want["links"]
        assert got["link_names"] == want["link_names"]
        assert got["waypoints"].shape == (len(want["waypoints"]), 3)
        if want["waypoints"]:
            assert np.array_equal(got["waypoints"], np.array(want["waypoints"]))
    assert not mesh.path(*pairs[-1])["found"]


def test_a_filter_naming_no_link_of_the_mesh_is_refused(mesh):
    a, b = (27.7, 85.5, 4.2), (64.8, 8.9, 2.3)
    # The demo world has no off-mesh links: an empty filter is the plain path, a name is an error.
    plain = mesh.path(a, b)
    same = mesh.path(a, b, cost={}, avoid=[])
    assert same["length"] == plain["length"] and same["link_names"] == plain["link_names"]
    with pytest.raises(ValueError, match="no area or off-mesh link named `rope`.*default"):
        mesh.path(a, b, avoid=["rope"])
    with pytest.raises(ValueError, match="rope"):
        mesh.path(a, b, cost={"rope": 2.0})
    # Its one area, `default`, may be priced (the search over polygons, a path as long or a
    # little longer) or avoided (no way out of the start polygon).
    priced = mesh.path(a, b, cost={"default": 2.0})
    assert priced["found"] and plain["length"] <= priced["length"] <= 1.2 * plain["length"]
    assert not mesh.path(a, b, avoid=["default"])["found"]
    with pytest.raises(ValueError, match="default"):
        mesh.path(a, b, cost={"default": 0.0})


def test_nearest_height_and_raycast(mesh):
    for p in mesh.random_points(10, seed=5):
        near = mesh.nearest(p)
        assert np.allclose(near, p, atol=1e-3)
        assert mesh.height(p) == pytest.approx(p[2], abs=1e-3)
        ray = mesh.raycast(p, p)
        assert ray["t"] == 1.0 and not ray["hit"] and ray["normal"] is None
    assert mesh.nearest((5000.0, 5000.0, 0.0)) is None
    assert mesh.nearest((5000.0, 5000.0, 0.0), extent=(1e5, 1e5, 1e5)) is not None
    assert mesh.height((5000.0, 5000.0, 0.0)) is None
    assert mesh.raycast((5000.0, 5000.0, 0.0), (0.0, 0.0, 0.0)) is None
    # Walking far off the mesh meets a wall, whose normal points out of the mesh.
    start = mesh.random_points(1, seed=2)[0]
    ray = mesh.raycast(start, start + np.array([500.0, 0.0, 0.0]))
    assert ray["hit"] and 0.0 <= ray["t"] < 1.0
    assert np.dot(ray["normal"], [1.0, 0.0, 0.0]) > 0.0
    assert ray["polygons"][0] >= 0


def test_arrays_describe_the_polygons(mesh):
    verts, polys = mesh.vertices(), mesh.polygons()
    info = mesh.info()
    assert verts.shape == (info["vertices"], 3) and verts.dtype == np.float64
    assert polys.shape[0] == info["polygons"] and polys.dtype == np.int64
    assert polys.min() >= -1 and polys.max() < len(verts)
    assert (polys[:, :3] >= 0).all()  # every polygon has three corners at least
    lo, hi = np.array(info["bounds"]["min"]), np.array(info["bounds"]["max"])
    assert (verts >= lo - 1e-3).all() and (verts <= hi + 1e-3).all()
    # Padding only at the end of a row.
    for row in polys[:50]:
        k = (row >= 0).sum()
        assert (row[:k] >= 0).all() and (row[k:] == -1).all()


def test_errors_carry_the_command_lines_exit_codes(tmp_path, small_scene, demo):
    with pytest.raises(tessera.NavMeshError) as e:
        tessera.NavMesh(tmp_path / "missing.tsn")
    assert e.value.exit_code == 3 and "missing.tsn" in str(e.value)
    corrupt = tmp_path / "corrupt.tsn"
    data = bytearray((demo[0] / "navmesh.tsn").read_bytes())
    data[len(data) // 2] ^= 0x5A
    corrupt.write_bytes(bytes(data))
    with pytest.raises(tessera.NavMeshError) as e:
        tessera.NavMesh(corrupt)
    assert e.value.exit_code == 3
    out = tmp_path / "out"
    cases = [
        (dict(scene=tmp_path / "missing.obj"), 3),
        (dict(scene=small_scene, config="no-such-preset"), 4),
        (dict(scene=small_scene, threads=0), 2),
        (dict(scene=small_scene, memory_budget="64KiB"), 5),
    ]
    for kwargs, code in cases:
        scene = kwargs.pop("scene")
        with pytest.raises(tessera.BakeError) as e:
            tessera.bake(scene, out, progress=False, **kwargs)
        assert e.value.exit_code == code, (kwargs, str(e.value))
        assert isinstance(e.value, tessera.TesseraError)


def test_a_progress_callable_sees_the_stages_and_can_stop_the_bake(tmp_path, small_scene):
    out = tmp_path / "out"

    class Stop(Exception):
        pass

    def stop(report):
        if report["event"] == "start" and report["stage"] == "voxelize":
            raise Stop()

    with pytest.raises(Stop):
        tessera.bake(small_scene, out, progress=stop)
    assert not (out / "navmesh.tsn").exists()
    seen = []
    summary = tessera.bake(small_scene, out, progress=seen.append, memory_budget=256 << 20)
    assert (out / "navmesh.tsn").is_file() and summary["polygons"] > 0
    started = [r["stage"] for r in seen if r["event"] == "start"]
    assert {"ingest", "polygons", "preview"} <= set(started)
    assert {"event", "stage", "done", "total", "message", "agent"} == set(seen[0])
    assert all(r["agent"] is None for r in seen)


def test_a_bake_for_several_agents_names_them(tmp_path, small_scene):
    config = tmp_path / "agents.toml"
    config.write_text('[[agents]]\nname = "adult"\n[[agents]]\nname = "child"\nheight = 1.2\n')
    seen = []
    summary = tessera.bake(small_scene, tmp_path / "out", str(config), progress=seen.append)
    assert [a["name"] for a in summary["agents"]] == ["adult", "child"]
    for name in ("adult", "child"):
        assert (tmp_path / "out" / f"navmesh-{name}.tsn").is_file()
    done = {(r["stage"], r["agent"]) for r in seen if r["event"] == "done"}
    assert {("ingest", None), ("polygons", "adult"), ("polygons", "child")} <= done


def test_ctrl_c_stops_a_bake_and_the_same_call_resumes_it(tmp_path, small_scene):
    import _thread
    import signal

    out = tmp_path / "out"

    def interrupt(report):
        if report["event"] == "start" and report["stage"] == "polygons":
            _thread.interrupt_main()  # what Ctrl-C does

    # Python's own Ctrl-C handler, whatever this process inherited: a process started in the
    # background by a shell without job control ignores SIGINT, and then interrupt_main does
    # nothing.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            tessera.bake(small_scene, out, progress=interrupt)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not (out / "navmesh.tsn").exists()
    assert (out / "work").is_dir()  # the checkpoints
    summary = tessera.bake(small_scene, out, progress=False)
    assert "voxelize" in summary["stages_reused"] or summary["resumed_tiles"] > 0


def test_the_gil_is_released_while_a_bake_runs(tmp_path):
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.002)

    t = threading.Thread(target=tick)
    t.start()
    try:
        start = time.monotonic()
        tessera.bake(None, tmp_path / "demo", threads=1, progress=False)
        end = time.monotonic()
    finally:
        done.set()
        t.join()
    during = [x for x in ticks if start < x < end]
    # A thread holding the GIL for the whole bake would allow next to no ticks.
    assert len(during) >= 0.25 * (end - start) / 0.002 * 0.5, (len(during), end - start)


def test_the_readme_example_draws_the_mesh_and_a_path(tmp_path, monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    text = (REPO / "README.md").read_text()
    start = text.index("```python\n", text.index("## Using tessera from Python")) + len("```python\n")
    code = text[start:text.index("```", start)]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / "demo-path.png").stat().st_size > 10_000
