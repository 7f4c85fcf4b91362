"""The foot-edge penalty of the rough task: the terrain's edge indicator (HeightMap.edge_map), the term's gate and
its gradient through the env."""

import gymnasium as gym
import pytest
import torch
from helpers.finite_difference import assert_action_gradient_matches_fd

import isaaclab_diffsim.tasks  # noqa: F401  (registers the tasks)
from isaaclab_diffsim.envs.rotations import quat_rotate
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg, mdp
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.rough_env_cfg import AnymalCRoughDiffEnvCfg
from isaaclab_diffsim.terrains import HeightMap

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TASK = "DiffSim-Velocity-Rough-AnymalC-Direct"
CELL = 0.05


def step_map(rise: float, at: int = 10, n: int = 21) -> HeightMap:
    """A step of ``rise`` [m] up between grid columns ``at - 1`` and ``at`` (x = (at - 0.5) CELL), flat along y."""
    heights = torch.zeros(n, n, dtype=torch.float64)
    heights[:, at:] = rise
    return HeightMap(heights, 0.0, 0.0, CELL)


def at_x(hm: HeightMap, x: torch.Tensor) -> torch.Tensor:
    return hm(torch.stack([x, torch.full_like(x, 0.5)], -1))


def profile(values: dict[int, float]) -> torch.Tensor:
    """The 21 grid columns' values: ``values`` at their columns, 0 elsewhere."""
    out = torch.zeros(21, dtype=torch.float64)
    for k, v in values.items():
        out[k] = v
    return out


def test_edge_map_is_the_share_of_edge_points_around_a_step():
    columns = torch.arange(21, dtype=torch.float64) * CELL
    # radius 0.05 m (one grid point each side): the points 9 and 10 see both sides of the step, so they are the edge
    # points, and each point's value is the share of them among itself and its two neighbours along x
    edge = at_x(step_map(0.1).edge_map(0.05, 0.05), columns)
    assert torch.allclose(edge, profile({8: 1 / 3, 9: 2 / 3, 10: 2 / 3, 11: 1 / 3}))
    # radius 0.1 m: edge points 8-11, shares over five points
    edge = at_x(step_map(0.1).edge_map(0.1, 0.05), columns)
    assert torch.allclose(edge, profile({6: 0.2, 7: 0.4, 8: 0.6, 9: 0.8, 10: 0.8, 11: 0.6, 12: 0.4, 13: 0.2}))
    # a rise no higher than the step threshold makes no edge; a drop makes the same one as a rise
    assert torch.equal(at_x(step_map(0.04).edge_map(0.05, 0.05), columns), profile({}))
    down, up = (at_x(step_map(rise).edge_map(0.05, 0.05), columns) for rise in (-0.1, 0.1))
    assert torch.equal(down, up)
    # radius 0: a grid point's own height only, never an edge
    assert torch.equal(at_x(step_map(0.3).edge_map(0.0, 0.05), columns), profile({}))


def test_edge_map_is_linear_between_grid_points_and_its_gradient_matches_finite_differences():
    edge = step_map(0.1).edge_map(0.05, 0.05)
    x = torch.tensor([7.25, 7.5, 8.5], dtype=torch.float64) * CELL
    assert torch.allclose(at_x(edge, x), torch.tensor([1 / 12, 1 / 6, 1 / 2], dtype=torch.float64))
    xy = torch.tensor([[7.3 * CELL, 0.4], [10.6 * CELL, 0.7], [3.4 * CELL, 0.2]], dtype=torch.float64)
    assert torch.autograd.gradcheck(edge, (xy.requires_grad_(True),), eps=1e-6, atol=1e-6)
    (g,) = torch.autograd.grad(edge(xy).sum(), xy)
    # towards the step from either side (x = 7.3 and 10.6 cells), 0 far from it
    expected = torch.tensor([[1 / 3 / CELL, 0.0], [-1 / 3 / CELL, 0.0], [0.0, 0.0]], dtype=torch.float64)
    assert torch.allclose(g, expected)


def test_foot_edge_sums_the_edge_map_over_the_feet_in_contact():
    edge = torch.tensor([[1.0, 0.5, 0.0, 1.0], [0.2, 0.3, 0.4, 0.1]])
    contact = torch.tensor([[True, True, True, False], [False, True, True, True]])
    assert torch.allclose(mdp.foot_edge(edge, contact), torch.tensor([1.5, 0.8]))


