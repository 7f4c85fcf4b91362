"""Fingerprint of the default task and of a short SHAC run, for bitwise comparisons across refactors.

    .venv/bin/python scripts/tools/fingerprint.py --out /tmp/before.pt            # write
    .venv/bin/python scripts/tools/fingerprint.py --out /tmp/after.pt --compare /tmp/before.pt

It uses only the public interfaces (the gym task id and ``scripts/train.py``), so it runs unchanged before and after
a code move. The rollout: ``--steps`` steps of ``--num_envs`` envs (pushes and resets on) with actions that require
grad; the fingerprint holds the final joint state, the summed reward and d(reward)/d(actions). The run: SHAC for
``--iterations`` iterations (``--seed``); the fingerprint holds every tensor of its final checkpoint. ``--compare``
exits 1 naming the first tensor that is not ``torch.equal`` (config fields added since are named, not compared).
Trailing ``env.*`` / ``agent.*`` overrides apply to both parts (e.g. to set a new default back to its old value).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import torch

CFG_PREFIXES = (
    "ckpt/env_cfg/",
    "ckpt/cfg/",
    "ckpt/env_state/",
    "ckpt/actor_optimizer_state_dict/param_groups/",
    "ckpt/critic_optimizer_state_dict/param_groups/",
)
"""Where the checkpoint records the env and agent configs, the env's state fields and the optimisers' settings: a
key added there since (a new config field, a new state field of a feature that is off, an optimiser option set
explicitly) is named, not counted as a difference."""
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rollout(task: str, num_envs: int, steps: int, seed: int, overrides: list[str]) -> dict[str, torch.Tensor]:
    import gymnasium as gym

    import isaaclab_diffsim.tasks  # noqa: F401  (registers the tasks)
    from isaaclab_diffsim.tasks.task_cfgs import resolve_task_cfgs

    env_cfg, _ = resolve_task_cfgs(task, "shac_cfg_entry_point", overrides)
    env_cfg.num_envs = num_envs
    env_cfg.seed = seed
    env = gym.make(task, cfg=env_cfg).unwrapped
    torch.manual_seed(seed)
    env.reset(seed=seed)
    actions = (0.3 * torch.randn(steps, num_envs, env.num_actions)).requires_grad_(True)
    total = torch.zeros(())
    for t in range(steps):
        _, reward, _, _, _ = env.step(torch.tanh(actions[t]))
        total = total + reward.sum()
    total.backward()
    out = {
        "joint_q": env.q.detach().clone(),
        "joint_qd": env.qd.detach().clone(),
        "reward_sum": total.detach(),
        "action_grad": actions.grad.clone(),
    }
    env.close()
    return out


def short_run(task: str, num_envs: int, iterations: int, seed: int, overrides: list[str]) -> dict[str, torch.Tensor]:
    with tempfile.TemporaryDirectory() as log_dir:
        cmd = [
            sys.executable,
            os.path.join(REPO, "scripts", "train.py"),
            "--task",
            task,
            "--algo",
            "shac",
            "--num_envs",
            str(num_envs),
            "--max_iterations",
            str(iterations),
            "--seed",
            str(seed),
            "--log_dir",
            os.path.join(log_dir, "run"),
            "--eval_episodes",
            "0",
            *overrides,
        ]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        ckpt = torch.load(os.path.join(log_dir, "run", f"model_{iterations}.pt"), weights_only=False)
    flat: dict[str, torch.Tensor] = {}

    def walk(prefix: str, obj) -> None:
        if isinstance(obj, torch.Tensor):
            flat[prefix] = obj.detach().clone()
        elif isinstance(obj, dict):
            for k, v in obj.items():
                walk(f"{prefix}/{k}", v)
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                walk(f"{prefix}/{i}", v)
        elif isinstance(obj, (int, float, bool)):
            flat[prefix] = torch.tensor(obj)

    walk("ckpt", ckpt)
    flat.pop("ckpt/wall_time", None)  # the run's clock, not its result
    return flat


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="DiffSim-Velocity-Flat-AnymalC-Direct")
    parser.add_argument("--num_envs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    parser.add_argument("--compare", default=None, help="an earlier fingerprint to compare with, tensor by tensor")
    parser.add_argument("overrides", nargs="*", help="hydra overrides of the task (env.* / agent.*), both parts")
    args = parser.parse_args()
    torch.set_num_threads(1)
    fp = rollout(args.task, args.num_envs, args.steps, args.seed, args.overrides)
    fp = {f"rollout/{k}": v for k, v in fp.items()}
    fp.update(short_run(args.task, 16, args.iterations, args.seed, args.overrides))
    torch.save(fp, args.out)
    print(f"fingerprint: {len(fp)} tensors -> {args.out}")
    if args.compare is None:
        return 0
    ref = torch.load(args.compare, weights_only=False)
    added_fields = sorted(k for k in set(fp) - set(ref) if k.startswith(CFG_PREFIXES))
    if set(ref) != set(fp) - set(added_fields):
        print(
            f"different keys: only before {sorted(set(ref) - set(fp))[:5]}, only now {sorted(set(fp) - set(ref))[:5]}"
        )
        return 1
    for k in sorted(ref):
        if ref[k].dtype != fp[k].dtype or not torch.equal(ref[k], fp[k]):
            print(f"NOT bitwise equal: {k}")
            return 1
    print(
        f"bitwise equal: all {len(ref)} tensors (rollout {args.steps} steps x {args.num_envs} envs, "
        f"SHAC {args.iterations} iterations)" + (f"; new config/state fields {added_fields}" if added_fields else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
