"""Where a SHAC iteration of the main job goes, beside the untaped rollout of the same env steps (same run).

    .venv/bin/python scripts/benchmarks/shac_iteration.py --iterations 20 --warmup 5 [overrides ...]
    .venv/bin/python scripts/benchmarks/shac_iteration.py --checkpoint logs/main_seed30/model_800.pt [overrides ...]

Builds the main job (DiffSim-Velocity-Flat-AnymalC-Direct, SHAC, its registered configs; Isaac Lab-style overrides
``env.x=...`` / ``agent.x=...`` as in scripts/train.py) and runs ``--warmup`` iterations, then ``--iterations``
timed ones with stage timers:

- taped forward: solver (``solver.step``: kernel launches and their tape recording), bridge (DiffSimulator's glue
  around the solver: torch<->warp views, autograd.Function bookkeeping), env MDP (env.step's own torch ops), policy
  and SHAC bookkeeping (actor, target critic, loss terms, buffers);
- backward: Warp adjoints (``wp.Tape.backward``, or a slot's replayed backward graph) and torch autograd (the rest
  of ``loss.backward()``);
- update: critic fit (minibatch steps; with ``concurrent_critic_fit`` in a worker process or thread during the
  backward, and with ``critic_fit_overlaps_rollout`` also during the next rollout; the iteration's thread shows its
  wait for it, at the update that applies it), actor step (clip + Adam), the rest (TD(lambda) targets, ...).

Then it times the same number of horizons rolled out under ``torch.no_grad`` (policy acting, the env's captured
forward graph) and prints the iteration's cost as a multiple of that untaped rollout. Interleaving is by block:
``--rounds`` alternations of (timed iterations, untaped horizons), so machine load drifts hit both alike.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import gymnasium as gym
import torch
import warp as wp

sys.path.insert(0, os.path.dirname(__file__))
from step_profile import StageProfile, format_kernels, kernel_launches  # noqa: E402

from isaaclab_diffsim.rl.policy_loading import AGENT_ENTRY  # noqa: E402

try:
    from isaaclab_diffsim.bridge.taped_step import TapedSlot
except ImportError:  # a checkout from before the taped graphs (compare_checkouts.sh)
    TapedSlot = None
from isaaclab_diffsim.rl.shac import resolve_class  # noqa: E402
from isaaclab_diffsim.tasks.task_cfgs import resolve_task_cfgs  # noqa: E402

TASK = "DiffSim-Velocity-Flat-AnymalC-Direct"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default=TASK)
    p.add_argument("--num_envs", type=int, default=None, help="default: the task's (the main job's 1024)")
    p.add_argument("--iterations", type=int, default=20, help="timed iterations per round")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--torch_threads", type=int, default=1, help="as scripts/train.py")
    p.add_argument("--kernels", action="store_true", help="also the time per Warp kernel (forward and backward)")
    p.add_argument(
        "--checkpoint",
        default=None,
        help="start from this main-job checkpoint (e.g. logs/main_seed30/model_800.pt: late training, long episodes, "
        "few resets) instead of a fresh policy",
    )
    p.add_argument("overrides", nargs="*")
    return p.parse_args()


def build(args):
    env_cfg, agent_cfg = resolve_task_cfgs(args.task, AGENT_ENTRY["shac"], args.overrides)
    env_cfg.device = agent_cfg.device = args.device
    if args.num_envs is not None:
        env_cfg.num_envs = args.num_envs
    env_cfg.seed = agent_cfg.seed = args.seed
    env_cfg.validate_values()
    agent_cfg.validate_values()
    if args.checkpoint is None:  # else the task's: the learning-rate schedule of the run the checkpoint is from
        agent_cfg.max_iterations = args.warmup + args.rounds * args.iterations
    agent_cfg.save_interval = 10**9
    torch.manual_seed(args.seed)
    env = gym.make(args.task, cfg=env_cfg).unwrapped
    runner = resolve_class(agent_cfg.class_name)(env, agent_cfg, log_dir=None, device=args.device)
    if args.checkpoint is not None:
        runner.load(args.checkpoint)
    return env, runner


SOLVER_STAGE = "forward: solver (launches and tape, or replay)"
CRITIC_FIT = "update: critic fit"
CRITIC_WAIT = "update: waiting for the concurrent critic fit"


def install_timers(prof: StageProfile, env, runner) -> None:
    """The stages of the module doc; nested stages are exclusive (each excludes the stages timed inside it)."""
    alg = runner.alg
    prof.wrap(runner, "_iteration", "other (logging, schedules)")
    prof.wrap(runner, "_rollout", "forward: policy and SHAC bookkeeping")
    prof.wrap(env, "step", "forward: env MDP")
    prof.wrap(env.sim, "step", "forward: bridge glue")
    prof.wrap(type(env.sim.solver), "step", SOLVER_STAGE)  # the class: an instance attribute would be a new setting
    prof.wrap(alg, "update", "update: other")
    prof.wrap(alg, "_timed_backward", "backward: torch autograd")
    prof.wrap(wp.Tape, "backward", "backward: Warp adjoints")
    if TapedSlot is not None:  # differentiable steps replayed from graphs (the slot's eager first step nests)
        prof.wrap(TapedSlot, "forward", SOLVER_STAGE)
        prof.wrap(TapedSlot, "backward", "backward: Warp adjoints")
    if not hasattr(alg, "critic_fit_seconds"):  # a checkout from before the counter (compare_checkouts.sh)
        prof.wrap(alg, "_fit_critic", CRITIC_FIT)
    if not hasattr(alg, "_start_critic_fit"):  # a checkout from before the concurrent fit (compare_checkouts.sh)
        return
    start = alg._start_critic_fit

    def start_timed(*args):  # the wait for the fit's result is a stage of the iteration's own thread
        done = start(*args)

        def wait():
            t0 = time.perf_counter()
            try:
                return done()
            finally:
                prof.seconds[CRITIC_WAIT] += time.perf_counter() - t0

        return wait

    prof.replace(alg, "_start_critic_fit", start_timed)
    prof.wrap(alg, "_clip_and_step_actor", "update: actor step")


def fit_seconds(runner) -> float:
    """The critic fit's seconds so far, wherever it runs (0 for a checkout without the counter: timed by wrapping)."""
    return float(getattr(runner.alg, "critic_fit_seconds", 0.0))


