"""rsl_rl's ``OnPolicyRunner`` with the SHAC runner's interrupt handling, resume semantics and checkpoint checks.

- Ctrl-C / SIGTERM are held until the running iteration has been updated and logged; that iteration is then saved
  as ``model_<it>_interrupted.pt`` (rsl_rl numbering: ``<it>`` is the index of the last completed iteration, as in
  its ``model_<it>.pt``), ``interrupted``/``interrupt_signal`` are set and :meth:`learn` returns. A second signal
  stops at once and saves nothing.
- :meth:`learn` with no argument runs up to ``max_iterations`` iterations in total, so a resumed run finishes the
  original one (rsl_rl's ``learn(n)`` runs n more, and restarts at the saved iteration's index, repeating it).
- :meth:`load` reads with ``weights_only=True`` and raises
  :class:`~isaaclab_diffsim.rl.checkpoints.CheckpointError` for missing, truncated, corrupt or foreign files.

- Multi-process runs use rsl_rl's own support (parameter broadcast, gradient averaging, normaliser all-reduce,
  logging on rank 0 only). When the caller has already initialised ``torch.distributed`` (``scripts/train.py
  --distributed``, gloo on CPU or nccl on CUDA), that process group is used; otherwise rsl_rl initialises nccl from
  torchrun's variables as it does by itself. A signal held on any rank stops every rank after the same iteration.

Checkpoints also carry the env cfg (``env_cfg``) and the agent cfg (``cfg``) as plain data, so
``scripts/export.py`` can rebuild the policy's env, and :func:`load_ppo_runner` the networks of a run that
continued a SHAC checkpoint (``agent.warm_start``, :mod:`.ppo_warm_start`). They hold no env or RNG state, so a
resumed PPO run is not bit for bit the uninterrupted one.
"""

from __future__ import annotations

import copy
import importlib.metadata
import os

import torch
from rsl_rl.runners import OnPolicyRunner

from . import distributed, ppo_warm_start
from .checkpoints import checkpoint_error, env_cfg_dict, load_checkpoint
from .interrupts import InterruptGuard, TrainingInterrupted


