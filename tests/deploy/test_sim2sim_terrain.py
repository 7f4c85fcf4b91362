"""Sim-to-sim on the rough task's terrain: the bundle carries the height scan and the terrain; MuJoCo's heightfield,
regenerated from the bundle alone, has our terrain's heights; MuJoCo's ray-cast scan equals our differentiable scan;
sim2sim.py's terrain run reports per type and level; bad terrain requests are one-line errors."""

import copy
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
import warp as wp
import yaml
from helpers.env_measurements import env_measurements
from helpers.training import TINY_SHAC

import isaaclab_diffsim.tasks  # noqa: F401  (registers the tasks)
from isaaclab_diffsim.deploy import Controller, export_bundle, open_bundle
from isaaclab_diffsim.deploy.io_spec import BundleMismatchError
from isaaclab_diffsim.deploy.sim2sim import build_mujoco_anymal
from isaaclab_diffsim.deploy.sim2sim.bundle_terrain import bundle_terrain, terrain_generator_cfg
from isaaclab_diffsim.deploy.sim2sim.mujoco_ground import GROUND_GROUP, MujocoGround
from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.agents.shac_cfg import (
    AnymalCFlatTrotShacRunnerCfg,
)
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.flat_env_cfg import AnymalCFlatTrotDiffEnvCfg
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.rough_env_cfg import AnymalCRoughDiffEnvCfg
from isaaclab_diffsim.terrains import generate_terrain, scan_points
from isaaclab_diffsim.terrains.grid_groups import column_sub_terrains

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "deploy" / "sim2sim.py"
TASK = "DiffSim-Velocity-Rough-AnymalC-Direct"
SMALL_TERRAIN = {"num_rows": 3, "num_cols": 6, "border_width": 2.0}
"""A CPU-test-sized terrain: 3 levels x 6 columns, 2 m border."""


def random_bundle(env, out) -> None:
    """Export a random-weight SHAC policy of ``env`` to ``out``."""
    torch.manual_seed(0)
    agent = AnymalCFlatTrotShacRunnerCfg()
    agent.policy.actor_hidden_dims, agent.policy.critic_hidden_dims = [32, 32], [16]
    runner = ShacRunner(env, agent, log_dir=None, device="cpu")
    export_bundle(env, runner.get_inference_policy("cpu"), str(out), env.cfg.to_dict(), "shac")


@pytest.fixture(scope="module")
def rough(tmp_path_factory):
    """(env, bundle folder, io.yaml) of the rough task on the small terrain (our builder, one env, no noise) and a
    random-weight bundle of it."""
    cfg = AnymalCRoughDiffEnvCfg(num_envs=1, asset_source="urdf", seed=3)
    cfg.terrain.curriculum = True  # the layout sim2sim evaluates in (the task trains without it)
    for key, value in SMALL_TERRAIN.items():
        setattr(cfg.terrain.generator, key, value)
    cfg.observations.enable_corruption = False
    env = gym.make(TASK, cfg=cfg).unwrapped
    out = tmp_path_factory.mktemp("rough_bundle")
    random_bundle(env, out)
    io = yaml.safe_load((out / "io.yaml").read_text())
    yield env, out, io
    env.close()


@pytest.fixture(scope="module")
def terrain(rough):
    return bundle_terrain(rough[2])


@pytest.fixture(scope="module")
def mujoco_ground(rough, terrain):
    """(model, data, MujocoGround) of the bundle's terrain in MuJoCo."""
    import mujoco

    robot = build_mujoco_anymal(rough[2]["articulations"]["robot"]["joint_names"], 0.9, terrain=terrain)
    d = mujoco.MjData(robot.model)
    mujoco.mj_forward(robot.model, d)
    return robot.model, d, MujocoGround(robot.model, robot.ground_top)


