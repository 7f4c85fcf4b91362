"""Robots of the differentiable env are shown at Isaac Lab's env origins, and where they are shown does not change
the physics.

The env simulates each robot in its own frame (base above the world origin) and places it at its env origin only in
the world-frame view (``env.joint_q_w()``) that recordings and visualizers draw. Simulating at the origins instead
changed the float32 rollout by ~1e-6 and made the actor-gradient finite-difference check (test_actor_objective_fd)
fail 9 of 30 directions at a 2.5 m grid, so the physics must not see them.
"""

import pytest
import torch
from isaaclab.cloner import grid_transforms

from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg


def rollout(spacing: float, source: str = "urdf", steps: int = 25):
    """Joint states and world-frame base positions over a hard-contact rollout with fixed random actions."""
    cfg = DiffVelocityEnvCfg(num_envs=4, env_spacing=spacing, asset_source=source)
    cfg.solver_cfg.contact_model = "hard"
    env = DiffVelocityEnv(cfg)
    try:
        env.reset()
        gen = torch.Generator().manual_seed(3)
        qs, qds, world = [], [], []
        with torch.no_grad():
            for _ in range(steps):
                env.step(0.5 * torch.randn(4, 12, generator=gen))
                qs.append(env.q.clone())
                qds.append(env.qd.clone())
                world.append(env.joint_q_w())
        origins = env.env_origins.clone()
    finally:
        env.close()
    return torch.stack(qs), torch.stack(qds), torch.stack(world), origins


@pytest.mark.parametrize("source", ["urdf", "isaaclab"])
def test_robots_are_shown_at_isaaclabs_env_origins(source):
    q, _, world, origins = rollout(2.5, source, steps=2)
    # Isaac Lab's grid: the scene's own env_origins for the Isaac Lab-built model, grid_transforms for the others
    assert torch.equal(origins.cpu(), torch.as_tensor(grid_transforms(4, 2.5)[0]))
    assert len({tuple(o) for o in origins.tolist()}) == 4
    assert torch.equal(world[..., :3], q[..., :3] + origins)  # the view adds the origin, nothing else
    assert torch.equal(world[..., 3:], q[..., 3:])
    assert (q[-1, :, :2].norm(dim=1) < 0.2).all()  # the simulated bases stay near the world origin


@pytest.mark.parametrize("source", ["urdf", "isaaclab"])
def test_physics_does_not_depend_on_the_origins(source):
    """Same seed and actions with every robot shown at the origin and on a 2.5 m grid: bitwise the same joint and
    base trajectories; the robots moved, so the comparison is not vacuous."""
    q0, qd0, w0, o0 = rollout(0.0, source)
    q1, qd1, w1, o1 = rollout(2.5, source)
    assert torch.count_nonzero(o0) == 0 and o1.abs().max() > 1.0
    assert (q1[-1, :, :3] - q1[0, :, :3]).norm(dim=1).max() > 1e-3
    assert torch.equal(q1, q0) and torch.equal(qd1, qd0)
    torch.testing.assert_close(w1[..., :3] - o1, w0[..., :3], rtol=0.0, atol=1e-6)  # (x + o) - o rounds
