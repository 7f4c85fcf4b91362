"""The SHAC runner's kappa schedule: values, what reaches the env each iteration, logging and bit-for-bit resume."""

import math

import pytest
import torch
from helpers.shac import PointMassEnv, assert_bitwise_equal, full_state, small_cfg

from isaaclab_diffsim.rl.shac import ShacRunner
from isaaclab_diffsim.rl.shac.shac_cfg import KappaScheduleCfg

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class KappaEnv(PointMassEnv):
    """The point-mass env with a ``set_kappa`` that records what it was given (and before which step)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.kappa, self.calls = None, []

    def set_kappa(self, kappa: float) -> None:
        self.kappa = kappa
        self.calls.append(kappa)


def schedule(kind: str = "geometric") -> KappaScheduleCfg:
    return KappaScheduleCfg(kappa_start=100.0, kappa_end=1600.0, iterations=4, kind=kind)


def test_schedule_values_linear_and_geometric():
    lin, geo = schedule("linear"), schedule("geometric")
    assert [lin.value(i) for i in range(6)] == [100.0, 475.0, 850.0, 1225.0, 1600.0, 1600.0]
    # geometric: 100 * 16 ** (i / 4) = 100, 200, 400, 800, 1600
    for i, want in enumerate([100.0, 200.0, 400.0, 800.0, 1600.0, 1600.0]):
        assert math.isclose(geo.value(i), want, rel_tol=1e-12)


@pytest.mark.parametrize(
    "field, value", [("kappa_start", 0.0), ("kappa_end", -1.0), ("iterations", 0), ("kind", "cosine")]
)
def test_bad_schedule_refused(field, value):
    cfg = small_cfg(kappa_schedule=schedule())
    setattr(cfg.kappa_schedule, field, value)
    with pytest.raises(ValueError, match=f"kappa_schedule.{field}"):
        cfg.validate_values()


def test_off_by_default_and_settable_by_overrides():
    import isaaclab_diffsim.tasks  # noqa: F401
    from isaaclab_diffsim.rl.policy_loading import AGENT_ENTRY
    from isaaclab_diffsim.tasks.task_cfgs import resolve_task_cfgs

    _, agent = resolve_task_cfgs("DiffSim-Velocity-Flat-AnymalC-Direct", AGENT_ENTRY["shac"], [])
    assert not agent.kappa_schedule.enabled
    _, agent = resolve_task_cfgs(
        "DiffSim-Velocity-Flat-AnymalC-Direct",
        AGENT_ENTRY["shac"],
        ["agent.kappa_schedule.kind=linear", "agent.kappa_schedule.kappa_start=100.0"],
    )
    agent.validate_values()
    assert agent.kappa_schedule.enabled and agent.kappa_schedule.value(0) == 100.0


def test_env_without_set_kappa_refused():
    torch.manual_seed(0)
    runner = ShacRunner(PointMassEnv(num_envs=4), small_cfg(kappa_schedule=schedule()), device="cpu")
    with pytest.raises(TypeError, match="set_kappa"):
        runner.learn(1)


def test_each_iteration_sets_its_kappa_logs_and_resumes_bit_for_bit(tmp_path):
    torch.manual_seed(0)
    env_a = KappaEnv(num_envs=4)
    runner_a = ShacRunner(env_a, small_cfg(kappa_schedule=schedule()), log_dir=str(tmp_path / "a"), device="cpu")
    runner_a.learn(3)
    assert env_a.calls == pytest.approx([100.0, 200.0, 400.0], rel=1e-12)
    ckpt = str(tmp_path / "ckpt.pt")
    runner_a.save(ckpt)
    assert torch.load(ckpt, weights_only=True)["kappa"] == pytest.approx(400.0)
    runner_a.learn(2)
    assert env_a.calls[3:] == pytest.approx([800.0, 1600.0], rel=1e-12)
    runner_a.close()
    state_a, env_state_a = full_state(runner_a), env_a.get_state()

    torch.manual_seed(123)
    env_b = KappaEnv(num_envs=4)
    runner_b = ShacRunner(env_b, small_cfg(kappa_schedule=schedule()), device="cpu")
    runner_b.load(ckpt)
    assert env_b.kappa == pytest.approx(400.0)  # the checkpoint's kappa until the next iteration sets its own
    runner_b.learn(2)
    assert env_b.calls[1:] == pytest.approx([800.0, 1600.0], rel=1e-12)
    assert_bitwise_equal(state_a, full_state(runner_b))
    assert_bitwise_equal(env_state_a, env_b.get_state())

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tmp_path / "a"))
    acc.Reload()
    logged = [e.value for e in acc.Scalars("Env/kappa")]
    assert logged == pytest.approx([100.0, 200.0, 400.0, 800.0, 1600.0], rel=1e-6)


def test_diff_env_set_kappa_reaches_the_solver_without_a_new_solver():
    """set_kappa fills the solver's runtime array in place: the same solver (no rebuild, no recompilation) steps
    exactly as a solver built with that kappa."""
    from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg

    def make(kappa):
        cfg = DiffVelocityEnvCfg(num_envs=2)
        cfg.solver_cfg.kappa = kappa
        cfg.events.push_velocity = 0.0
        cfg.observations.enable_corruption = False
        return DiffVelocityEnv(cfg)

    scheduled, fresh = make(1000.0), make(250.0)
    solver, kappa_array = scheduled.sim.solver, scheduled.sim.solver.kappa_array
    scheduled.set_kappa(250.0)
    assert scheduled.sim.solver is solver and solver.kappa_array is kappa_array
    assert solver.kappa == 250.0 and scheduled.cfg.solver_cfg.kappa == 250.0
    with pytest.raises(ValueError, match="kappa"):
        scheduled.set_kappa(0.0)
    actions = torch.full((2, 12), 0.3)
    for env in (scheduled, fresh):
        env.reset(seed=0)
        with torch.no_grad():
            for _ in range(10):
                env.step(actions)
    assert torch.equal(scheduled.q, fresh.q) and torch.equal(scheduled.qd, fresh.qd)