def untaped_horizons(runner, count: int) -> float:
    """``count`` horizons stepped under no_grad with the policy acting (no update), seconds."""
    env, alg = runner.env, runner.alg
    t0 = time.perf_counter()
    with torch.no_grad():
        for _ in range(count):
            obs = env.get_observations().detach()
            alg.begin_horizon(obs, update_normalizer=False)
            for _ in range(runner.horizon):
                actions = alg.act(obs)
                obs, rew, terminated, truncated, extras = env.step(actions)
                alg.process_env_step(obs, rew, terminated, truncated, extras)
            alg.abort_horizon()
    return time.perf_counter() - t0


def main():
    args = parse_args()
    torch.set_num_threads(args.torch_threads)
    env, runner = build(args)
    try:
        steps_per_it = runner.horizon * runner.num_envs
        runner.learn(args.warmup)
        untaped_horizons(runner, 2)  # the no_grad graph is captured here
        prof = StageProfile(args.device)
        install_timers(prof, env, runner)
        taped, untaped = 0.0, 0.0
        table = untaped_table = None
        for _ in range(args.rounds):
            fit0 = fit_seconds(runner)
            t0 = time.perf_counter()
            if args.kernels and table is None:
                with kernel_launches(args.device) as table:
                    runner.learn(args.iterations)
                table = dict(table)
            else:
                runner.learn(args.iterations)
            taped += time.perf_counter() - t0
            prof.restore()  # the untaped rollout untimed by stage (its env.step would count as forward stages)
            prof.seconds[CRITIC_FIT] += fit_seconds(runner) - fit0
            untaped += untaped_horizons(runner, args.iterations)
            if args.kernels and untaped_table is None:
                env.sim.forward.capture = False  # eager launches, so that they can be timed one by one
                with kernel_launches(args.device) as untaped_table:
                    untaped_horizons(runner, args.iterations)
                env.sim.forward.capture = True
                untaped_table = dict(untaped_table)
            install_timers(prof, env, runner)
        prof.restore()
        iterations = args.rounds * args.iterations
        report(prof, taped, untaped, iterations, steps_per_it, runner, table, untaped_table, args.iterations)
    finally:
        env.close()


