"""The rough-terrain task: generated terrain as the ground, the differentiable height scan, the terrain curriculum,
env origins per (level, type), and the registered ids."""

import math

import gymnasium as gym
import numpy as np
import pytest
import torch
import warp as wp

import isaaclab_diffsim.tasks  # noqa: F401  (registers the tasks)
from isaaclab_diffsim.solver.terrain_scenes import incline_mesh
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.rough_env_cfg import AnymalCRoughDiffEnvCfg
from isaaclab_diffsim.tasks.task_cfgs import resolve_task_cfgs
from isaaclab_diffsim.terrains import (
    HeightMap,
    TerrainLevels,
    grid_pattern,
    height_scan,
    rough_terrains_cfg,
    scan_points,
    terrain_level_moves,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TASK = "DiffSim-Velocity-Rough-AnymalC-Direct"


def small_terrain(cfg) -> None:
    """A CPU-test-sized terrain: 3 levels x 6 columns, 2 m border, its rows ordered by difficulty (the curriculum
    layout, which the task trains without: these tests place robots by level)."""
    cfg.terrain.curriculum = True
    gen = cfg.terrain.generator
    gen.num_rows, gen.num_cols, gen.border_width = 3, 6, 2.0


def rough_cfg(num_envs: int = 6, **fields) -> AnymalCRoughDiffEnvCfg:
    """The rough task on the small terrain; our builder's model (several envs per process) unless ``fields`` say."""
    cfg = AnymalCRoughDiffEnvCfg(num_envs=num_envs, **{"asset_source": "urdf", **fields})
    small_terrain(cfg)
    return cfg


@pytest.fixture(scope="module")
def env():
    """Six envs at rest on the small terrain in hard contact: no pushes, noise, randomisation or trot generator."""
    cfg = rough_cfg(seed=3)
    rest(cfg)
    env = gym.make(TASK, cfg=cfg).unwrapped
    env.reset(seed=3)
    yield env
    env.close()


def rest(cfg) -> None:
    """Hard contact, no pushes, noise, randomisation or trot generator, every level."""
    cfg.solver_cfg.contact_model = "hard"
    cfg.gait.joint_swing_scale = 0.0
    ev = cfg.events
    ev.push_velocity, ev.reset_base_velocity, ev.reset_joint_scale_range = 0.0, 0.0, (1.0, 1.0)
    ev.base_mass_add_range, ev.base_com_range = (0.0, 0.0), {}
    cfg.observations.enable_corruption = False
    cfg.terrain.max_init_terrain_level = None


def mesh_of(env) -> wp.Mesh:
    t = env.terrain
    return wp.Mesh(
        points=wp.array(t.vertices.astype(np.float32), dtype=wp.vec3),
        indices=wp.array(t.triangles.astype(np.int32).ravel(), dtype=int),
    )


@wp.kernel
def _closest_distance(mesh: wp.uint64, points: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.mesh_query_point_sign_normal(mesh, points[i], 10.0)
    c = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    out[i] = q.sign * wp.length(points[i] - c)


@wp.kernel
def _ray_height(mesh: wp.uint64, xy: wp.array(dtype=wp.vec2), out: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.mesh_query_ray(mesh, wp.vec3(xy[i][0], xy[i][1], 50.0), wp.vec3(0.0, 0.0, -1.0), 100.0)
    out[i] = 50.0 - q.t


def ray_heights(mesh: wp.Mesh, xy: torch.Tensor) -> torch.Tensor:
    out = wp.zeros(len(xy), dtype=float)
    wp.launch(
        _ray_height, dim=len(xy), inputs=[mesh.id, wp.array(xy.detach().cpu().numpy(), dtype=wp.vec2)], outputs=[out]
    )
    return torch.as_tensor(out.numpy())


def test_env_builds_and_steps_on_the_terrain(env):
    n = env.num_envs
    assert env.num_obs == 48 + 17 * 11  # flat terms and Isaac Lab's 187-point scan; no gait clock
    types = env.model.shape_type.numpy()[env.model.shape_world.numpy() < 0]
    assert list(types) == [int(newton_mesh_type())]  # the terrain replaces the ground plane
    obs, reward, *_ = env.step(torch.zeros(n, 12))
    assert obs.shape == (n, env.num_obs) and torch.isfinite(obs).all() and torch.isfinite(reward).all()


def test_scan_columns_hold_the_height_scan(env):
    cols = env.scan_columns
    assert (cols.start, cols.stop) == (48, 48 + 187)  # after the flat terms; the rough task has no gait clock
    obs = env._get_observations()
    torch.testing.assert_close(obs[:, cols], env._height_scan(env.q), rtol=0, atol=0)


def newton_mesh_type():
    import newton

    return newton.GeoType.MESH


def test_feet_rest_on_the_terrain_after_settling(env):
    assert_feet_on_terrain(env)


def assert_feet_on_terrain(env):
    n = env.num_envs
    with torch.no_grad():
        for _ in range(50):  # 1 s
            env.step(torch.zeros(n, 12))
    assert not bool(env.reset_terminated.any())
    centres = env.foot_centres(env.body_q).reshape(-1, 3)
    out, mesh = wp.zeros(len(centres), dtype=float), mesh_of(env)  # keep the mesh alive for the launch
    wp.launch(
        _closest_distance,
        dim=len(centres),
        inputs=[mesh.id, wp.array(centres.numpy(), dtype=wp.vec3)],
        outputs=[out],
    )
    gap = out.numpy() - env.foot_radius
    assert np.abs(gap).max() < 0.01, gap  # on the surface (hard contact: mm of penetration)
    origin_z = env.env_origins[:, 2]
    assert float(origin_z.abs().max()) > 0.1  # some envs stand well above or below z = 0 ...
    feet_z = env.foot_centres(env.body_q)[..., 2].mean(1) - env.foot_radius
    assert torch.allclose(feet_z, origin_z, atol=0.1)  # ... and their feet with them, not at z = 0


def test_flat_ground_keeps_the_grid_and_levels_without_the_terrain():
    cfg = rough_cfg(seed=3)
    rest(cfg)
    cfg.terrain.use_flat_ground()
    assert len(AnymalCRoughDiffEnvCfg().terrain.generator.sub_terrains) == 6  # the class default is untouched
    env = gym.make(TASK, cfg=cfg).unwrapped
    try:
        env.reset(seed=3)
        assert float(env.heightmap.heights.abs().max()) < 1e-6  # the top surface (the border boxes reach below)
        assert tuple(env.terrain_levels.origins.shape) == (3, 6, 3)  # the small grid's levels x columns
        assert float(env.env_origins[:, 2].abs().max()) < 1e-6
        q = env.q.detach()
        scan = env._height_scan(q)
        assert torch.allclose(scan, (q[:, 2:3] - 0.5).expand_as(scan), atol=1e-4)  # base height - offset
    finally:
        env.close()


def test_height_scan_matches_mesh_ray_casts(env):
    q = env.q.detach()
    scan = env._height_scan(q)  # no noise (corruption off)
    points = scan_points(q[:, 0:3], q[:, 3:7], env.scan_pattern)
    direct = q[:, 2:3] - ray_heights(mesh_of(env), points.reshape(-1, 2)).view_as(scan) - 0.5
    err = (scan - direct.clamp(-1.0, 1.0)).abs()
    assert float(err.median()) < 1e-3 and float(err.quantile(0.95)) < 0.02, err.max()


def test_heightmap_is_exact_on_a_plane_and_clamps_outside():
    mesh = incline_mesh(0.2, half=2.0)
    verts = np.asarray(mesh.vertices, np.float64).reshape(-1, 3)
    hm = HeightMap.from_mesh(verts, np.asarray(mesh.indices).reshape(-1, 3), 0.05, "cpu")
    xy = torch.rand(200, 2) * 3.8 - 1.9
    assert torch.allclose(hm(xy), -xy[:, 0] * math.tan(0.2), atol=1e-5)
    edge = hm(torch.tensor([[5.0, 0.0], [-5.0, 0.0]]))
    assert torch.allclose(edge, torch.tensor([-2.0, 2.0]) * math.tan(0.2), atol=1e-5)


def test_height_scan_gradient_matches_finite_differences(env):
    heights = HeightMap(env.heightmap.heights.double(), env.heightmap.x0, env.heightmap.y0, env.heightmap.cell)
    pattern = grid_pattern((1.6, 1.0), 0.1).double()
    gen = torch.Generator().manual_seed(0)
    pos = (env.env_origins[:3].double() + torch.tensor([0.0, 0.0, 0.6])).requires_grad_(True)
    pos = (pos + 0.3 * torch.rand(3, 3, generator=gen, dtype=torch.float64)).detach().requires_grad_(True)
    yaw = (2 * math.pi * torch.rand(3, generator=gen, dtype=torch.float64)).requires_grad_(True)

    def scan(p, y):
        quat = torch.stack([torch.zeros_like(y), torch.zeros_like(y), torch.sin(y / 2), torch.cos(y / 2)], 1)
        return height_scan(p, quat, pattern, heights, 0.5)

    assert torch.autograd.gradcheck(scan, (pos, yaw), eps=1e-7, atol=1e-5)
    value = scan(pos, yaw)
    grad_z = torch.autograd.grad(value.sum(), pos)[0][:, 2]
    assert torch.equal(grad_z, torch.full((3,), float(len(pattern)), dtype=torch.float64))


def test_env_height_scan_is_differentiable_in_the_base_state(env):
    q = env.q.detach().clone().requires_grad_(True)
    scan = env._height_scan(q)
    (g,) = torch.autograd.grad(scan.sum(), q)
    unclipped = (scan.abs() < 1.0).sum(1).float()
    assert torch.allclose(g[:, 2], unclipped)  # d(scan)/d(base z) is 1 per unclipped point
    assert bool((g[:, 0:2] != 0).any()) and bool((g[:, 3:7] != 0).any())  # through x, y and the yaw
    assert torch.equal(g[:, 7:], torch.zeros_like(g[:, 7:]))


def test_reward_base_height_over_the_ground_below_or_the_scan_mean(env, monkeypatch):
    q, mesh = env.q.detach().clone(), mesh_of(env)
    q[:, 0] += 1.7  # off the sub-terrains' centre platforms
    below = q[:, 2] - ray_heights(mesh, q[:, 0:2])
    points = scan_points(q[:, 0:3], q[:, 3:7], env.scan_pattern)
    scan_mean = q[:, 2] - ray_heights(mesh, points.reshape(-1, 2)).view(len(q), -1).mean(1)
    assert env.cfg.rewards.base_height_ground == "below"
    torch.testing.assert_close(env._reward_base_height(q), below, rtol=0, atol=0.02)
    monkeypatch.setattr(env.cfg.rewards, "base_height_ground", "scan_mean")
    torch.testing.assert_close(env._reward_base_height(q), scan_mean, rtol=0, atol=0.01)
    assert float((scan_mean - below).abs().max()) > 0.03  # the terrain varies under the scan


def test_scan_mean_base_height_over_a_step_and_its_gradient(env, monkeypatch):
    """Over a 0.2 m step down at x = 0 the base at x = 0.05 sees 9 of the scan's 17 columns on the lower side: h is
    z + 0.2 * 9 / 17 (the ground below it: z + 0.2); on a double heightmap the gradient matches finite differences."""
    monkeypatch.setattr(env.cfg.rewards, "base_height_ground", "scan_mean")
    monkeypatch.setattr(env, "ground_height", lambda xy: -0.2 * (xy[..., 0] >= 0).double())
    monkeypatch.setattr(env, "scan_pattern", env.scan_pattern.double())
    q = torch.zeros(1, 7, dtype=torch.float64)
    q[0, 0], q[0, 2], q[0, 6] = 0.05, 0.6, 1.0
    assert float(env._reward_base_height(q)) == pytest.approx(0.6 + 0.2 * 9 / 17, abs=1e-12)
    hm = env.heightmap
    heights = HeightMap(hm.heights.double(), hm.x0, hm.y0, hm.cell)
    monkeypatch.setattr(env, "ground_height", heights)
    gen = torch.Generator().manual_seed(1)
    yaw = 2 * math.pi * torch.rand(3, generator=gen, dtype=torch.float64)
    q = torch.zeros(3, 7, dtype=torch.float64)
    q[:, 0:3] = env.env_origins[:3].double() + 0.3 * torch.rand(3, 3, generator=gen, dtype=torch.float64)
    q[:, 2] += 0.6
    q[:, 5], q[:, 6] = torch.sin(yaw / 2), torch.cos(yaw / 2)
    assert torch.autograd.gradcheck(
        lambda p: env._reward_base_height(torch.cat([p, q[:, 3:]], 1)),
        (q[:, 0:3].clone().requires_grad_(True),),
        eps=1e-7,
        atol=1e-5,
    )


def test_curriculum_rule_on_synthetic_distances():
    distance = torch.tensor([5.0, 3.9, 0.5, 0.5, 1.9])
    command = torch.tensor([[1.0, 0.0], [0.1, 0.0], [0.0, 0.0], [0.3, 0.4], [0.2, 0.0]])
    up, down = terrain_level_moves(distance, command, sub_terrain_size=8.0, episode_length_s=20.0)
    assert up.tolist() == [True, False, False, False, False]  # farther than 4 m
    assert down.tolist() == [
        False,
        False,
        False,
        True,
        True,
    ]  # less than half of |cmd| x 20 s (5 m, 2 m; 0.5 m of 1 m is not)

    origins = torch.arange(4 * 2 * 3, dtype=torch.float32).view(4, 2, 3)
    levels = TerrainLevels(origins, num_envs=6, generator=torch.Generator().manual_seed(0))
    start = torch.tensor([0, 1, 3, 3, 2, 0])
    envs = torch.tensor([True, True, True, True, True, False])
    up = torch.tensor([False, True, True, False, False, True])
    down = torch.tensor([True, False, False, False, True, False])
    moved = levels.moved(start, envs, up, down)
    assert moved[[0, 1, 3, 4, 5]].tolist() == [0, 2, 3, 1, 0]  # floor at 0, up, stay, down, not reset
    assert 0 <= int(moved[2]) < 4  # past the top: a random level


def test_env_origins_per_level_and_type():
    cfg = rough_cfg(num_envs=12, seed=5)
    cfg.terrain.max_init_terrain_level = 1
    env = gym.make(TASK, cfg=cfg).unwrapped
    origins = torch.as_tensor(env.terrain.origins, dtype=torch.float32)
    assert origins.shape == (3, 6, 3)
    assert env.terrain_levels.types.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]  # Isaac Lab's blocks
    assert int(env.terrain_level.max()) <= 1
    assert torch.equal(env.env_origins, origins[env.terrain_level, env.terrain_levels.types])
    env.reset(seed=5)
    assert torch.allclose(env.q[:, 0:2], env.env_origins[:, 0:2])
    assert torch.allclose(env.q[:, 2], env.env_origins[:, 2] + cfg.init_base_height)

    # the curriculum at a reset: env 0 walked 5 m (up), env 1 stood under a 1 m/s command (down), env 2 has not run
    with torch.no_grad():
        env.step(torch.zeros(12, 12))
    env.terrain_level = torch.tensor([1, 1, 1] + [0] * 9)
    env.env_origins = env._env_origins()
    q = env.q.detach().clone()
    q[:, 0:2] = env.env_origins[:, 0:2]
    q[0, 0] += 5.0
    env.q = q
    env.commands = torch.zeros(12, 3)
    env.commands[1, 0] = 1.0
    env.episode_length_buf[2] = 0
    envs = torch.zeros(12, dtype=torch.bool)
    envs[:3] = True
    env._reset_idx(envs)
    assert env.terrain_level[:3].tolist() == [2, 0, 1]
    assert torch.allclose(env.q[:3, 0:2], origins[env.terrain_level[:3], env.terrain_levels.types[:3], 0:2])
    log = env._episode_log(envs)
    assert log["Curriculum/terrain_levels"] == pytest.approx(float(env.terrain_level.float().mean()))
    env.close()


def test_terrain_is_seeded_by_the_env_seed():
    from isaaclab_diffsim.terrains import generate_terrain

    gen = rough_terrains_cfg(num_rows=2, num_cols=6)
    gen.border_width = 1.0
    torch_state, numpy_state = torch.random.get_rng_state(), np.random.get_state()
    a, b, c = (generate_terrain(gen, seed, curriculum=True) for seed in (1, 1, 2))
    assert np.array_equal(a.vertices, b.vertices) and not np.array_equal(a.origins, c.origins)
    assert torch.equal(torch.random.get_rng_state(), torch_state)  # the global generators are left as they were
    assert np.array_equal(np.random.get_state()[1], numpy_state[1])


def test_play_task_builds():
    env_cfg, _ = resolve_task_cfgs(TASK + "-Play", "shac_cfg_entry_point", [])
    env_cfg.num_envs = 2
    small_terrain(env_cfg)
    env = gym.make(TASK + "-Play", cfg=env_cfg).unwrapped
    assert env.cfg.solver_cfg.contact_model == "hard" and env.cfg.terrain.max_init_terrain_level is None
    assert not env.cfg.observations.enable_corruption
    obs = env.reset(seed=0)
    obs, reward, *_ = env.step(torch.zeros(2, 12))
    assert obs.shape == (2, 48 + 187) and torch.isfinite(obs).all()
    env.close()


def test_isaaclab_scene_imports_the_same_terrain(env):
    """The registered task's Isaac Lab scene: its TerrainImporter's mesh is the terrain the builder path makes with
    the same seed (float32 vertices), the model's one static shape, and the robots stand on it."""
    cfg = rough_cfg(num_envs=6, seed=3, asset_source="isaaclab")
    rest(cfg)
    scene_env = gym.make(TASK, cfg=cfg).unwrapped
    try:
        assert np.array_equal(scene_env.terrain.triangles, env.terrain.triangles)
        assert np.abs(scene_env.terrain.vertices - env.terrain.vertices).max() < 1e-5
        assert np.allclose(scene_env.terrain.origins, env.terrain.origins, atol=1e-6)
        scene_env.reset(seed=3)
        assert torch.allclose(scene_env.q[:, 0:2], scene_env.env_origins[:, 0:2])
        assert_feet_on_terrain(scene_env)
    finally:
        scene_env.close()


def test_state_round_trip_keeps_levels_and_origins():
    cfg = rough_cfg(num_envs=4, seed=7)
    cfg.episode_length_s = 0.2  # resets (and curriculum moves) within the test
    env = gym.make(TASK, cfg=cfg).unwrapped
    env.reset(seed=7)
    state = env.get_state()

    def run():
        with torch.no_grad():
            for _ in range(15):
                env.step(0.3 * torch.ones(4, 12))
        return env.q.clone(), env.terrain_level.clone(), env.env_origins.clone()

    first = run()
    env.terrain_level = torch.full_like(env.terrain_level, 2)  # moved away, then restored
    env.set_state(state)
    second = run()
    assert all(torch.equal(a, b) for a, b in zip(first, second))
    env.close()


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda c: setattr(c.terrain.generator, "num_rows", 0), "terrain.generator.num_rows"),
        (lambda c: setattr(c.terrain.generator, "sub_terrains", {}), "terrain.generator.sub_terrains"),
        (lambda c: setattr(c.height_scan, "size", (50.0, 1.0)), "height_scan.size"),
        (lambda c: setattr(c.terrain.generator, "border_width", 0.5), "height_scan.size"),
        (lambda c: setattr(c.rewards, "base_height_ground", "mean"), "rewards.base_height_ground"),
        (
            lambda c: (setattr(c.rewards, "base_height_ground", "scan_mean"), setattr(c, "height_scan", None)),
            "rewards.base_height_ground",
        ),
    ],
)
def test_terrain_and_scan_that_cannot_work_are_refused_naming_the_field(edit, field):
    cfg = AnymalCRoughDiffEnvCfg()
    cfg.validate_values()
    cfg.terrain.generator = cfg.terrain.generator.copy()
    edit(cfg)
    with pytest.raises(ValueError) as err:
        cfg.validate_values()
    assert field in str(err.value) and "\n" not in str(err.value), str(err.value)