class DiffOnPolicyRunner(OnPolicyRunner):
    """:class:`rsl_rl.runners.OnPolicyRunner` that stops cleanly on interrupts and finishes resumed runs."""

    CHECKPOINT_KEYS = ("optimizer_state_dict", "iter")
    """Keys every rsl_rl PPO checkpoint has."""

    def __init__(self, env, train_cfg: dict, *args, **kwargs):
        self.agent_cfg_dict = copy.deepcopy(train_cfg)
        """The agent cfg as given (rsl_rl adds keys to ``self.cfg``): what checkpoints store as ``cfg``."""
        super().__init__(env, train_cfg, *args, **kwargs)
        self.completed_iterations = 0
        """Iterations whose update has been applied (rsl_rl's ``current_learning_iteration`` is the last one's
        index)."""
        self.interrupted = False
        self.interrupt_signal: int | None = None
        self.last_checkpoint: str | None = None

    def _configure_multi_gpu(self) -> None:
        """rsl_rl's multi-GPU setup, on the caller's process group if one is initialised (rsl_rl alone would require
        ``cuda:<LOCAL_RANK>`` and initialise nccl itself)."""
        if not distributed.is_multi_process():
            super()._configure_multi_gpu()
            return
        self.gpu_world_size, self.gpu_global_rank = distributed.world_size(), distributed.rank()
        self.gpu_local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.is_distributed = True
        self.cfg["multi_gpu"] = {
            "global_rank": self.gpu_global_rank,
            "local_rank": self.gpu_local_rank,
            "world_size": self.gpu_world_size,
        }
        device = torch.device(self.device)
        if device.type == "cuda" and device != torch.device(f"cuda:{self.gpu_local_rank}"):
            raise ValueError(f"device {self.device!r} is not this rank's GPU cuda:{self.gpu_local_rank}")

    def learn(self, num_learning_iterations: int | None = None, init_at_random_ep_len: bool = False) -> None:
        """Train up to ``max_iterations`` iterations in total (default), or ``num_learning_iterations`` more."""
        total = (
            int(self.cfg["max_iterations"])
            if num_learning_iterations is None
            else (self.completed_iterations + int(num_learning_iterations))
        )
        remaining = total - self.completed_iterations
        if remaining <= 0:
            print(f"[PPO] nothing to do: {self.completed_iterations} of {total} iterations done")
            return
        self.current_learning_iteration = self.completed_iterations
        self.interrupted, self.interrupt_signal = False, None
        log = self.logger.log

        def log_then_check(*args, **kwargs):
            log(*args, **kwargs)  # the iteration's update is applied: it is complete
            self.completed_iterations = self.current_learning_iteration + 1
            if distributed.is_multi_process():  # every rank stops after the same iteration
                signum = distributed.any_rank(guard.pending or 0, self.device)
                if signum and guard.pending is None:
                    guard.pending = signum
            guard.raise_if_pending()

        self.logger.log = log_then_check
        try:
            with InterruptGuard() as guard:
                super().learn(remaining, init_at_random_ep_len=init_at_random_ep_len)
        except TrainingInterrupted as intr:
            self._on_interrupt(intr)
        finally:
            self.logger.log = log

    def _on_interrupt(self, intr: TrainingInterrupted) -> None:
        self.interrupted, self.interrupt_signal = True, intr.signum
        if intr.forced:
            print(f"[PPO] stopped by {intr}: nothing saved (the iteration was not finished)", flush=True)
            return
        if self.logger.writer is None or self.completed_iterations == 0:
            print(f"[PPO] interrupted ({intr}) after {self.completed_iterations} iterations; nothing saved", flush=True)
            return
        it = self.completed_iterations - 1
        path = os.path.join(self.logger.log_dir, f"model_{it}_interrupted.pt")
        self.save(path)
        self.logger.stop_logging_writer()
        print(
            f"[PPO] interrupted ({intr}): saved iteration {it} ({self.completed_iterations} done) to {path}", flush=True
        )

    def save(self, path: str, infos: dict | None = None) -> None:
        """rsl_rl's checkpoint, written to ``<path>.tmp`` and renamed (never seen half written)."""
        saved = self.alg.save()
        saved["iter"] = self.current_learning_iteration
        saved["infos"] = infos
        saved["cfg"] = self.agent_cfg_dict
        saved["env_cfg"] = env_cfg_dict(getattr(self.env, "unwrapped", self.env))
        torch.save(saved, path + ".tmp")
        os.replace(path + ".tmp", path)
        self.logger.save_model(path, self.current_learning_iteration)
        self.last_checkpoint = path

    def load(self, path: str, load_cfg: dict | None = None, strict: bool = True, map_location: str | None = None):
        """Load an rsl_rl checkpoint (clear errors for bad files); training continues after its iteration."""
        loaded = load_checkpoint(path, self.CHECKPOINT_KEYS, "rsl_rl PPO", map_location=map_location)
        try:
            load_iteration = self.alg.load(loaded, load_cfg, strict)
        except (RuntimeError, KeyError, ValueError) as err:
            first = str(err).strip().splitlines()[0]
            raise checkpoint_error(path, f"does not fit this runner's networks: {first}") from err
        if load_iteration:
            self.current_learning_iteration = int(loaded["iter"])
            self.completed_iterations = int(loaded["iter"]) + 1
        self.last_checkpoint = path
        return loaded.get("infos")

    def act_policy(self, device: str | None = None):
        """Deterministic ``policy(obs) -> actions`` on raw observations, clipped as the wrapper fed the env."""
        policy = self.get_inference_policy(device=device)
        clip = self.env.clip_actions

        def act(obs):
            a = policy({"policy": obs})
            return a if clip is None else a.clamp(-clip, clip)

        return act

    def deploy_actor(self) -> torch.nn.Module:
        """The deterministic actor (observation normaliser + MLP) as a CPU TorchScript module, for the bundle."""
        return self.alg.get_policy().as_jit().to("cpu").eval()


def make_ppo_runner(env, agent_cfg, log_dir: str | None, device: str) -> DiffOnPolicyRunner:
    """A :class:`DiffOnPolicyRunner` on a DiffSim direct env (rsl_rl-wrapped with the agent cfg's action clip)."""
    from isaaclab.utils import to_dict
    from isaaclab_rl.rsl_rl import handle_deprecated_rsl_rl_cfg

    from ..envs import DiffEnvRslRlWrapper

    agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, importlib.metadata.version("rsl-rl-lib"))
    warm = getattr(agent_cfg, "warm_start", None)
    shac_state = None
    if warm:
        shac_state = ppo_warm_start.load_shac_checkpoint(warm)
        ppo_warm_start.shac_shaped_models(agent_cfg, shac_state)
    wrapped = DiffEnvRslRlWrapper(env, clip_actions=agent_cfg.clip_actions)
    runner = DiffOnPolicyRunner(wrapped, to_dict(agent_cfg), log_dir=log_dir, device=device)
    runner.logger.git_status_repos = []
    if shac_state is not None:
        ppo_warm_start.load_shac_weights(runner.alg, shac_state, warm)
        print(f"[PPO] actor, critic, log-std and observation statistics from the SHAC checkpoint {warm}", flush=True)
    return runner


def load_ppo_runner(env, agent_cfg, checkpoint: str, device: str) -> DiffOnPolicyRunner:
    """A runner holding the PPO ``checkpoint``, its networks built as the checkpoint's stored cfg names them (a
    policy continued from SHAC loads with the task's registered agent cfg)."""
    state = load_checkpoint(checkpoint, DiffOnPolicyRunner.CHECKPOINT_KEYS, "rsl_rl PPO", map_location="cpu")
    agent_cfg = agent_cfg.copy()
    if hasattr(agent_cfg, "warm_start"):
        agent_cfg.warm_start = None
    ppo_warm_start.checkpoint_models(agent_cfg, state)
    runner = make_ppo_runner(env, agent_cfg, log_dir=None, device=device)
    runner.load(checkpoint, map_location=device)
    return runner