def report(prof, taped, untaped, iterations, steps_per_it, runner, table, untaped_table, per_round) -> None:
    it_s, un_s = taped / iterations, untaped / iterations
    print(
        f"\nSHAC iteration of {runner.num_envs} envs x horizon {runner.horizon} ({steps_per_it} env steps), mean over "
        f"{iterations} iterations; torch threads {torch.get_num_threads()}"
    )
    order = [
        SOLVER_STAGE,
        "forward: bridge glue",
        "forward: env MDP",
        "forward: policy and SHAC bookkeeping",
        "backward: Warp adjoints",
        "backward: torch autograd",
        CRITIC_FIT,
        "update: actor step",
        "update: other",
        "other (logging, schedules)",
    ]
    concurrent = bool(getattr(runner.alg.cfg, "concurrent_critic_fit", False))
    worker = getattr(runner.alg.cfg, "critic_fit_worker", "thread") if concurrent else None
    if concurrent:  # the fit runs in the worker: the main thread's stage is the wait for it
        order[order.index(CRITIC_FIT)] = CRITIC_WAIT
    print(f"  {'stage (the iteration thread)':<46} {'ms/iteration':>12} {'share':>7}")
    for name in order:
        sec = prof.seconds.get(name, 0.0)
        print(f"  {name:<46} {1e3 * sec / iterations:>12.1f} {100.0 * sec / taped:>6.1f}%")
    print(f"  {'iteration (wall)':<46} {1e3 * it_s:>12.1f} {100.0:>6.1f}%")
    if concurrent:
        fit = prof.seconds.get(CRITIC_FIT, 0.0) / iterations
        print(f"  {f'critic fit, in the worker {worker} meanwhile':<46} {1e3 * fit:>12.1f}")
    fwd = sum(v for k, v in prof.seconds.items() if k.startswith("forward")) / iterations
    bwd = sum(v for k, v in prof.seconds.items() if k.startswith("backward")) / iterations
    ratio = bwd / fwd
    print(f"\n  taped forward   {1e3 * fwd:8.1f} ms   backward {1e3 * bwd:8.1f} ms   (backward / forward {ratio:.2f})")
    print(f"  untaped rollout {1e3 * un_s:8.1f} ms   ({steps_per_it / un_s:,.0f} env-steps/s, no_grad, graph replay)")
    print(f"  iteration       {1e3 * it_s:8.1f} ms   ({steps_per_it / it_s:,.0f} env-steps/s)")
    print(f"  iteration / untaped rollout: {it_s / un_s:.2f}x (goal <= 5x); taped forward / untaped: {fwd / un_s:.2f}x")
    taped = getattr(runner.env.sim, "taped", None)
    if taped is not None:
        print(f"  differentiable steps: {taped.replays} replayed from graphs, {taped.captures} eager (and captured)")
    if table is not None:
        print("\nWarp launches per SHAC iteration (first timed round; 'steps' are iterations)")
        print(format_kernels(table, per_round, top=16))
        print("\nWarp launches per untaped horizon (eager, not replayed; 'steps' are horizons)")
        print(format_kernels(untaped_table, per_round, top=10))


if __name__ == "__main__":
    main()