@wp.kernel
def _ray_height(mesh: wp.uint64, xy: wp.array(dtype=wp.vec2), out: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.mesh_query_ray(mesh, wp.vec3(xy[i][0], xy[i][1], 50.0), wp.vec3(0.0, 0.0, -1.0), 100.0)
    out[i] = 50.0 - q.t


def mesh_heights(env, xy: np.ndarray) -> np.ndarray:
    """Heights of the env's terrain mesh (the collider) below ``xy``, by Warp ray casts."""
    t = env.terrain
    mesh = wp.Mesh(
        points=wp.array(t.vertices.astype(np.float32), dtype=wp.vec3),
        indices=wp.array(t.triangles.astype(np.int32).ravel(), dtype=int),
    )
    out = wp.zeros(len(xy), dtype=float)
    wp.launch(_ray_height, dim=len(xy), inputs=[mesh.id, wp.array(xy.astype(np.float32), dtype=wp.vec2)], outputs=[out])
    return out.numpy().astype(np.float64)


def cell_range(env, xy: np.ndarray, reach: int = 0) -> np.ndarray:
    """Spread (max - min) of our heightfield's samples at the corners of the cell holding each point (``reach``
    1: and of the cells around it): how far two interpolations of the raster (bilinear, MuJoCo's two triangles) can
    part there (the mesh, with vertices between the samples, within the cells around)."""
    hm = env.heightmap
    h = hm.heights.double().numpy()
    j = np.clip(np.floor((xy[:, 0] - hm.x0) / hm.cell).astype(int), 0, hm.nx - 2)
    i = np.clip(np.floor((xy[:, 1] - hm.y0) / hm.cell).astype(int), 0, hm.ny - 2)
    steps = range(-reach, 2 + reach)
    corners = np.stack([h[np.clip(i + a, 0, hm.ny - 1), np.clip(j + b, 0, hm.nx - 1)] for a in steps for b in steps])
    return corners.max(0) - corners.min(0)


def test_bundle_carries_the_scan_and_the_terrain(rough, terrain):
    env, _, io = rough
    scan = io["height_scan"]
    assert np.allclose(scan["pattern_xy"], env.scan_pattern.numpy(), atol=1e-6) and len(scan["pattern_xy"]) == 187
    assert (scan["offset"], scan["clip"], scan["size"], scan["resolution"]) == (0.5, 1.0, [1.6, 1.0], 0.1)
    term = [t for t in io["observations"]["policy"] if t["name"] == "height_scan"]
    assert term and term[0]["shape"] == [187] and term[0]["scale"] == 1.0
    assert io["terrain"]["generator"]["seed"] == 3 and io["terrain"]["generator"]["curriculum"] is True
    # regenerated from io.yaml alone: the env's sub-terrain origins and its heightfield, exactly
    assert np.array_equal(terrain.origins, env.terrain.origins)
    assert np.array_equal(terrain.heights, env.heightmap.heights.double().numpy())
    assert (terrain.x0, terrain.y0, terrain.cell) == (env.heightmap.x0, env.heightmap.y0, env.heightmap.cell)


def test_a_bundle_trained_without_curriculum_is_evaluated_in_the_curriculum_layout(rough):
    env, _, io = rough
    io = copy.deepcopy(io)
    gen = terrain_generator_cfg(io)
    random_tiles = generate_terrain(gen, 3, False)  # the terrain a run with env.terrain.curriculum=false trains on
    assert not np.allclose(random_tiles.origins, env.terrain.origins)
    io["terrain"]["generator"]["curriculum"] = False
    io["terrain"]["origins"] = random_tiles.origins.tolist()
    io["terrain"]["num_triangles"] = len(random_tiles.triangles)
    terrain = bundle_terrain(io)
    assert np.array_equal(terrain.origins, env.terrain.origins)  # the layout the reports group by
    assert np.array_equal(terrain.heights, env.heightmap.heights.double().numpy())
    io["terrain"]["origins"][0][0][0] += 0.5  # the trained terrain is still checked against the exported one
    with pytest.raises(BundleMismatchError, match="origins off by 0.5 m"):
        bundle_terrain(io)


def test_bundle_terrain_at_other_proportions(rough, terrain):
    """``--terrain_proportions``: the generator at those proportions, the bundle's other values and its io.yaml kept;
    a type at 0 gets no column; bad proportions are one-line ValueErrors."""
    _, _, io = rough
    names = list(terrain_generator_cfg(io).sub_terrains)
    before = copy.deepcopy(io)
    mixed = bundle_terrain(io, proportions={"random_rough": 0.0, "boxes": 0.6})
    assert io == before
    want = terrain_generator_cfg(io)
    want.sub_terrains["random_rough"].proportion, want.sub_terrains["boxes"].proportion = 0.0, 0.6
    assert np.array_equal(mixed.origins, generate_terrain(want, want.seed, True).origins)
    assert [t.proportion for t in mixed.generator.sub_terrains.values()] == [0.2, 0.2, 0.6, 0.0, 0.1, 0.1]
    columns = column_sub_terrains(mixed.generator)
    assert names.index("random_rough") not in columns and names.index("boxes") in columns
    assert list(columns) != list(column_sub_terrains(terrain.generator))
    for bad, message in [
        ({"gravel": 1.0}, "\\['gravel'\\] are not sub-terrains of the bundle's terrain"),
        ({"boxes": -0.1}, "finite and >= 0"),
        ({"boxes": float("nan")}, "finite and >= 0"),
        (dict.fromkeys(names, 0.0), "no sub-terrain with a proportion > 0"),
    ]:
        with pytest.raises(ValueError, match=message) as err:
            bundle_terrain(io, proportions=bad)
        assert "\n" not in str(err.value)


def test_mujoco_terrain_heights_match_ours(rough, mujoco_ground):
    """(a) MuJoCo's heightfield under random points against the env's terrain mesh (the collider) and its heightfield
    (the scan's): equal on flat and planar cells, apart by at most the raster's spread within a cell at edges."""
    env = rough[0]
    model, d, ground = mujoco_ground
    assert set(model.geom_group[model.geom_bodyid > 0]) == {0} and GROUND_GROUP != 0  # the rays see the ground only
    hm = env.heightmap
    rng = np.random.default_rng(0)
    xy = rng.uniform([hm.x0, hm.y0], [hm.x0 + (hm.nx - 1) * hm.cell, hm.y0 + (hm.ny - 1) * hm.cell], (3000, 2))
    ours_mesh = mesh_heights(env, xy)
    ours_raster = env.ground_height(torch.as_tensor(xy)).double().numpy()
    mj = ground.heights(d, xy)
    for ours, spread in ((ours_mesh, cell_range(env, xy, reach=1)), (ours_raster, cell_range(env, xy))):
        err = np.abs(mj - ours)
        assert np.all(err <= spread + 1e-3), (err - spread).max()
        assert np.median(err) < 1e-4 and np.mean(err < 1e-3) > 0.85, (np.median(err), np.mean(err < 1e-3))
    assert float(np.ptp(ours_mesh)) > 1.0  # stairs, pits and slopes: a terrain, not a plane


def our_scan(env, pos, quat_xyzw) -> np.ndarray:
    """The env's differentiable height scan (clipped, no noise) at the base pose."""
    q = env.q.detach().clone()
    q[0, 0:3] = torch.as_tensor(pos, dtype=q.dtype)
    q[0, 3:7] = torch.as_tensor(quat_xyzw, dtype=q.dtype)
    return env._height_scan(q)[0].double().numpy()


def mujoco_scan(io, d, ground, pos, quat_xyzw) -> np.ndarray:
    """MuJoCo's ray-cast scan with the bundle's grid, offset and clip (as the deployed controller applies them)."""
    s = io["height_scan"]
    wxyz = np.r_[quat_xyzw[3], quat_xyzw[:3]]
    raw = ground.scan(d, np.asarray(pos, dtype=np.float64), wxyz, np.asarray(s["pattern_xy"]))
    return np.clip(raw - s["offset"], -s["clip"], s["clip"])


def random_quats(rng, n, tilt=0.2):
    """(n, 4) x y z w: a random yaw and up to ``tilt`` rad of roll and pitch."""
    out = []
    for _ in range(n):
        yaw, roll, pitch = rng.uniform(-np.pi, np.pi), *rng.uniform(-tilt, tilt, 2)
        cy, sy, cr, sr, cp, sp = (f(a / 2) for a in (yaw, roll, pitch) for f in (np.cos, np.sin))
        out.append([sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy,
                    cr * cp * cy + sr * sp * sy])  # fmt: skip
    return np.array(out)


def test_mujoco_scan_equals_our_scan_on_flat_ground(rough):
    """(b) On the plane: MuJoCo's ray casts at the bundle's grid equal our scan of flat ground."""
    import mujoco

    env, _, io = rough
    robot = build_mujoco_anymal(io["articulations"]["robot"]["joint_names"], 0.9)
    d = mujoco.MjData(robot.model)
    mujoco.mj_forward(robot.model, d)
    ground = MujocoGround(robot.model, robot.ground_top)
    saved = env.heightmap
    env.heightmap = None  # our env's flat ground
    try:
        rng = np.random.default_rng(1)
        for quat, z in zip(random_quats(rng, 6), [0.3, 0.45, 0.6, 0.9, 1.4, 1.8]):
            pos = np.r_[rng.uniform(-5, 5, 2), z]
            ours, mj = our_scan(env, pos, quat), mujoco_scan(io, d, ground, pos, quat)
            assert np.abs(mj - ours).max() < 1e-5, np.abs(mj - ours).max()
    finally:
        env.heightmap = saved


@pytest.mark.parametrize("sub_terrain", ["pyramid_stairs", "boxes"])
def test_mujoco_scan_equals_our_scan_on_a_tile(rough, mujoco_ground, sub_terrain):
    """(b) Over a stairs or boxes tile of the top level, at random yaw, roll and pitch: MuJoCo's ray-cast scan equals
    our differentiable scan where the terrain is flat under a point, and parts from it by no more than the raster's
    spread within a cell at the edges."""
    env, _, io = rough
    _, d, ground = mujoco_ground
    gen = env.cfg.terrain.generator
    column = int(np.nonzero(column_sub_terrains(gen) == list(gen.sub_terrains).index(sub_terrain))[0][0])
    origin = env.terrain.origins[-1, column]
    rng = np.random.default_rng(2)
    errors, edges, values = [], [], []
    for quat in random_quats(rng, 8):
        pos = origin + np.r_[rng.uniform(-2.5, 2.5, 2), rng.uniform(0.4, 0.7)]
        ours, mj = our_scan(env, pos, quat), mujoco_scan(io, d, ground, pos, quat)
        points = torch.as_tensor(np.asarray(io["height_scan"]["pattern_xy"]))
        xy = scan_points(torch.as_tensor(pos)[None], torch.as_tensor(quat)[None], points)[0].numpy()
        errors.append(np.abs(mj - ours))
        values.append(ours)
        edges.append(cell_range(env, xy))
    err, spread = np.concatenate(errors), np.concatenate(edges)
    assert np.all(err <= spread + 1e-4), (err - spread).max()
    assert np.all(err[spread < 1e-6] < 1e-4) and np.mean(spread < 1e-6) > 0.5
    assert np.ptp(np.concatenate(values)) > 0.1 and np.mean(spread > 0.01) > 0.02  # steps and edges under the grid


def test_controller_builds_the_env_observation_from_the_scan_measurement(rough):
    """The deployed controller, fed base z - ground height at the bundle's grid, gives the env's observation."""
    env, bundle, io = rough
    env.reset(seed=3)
    with torch.no_grad():
        env.step(torch.zeros(1, 12))
    ctrl = Controller(str(bundle))
    ctrl.reset()
    meas = env_measurements(env)
    ctrl.last_action = env.last_actions.detach().numpy().astype(np.float32)
    obs = ctrl.observation(meas)
    ref = env._get_observations().detach().numpy()[:, : obs.shape[1]]
    assert obs.shape[1] == 48 + 187 and np.abs(obs - ref).max() < 1e-5
    del meas["height_scan"]
    with pytest.raises(KeyError, match="height_scan"):
        ctrl.observation(meas)


def load_script():
    spec = importlib.util.spec_from_file_location("sim2sim_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_terrain_run_reports_per_type_and_level(rough, tmp_path):
    """(c) sim2sim.py --terrain on the random bundle: one short episode on a boxes tile of level 1, the per-type and
    per-level groups (evaluate_terrain.py's layout) in the printout and the JSON."""
    out = tmp_path / "r.json"
    argv = [str(rough[1]), "--sim", "mujoco", "--terrain", "--episodes", "1", "--episode_s", "0.3"]
    results = load_script().main(argv + ["--terrain_levels", "1", "--terrain_types", "boxes", "--out", str(out)])
    nominal = results["nominal"]
    assert set(nominal["groups"]) == {"type boxes", "level 1"}
    for row in nominal["groups"].values():
        assert row["episodes"] == 1 and np.isfinite(row["tracking_error"]) and row["fall_rate"] in (0.0, 1.0)
    (episode,) = nominal["per_episode"]
    assert episode["level"] == 1 and episode["type"] == "boxes" and 1 <= episode["length"] <= 15
    data = json.loads(out.read_text())
    assert data["variants"]["nominal"]["groups"] == nominal["groups"]


def test_bad_terrain_requests_are_one_line_errors(rough, tmp_path, capsys):
    script = load_script()
    cfg = AnymalCFlatTrotDiffEnvCfg(num_envs=1, asset_source="urdf", episode_length_s=2.0)
    flat = DiffVelocityEnv(cfg)
    random_bundle(flat, tmp_path / "flat")
    flat.close()
    with pytest.raises(SystemExit, match="no terrain block") as err:
        script.main([str(tmp_path / "flat"), "--sim", "mujoco", "--terrain"])
    assert "\n" not in str(err.value)

    old = tmp_path / "old_rough"
    shutil.copytree(rough[1], old)
    io = yaml.safe_load((old / "io.yaml").read_text())
    del io["height_scan"]
    (old / "io.yaml").write_text(yaml.safe_dump(io, sort_keys=False))
    for extra in (["--terrain"], []):
        with pytest.raises(SystemExit, match="lacks \\['pattern_xy', 'offset', 'clip'\\]") as err:
            script.main([str(old), "--sim", "mujoco", *extra])
        assert "\n" not in str(err.value)

    for argv, message in [
        (["--sim", "diffsim", "--terrain"], "--terrain runs in MuJoCo"),
        (["--sim", "mujoco", "--terrain", "--terrain_types", "gravel"], "terrain types ['gravel'] are not on"),
        (["--sim", "mujoco", "--terrain", "--terrain_levels", "7"], "terrain levels [7] are off the grid"),
        (["--sim", "mujoco", "--terrain_seed", "2"], "--terrain_seed need --terrain"),
        (["--sim", "mujoco", "--terrain_proportions", "boxes=1"], "--terrain_proportions need --terrain"),
        (["--sim", "mujoco", "--terrain", "--terrain_proportions", "boxes"], "takes NAME=P items"),
        (["--sim", "mujoco", "--terrain", "--terrain_proportions", "boxes=a"], "takes NAME=P items"),
    ]:
        with pytest.raises(SystemExit):
            script.main([str(rough[1]), *argv])
        assert message in capsys.readouterr().err
    with pytest.raises(SystemExit, match="\\['gravel'\\] are not sub-terrains") as err:
        script.main([str(rough[1]), "--sim", "mujoco", "--terrain", "--terrain_proportions", "gravel=1"])
    assert "\n" not in str(err.value)


@pytest.mark.integration
@pytest.mark.slow
def test_trained_rough_checkpoint_bundle_runs_on_terrain_in_mujoco(tmp_path):
    """(c) scripts/train.py on the rough task (4 envs, 1 iteration, small terrain), then scripts/export.py: the bundle
    has the scan's fields and the terrain (as train.py's own export); sim2sim.py --terrain runs one short episode
    per type of level 0 from it alone."""
    terrain = [f"env.terrain.generator.{k}={v}" for k, v in SMALL_TERRAIN.items()]
    train = [sys.executable, str(ROOT / "scripts" / "train.py"), "--task", TASK, "--log_dir", str(tmp_path / "run")]
    train += ["--num_envs", "4", "--max_iterations", "1", "--eval_episodes", "0", "--seed", "5"]
    train += [a for a in TINY_SHAC if "=" in a] + terrain  # the tiny run's overrides
    proc = subprocess.run(train, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    bundle = tmp_path / "bundle"
    export = [sys.executable, str(ROOT / "scripts" / "export.py"), "--task", TASK, "--out", str(bundle)]
    proc = subprocess.run(
        export + ["--checkpoint", str(tmp_path / "run" / "model_1.pt")], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (bundle / "io.yaml").read_text() == (tmp_path / "run" / "exported" / "io.yaml").read_text()
    io, _ = open_bundle(str(bundle))
    assert len(io["height_scan"]["pattern_xy"]) == 187 and io["terrain"]["generator"]["seed"] == 5
    out = tmp_path / "mujoco.json"
    run = [sys.executable, str(SCRIPT), str(bundle), "--sim", "mujoco", "--terrain", "--terrain_levels", "0"]
    run += ["--episodes", "1", "--episode_s", "0.5", "--out", str(out)]
    proc = subprocess.run(run, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    groups = json.loads(out.read_text())["variants"]["nominal"]["groups"]
    types = [k for k in groups if k.startswith("type ")]
    assert len(types) == 5 and groups["level 0"]["episodes"] == 5, groups  # 6 columns hold 5 of the 6 types
    assert all(np.isfinite(g["tracking_error"]) for g in groups.values())
    assert "[sim2sim] nominal type boxes" in proc.stdout


def test_terrain_groups_layout_and_columns():
    """Types by column as Isaac Lab's curriculum generator lays them out (stairs up stand above their tile's border,
    stairs down below it), then levels; each group's episodes, mean tracking error and fall rate."""
    from isaaclab_diffsim.terrains import generate_terrain, rough_terrains_cfg
    from isaaclab_diffsim.terrains.grid_groups import terrain_groups

    gen = rough_terrains_cfg(num_rows=2, num_cols=10)
    gen.border_width = 1.0
    assert column_sub_terrains(gen).tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 5]
    origins = generate_terrain(gen, seed=0, curriculum=True).origins
    assert np.all(origins[:, 0:2, 2] > 0.05) and np.all(origins[:, 2:4, 2] < -0.05)
    groups = terrain_groups(gen, [0, 1, 9, 4], [0, 2, 2, 0], [0.1, 0.3, 0.5, 0.7], [True, False, False, True])
    assert list(groups) == ["type pyramid_stairs", "type boxes", "type hf_pyramid_slope_inv", "level 0", "level 2"]
    assert groups["type pyramid_stairs"] == {"episodes": 2, "tracking_error": pytest.approx(0.2), "fall_rate": 0.5}
    assert groups["level 0"] == {"episodes": 2, "tracking_error": pytest.approx(0.4), "fall_rate": 1.0}
    assert groups["level 2"]["fall_rate"] == 0.0 and groups["type boxes"]["episodes"] == 1
    tilted = terrain_groups(gen, [0, 1, 9, 4], [0, 2, 2, 0], [0.1] * 4, [True, False, False, True], [True, 0, 0, 0])
    assert tilted["type pyramid_stairs"]["tilted_fall_rate"] == 0.5 and tilted["level 0"]["tilted_fall_rate"] == 0.5
    assert tilted["type hf_pyramid_slope_inv"]["tilted_fall_rate"] == 0.0  # a fall with the base low, not tilted
