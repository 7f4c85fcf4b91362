"""NewtonDiffSimManager's CPU graph (DiffSimSolverCfg.use_cpu_graph) inside Isaac Lab's manager-based task: the
replayed physics steps give bitwise the same observations, rewards and resets as eager stepping, through resets
and events, and a flagged model change makes the manager capture anew (a graph replayed past it would keep
reading the replaced array)."""

import newton
import pytest
import torch
import warp as wp

pytest.importorskip("isaaclab_tasks")

from isaaclab.envs import ManagerBasedRLEnv  # noqa: E402
from isaaclab_newton.physics import NewtonManager  # noqa: E402
from isaaclab_tasks.utils.hydra import resolve_presets  # noqa: E402

import isaaclab_diffsim.tasks  # noqa: E402, F401  (registers the task ids)
from isaaclab_diffsim.physics.diffsim_manager import NewtonDiffSimManager  # noqa: E402
from isaaclab_diffsim.tasks.locomotion.velocity.config.anymal_c.flat_env_cfg import (  # noqa: E402
    AnymalCFlatDiffSimEnvCfg,
)

STEPS = 24


def _rollout(use_cpu_graph: bool) -> tuple[list, int, int]:
    """STEPS random-action steps (short episodes: time-out resets happen), a +10 kg base mass change half-way
    (a new body_mass array, flagged through Isaac Lab's add_model_change); returns every step's outputs and the
    number of CPU graphs captured and replayed."""
    cfg = AnymalCFlatDiffSimEnvCfg()
    cfg.scene.num_envs = 3
    cfg.sim.device = "cpu"
    cfg = resolve_presets(cfg, ("diffsim_smoothed",))
    cfg.sim.physics.solver_cfg.use_cpu_graph = use_cpu_graph
    cfg.seed = 0
    cfg.episode_length_s = 0.2  # 10 policy steps per episode
    env = ManagerBasedRLEnv(cfg)
    captures, replays = NewtonDiffSimManager.cpu_graph_captures, NewtonDiffSimManager.cpu_graph_replays
    try:
        gen = torch.Generator().manual_seed(1)
        obs, _ = env.reset()
        out = [obs["policy"].clone()]
        for t in range(STEPS):
            if t == STEPS // 2:
                model = NewtonManager.backend.model
                mass = model.body_mass.numpy()
                mass[0] += 10.0
                model.body_mass = wp.array(mass, dtype=wp.float32, device="cpu")
                NewtonManager.add_model_change(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)
            action = 2.0 * torch.rand(3, env.action_manager.total_action_dim, generator=gen) - 1.0
            obs, rew, term, trunc, _ = env.step(action)
            out.append(
                [
                    obs["policy"].clone(),
                    rew.clone(),
                    term.clone(),
                    trunc.clone(),
                    env.scene["robot"].data.joint_pos.torch.clone(),
                ]
            )
        assert bool(trunc.any()) or any(bool(o[3].any()) for o in out[1:]), "expected time-out resets"
        return out, NewtonDiffSimManager.cpu_graph_captures - captures, NewtonDiffSimManager.cpu_graph_replays - replays
    finally:
        env.close()


def test_cpu_graph_replay_is_bitwise_eager():
    graph, captures, replays = _rollout(True)
    eager, eager_captures, eager_replays = _rollout(False)
    for t, (a, b) in enumerate(zip(graph, eager)):
        for i, (x, y) in enumerate(zip(a, b)):
            assert torch.equal(x, y), f"step {t}, output {i}: max diff {(x.float() - y.float()).abs().max().item()}"
    assert eager_captures == 0 and eager_replays == 0
    assert captures == 2, "one capture at the start, one after the model change"
    assert replays >= STEPS - 2, "steps other than the two captured ones replay the graph"