def rough_env(**rewards):
    """Two envs on a 3 x 6 terrain (our builder's model) in smoothed contact, nothing randomised, with the reward
    weights ``rewards`` and every other term off."""
    cfg = AnymalCRoughDiffEnvCfg(num_envs=2, asset_source="urdf", seed=5)
    cfg.terrain.curriculum = True
    gen = cfg.terrain.generator
    gen.num_rows, gen.num_cols, gen.border_width = 3, 6, 2.0
    cfg.solver_cfg.contact_model = "smoothed"
    ev = cfg.events
    ev.push_velocity, ev.reset_base_velocity, ev.reset_joint_scale_range = 0.0, 0.0, (1.0, 1.0)
    ev.base_mass_add_range, ev.base_com_range = (0.0, 0.0), {}
    cfg.observations.enable_corruption = False
    for name, value in cfg.rewards.__dict__.items():  # every term's weight
        if name not in DiffVelocityEnv.REWARD_PARAMETERS and isinstance(value, float):
            setattr(cfg.rewards, name, 0.0)
    for k, v in rewards.items():
        setattr(cfg.rewards, k, v)
    return gym.make(TASK, cfg=cfg).unwrapped


@pytest.fixture(scope="module")
def env():
    env = rough_env(foot_edge=-1.0)
    env.reset(seed=5)
    with torch.no_grad():
        for _ in range(10):
            env.step(torch.zeros(2, 12))
    yield env
    env.close()


def test_env_edge_map_is_the_terrain_heights_span_and_the_term_reads_it_under_the_standing_feet(env):
    hm, w = env.heightmap, env.cfg.rewards
    r = round(w.foot_edge_radius / hm.cell)
    h = hm.heights
    span = torch.zeros_like(h)
    for i in range(r, h.shape[0] - r):  # interior grid points, by a plain loop over the square
        block = h[i - r : i + r + 1].unfold(1, 2 * r + 1, 1).permute(1, 0, 2).reshape(h.shape[1] - 2 * r, -1)
        span[i, r : h.shape[1] - r] = block.amax(1) - block.amin(1)
    edge = (span > w.foot_edge_step).float()
    near = edge.unfold(0, 2 * r + 1, 1).unfold(1, 2 * r + 1, 1).mean((-1, -2))  # share over each interior square
    interior = env.foot_edge_map.heights[2 * r : -2 * r, 2 * r : -2 * r]
    assert torch.allclose(interior, near[r:-r, r:-r], atol=1e-6)
    assert 0.01 < float((interior > 0).float().mean()) < 0.5  # the small terrain's stairs and boxes, not everywhere

    pose = env.body_q[env.foot_bodies.reshape(-1)]
    centre = (pose[:, :3] + quat_rotate(pose[:, 3:7], env.foot_centers)).view(2, 4, 3)
    impulses = env.sim.last_contact_impulses().view(2, 4, 3)
    contact = impulses[..., 0] > env.cfg.sim_dt  # Isaac Lab's contact sensor threshold, 1 N
    assert bool(contact.any())
    want = (env.foot_edge_map(centre[..., :2]) * contact).sum(1)
    assert torch.allclose(env._foot_edge(env.body_q), want)
    env.foot_edge_map = lambda xy: torch.ones_like(xy[..., 0])  # every point on an edge: the feet in contact count
    try:
        assert torch.equal(env._foot_edge(env.body_q), contact.sum(1).float())
    finally:
        env.foot_edge_map = env._foot_edge_map()


def test_foot_edge_gradient_matches_finite_differences(env, monkeypatch):
    # a smooth field in place of the edge map and every foot counted, so that the swinging feet, which move most in
    # a step, carry the gradient (the map's own gradient is checked above)
    monkeypatch.setattr(env, "foot_edge_map", lambda xy: torch.sin(20.0 * xy[..., 0] + 12.0 * xy[..., 1]))
    monkeypatch.setattr(env, "_feet_in_contact", lambda: torch.ones(2, 4, dtype=torch.bool))
    start = env.get_state()
    a0 = torch.zeros(2, 12)
    a0[:, 1::3] = 0.6  # thighs forward and knees folded: the feet lift off
    a0[:, 2::3] = -0.6

    def reward(a):  # five steps: one moves a foot too little for float32 finite differences
        env.set_state(start)
        env.detach()
        return sum(env.step(a)[1].sum() for _ in range(5))

    assert_action_gradient_matches_fd(reward, a0, (0, 1, 10, 11), min_fd=3e-4)
    env.set_state(start)


def test_foot_edge_needs_a_terrain_and_valid_parameters():
    cfg = DiffVelocityEnvCfg(num_envs=1)
    cfg.rewards.foot_edge = -1.0
    with pytest.raises(ValueError, match="rewards.foot_edge"):
        cfg.validate_values()
    for field, value in (("foot_edge_step", 0.0), ("foot_edge_radius", -0.05)):
        cfg = AnymalCRoughDiffEnvCfg()
        setattr(cfg.rewards, field, value)
        with pytest.raises(ValueError, match=f"rewards.{field}") as err:
            cfg.validate_values()
        assert "\n" not in str(err.value)
    assert AnymalCRoughDiffEnvCfg().rewards.foot_edge == 0.0  # off unless asked for
