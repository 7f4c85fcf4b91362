"""``ShacLogger``: episode statistics, TensorBoard scalars and the console line of SHAC training.

Shaped like rsl_rl's ``Logger``: the runner calls :meth:`ShacLogger.process_env_step` after every env step and
:meth:`ShacLogger.log` once per iteration.
"""

from __future__ import annotations

import os
from collections import deque
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    from .shac import SHAC


class ShacLogger:
    """Returns and lengths of the last 100 finished episodes, the env's episode extras, and per iteration the
    TensorBoard scalars (with a ``log_dir``) and one console line (rank 0 only).

    Args:
        log_dir: Directory of the TensorBoard events; None writes none.
        num_envs: Envs of this rank.
        samples_per_iteration: Env steps of one iteration over all ranks (for the fps).
        rank: This process's rank.
        device: Device of the per-env episode sums.
    """

    def __init__(
        self, log_dir: str | None, num_envs: int, samples_per_iteration: int, rank: int, device: str | torch.device
    ):
        self.log_dir = log_dir
        self.samples_per_iteration = samples_per_iteration
        self.rank = rank
        self.device = torch.device(device)
        self.writer = None
        self.cur_return = torch.zeros(num_envs, device=self.device)
        self.cur_length = torch.zeros(num_envs, device=self.device)
        self.returns: deque[float] = deque(maxlen=100)
        self.lengths: deque[float] = deque(maxlen=100)
        self.ep_infos: list[dict] = []

    def init_logging_writer(self) -> None:
        """Open the TensorBoard writer (once; nothing without a log_dir)."""
        if self.log_dir is not None and self.writer is None:
            from torch.utils.tensorboard import SummaryWriter

            os.makedirs(self.log_dir, exist_ok=True)
            self.writer = SummaryWriter(log_dir=self.log_dir, flush_secs=10)

    @torch.no_grad()
    def process_env_step(
        self, rewards: torch.Tensor, terminated: torch.Tensor, truncated: torch.Tensor, extras: dict | None
    ) -> None:
        """Add one step's (detached) rewards to the running episodes, and collect the episode extras."""
        done = (terminated | truncated).to(self.device)
        self.cur_return += rewards.detach().to(self.device).reshape(-1)
        self.cur_length += 1
        if bool(done.any()):
            ids = done.nonzero(as_tuple=False).squeeze(-1)
            self.returns.extend(self.cur_return[ids].cpu().tolist())
            self.lengths.extend(self.cur_length[ids].cpu().tolist())
            self.cur_return[ids] = 0.0
            self.cur_length[ids] = 0.0
        if extras is not None and extras.get("episode"):
            self.ep_infos.append(extras["episode"])

    def episode_state(self) -> dict:
        """The running and finished episodes' statistics (what checkpoints store as ``episode_stats``)."""
        return {
            "cur_return": self.cur_return.clone(),
            "cur_length": self.cur_length.clone(),
            "returns": list(self.returns),
            "lengths": list(self.lengths),
        }

    def set_episode_state(self, ep: dict) -> None:
        """Restore :meth:`episode_state` (the collected episode extras are dropped)."""
        self.cur_return.copy_(ep["cur_return"])
        self.cur_length.copy_(ep["cur_length"])
        self.returns = deque(ep["returns"], maxlen=100)
        self.lengths = deque(ep["lengths"], maxlen=100)
        self.ep_infos = []

    def log(
        self,
        it: int,
        end_it: int,
        stats: dict[str, float],
        collect_time: float,
        learn_time: float,
        alg: SHAC,
        *,
        kappa: float | None,
        total_samples: int,
        aborted_samples: int,
        wall_time: float,
    ) -> None:
        """Write iteration ``it``'s scalars and print its progress line; the episode extras collected since the last
        call are averaged (and dropped)."""
        returns = [r for r in self.returns if np.isfinite(r)]
        mean_return = float(np.mean(returns)) if returns else None
        mean_length = float(np.mean(self.lengths)) if self.lengths else None
        fps = self.samples_per_iteration / max(collect_time + learn_time, 1e-9)
        ep_means = self._episode_extras_means()
        if self.writer is not None:
            perf = {
                "total_samples": total_samples,
                "aborted_samples": aborted_samples,
                "wall_time": wall_time,
                "fps": fps,
                "collection_time": collect_time,
                "learning_time": learn_time,
            }
            scalars = self._scalars(it, stats, ep_means, alg, kappa, mean_return, mean_length, perf)
            for tag, value, step in scalars:
                self.writer.add_scalar(tag, value, step)
        if self.rank == 0:
            print(
                self._progress_line(it, end_it, stats, alg, kappa, total_samples, mean_return, mean_length, fps),
                flush=True,
            )

    def _episode_extras_means(self) -> dict[str, float]:
        """Mean of each key of the collected episode extras (scalars or tensors); clears them."""
        means: dict[str, float] = {}
        for key in {k for info in self.ep_infos for k in info}:
            vals = []
            for info in self.ep_infos:
                if key not in info:
                    continue
                v = info[key]
                vals.append(v.detach().float().mean().item() if isinstance(v, torch.Tensor) else float(v))
            if vals:
                means[key] = float(np.mean(vals))
        self.ep_infos.clear()
        return means

    @staticmethod
    def _scalars(
        it: int,
        stats: dict[str, float],
        ep_means: dict[str, float],
        alg: SHAC,
        kappa: float | None,
        mean_return: float | None,
        mean_length: float | None,
        perf: dict,
    ) -> list[tuple[str, float, int]]:
        """(tag, value, step) of every TensorBoard scalar of iteration ``it``, in writing order."""
        out = [(key if "/" in key else f"Episode/{key}", v, it) for key, v in ep_means.items()]
        out.append(("Loss/actor", stats["actor_loss"], it))
        if stats["critic_loss"] is not None:  # None: no critic fit reported yet (it runs beside the next rollout)
            out.append(("Loss/critic", stats["critic_loss"], it))
        if "likelihood_ratio_loss" in stats:  # only with algorithm.likelihood_ratio_coef > 0
            out.append(("Loss/likelihood_ratio", stats["likelihood_ratio_loss"], it))
        for tag, key in (
            ("grad_norm", "grad_norm"),
            ("mean_std", "mean_std"),
            ("nonfinite_skipped", "nonfinite"),
            ("nonfinite_count", "nonfinite_count"),
            ("exploding_skipped", "exploding_skipped"),
            ("exploding_count", "exploding_count"),
        ):
            out.append((f"Policy/{tag}", stats[key], it))
        out += [("LR/actor", alg.actor_lr, it), ("LR/critic", alg.critic_lr, it)]
        if kappa is not None:
            out.append(("Env/kappa", kappa, it))
        out += [
            ("Train/mean_step_reward", stats["mean_step_reward"], it),
            ("Train/target_value_mean", stats["target_value_mean"], it),
        ]
        if mean_return is not None:
            out += [
                ("Train/mean_reward", mean_return, it),
                ("Train/mean_reward/samples", mean_return, perf["total_samples"]),
                ("Train/mean_reward/time", mean_return, int(perf["wall_time"])),
            ]
        if mean_length is not None:
            out.append(("Train/mean_episode_length", mean_length, it))
        out += [(f"Perf/{key}", value, it) for key, value in perf.items()]
        out += [(f"Perf/{key}", stats[key], it) for key in ("forward_time", "backward_time", "update_time")]
        return out

    @staticmethod
    def _progress_line(
        it: int,
        end_it: int,
        stats: dict[str, float],
        alg: SHAC,
        kappa: float | None,
        total_samples: int,
        mean_return: float | None,
        mean_length: float | None,
        fps: float,
    ) -> str:
        """The console line of iteration ``it`` ("-" for the return and length while no episode has finished)."""
        skip = f" | SKIPPED (non-finite, {alg.consecutive_nonfinite} in a row)" if stats["nonfinite"] else ""
        if stats["exploding_skipped"]:
            skip += f" | actor step skipped (gradient norm above {alg.cfg.max_actor_grad_norm:g})"
        ret_text = f"{mean_return:.3f}" if mean_return is not None else "-"
        len_text = f"{mean_length:.1f}" if mean_length is not None else "-"
        kappa_text = f" | kappa {kappa:.4g}" if kappa is not None else ""
        critic_text = f"{stats['critic_loss']:.4f}" if stats["critic_loss"] is not None else "-"
        return (
            f"[SHAC] it {it + 1}/{end_it} | samples {total_samples} | return {ret_text}"
            f" | ep_len {len_text} | actor {stats['actor_loss']:.4f} | critic {critic_text}"
            f" | grad {stats['grad_norm']:.3g} | std {stats['mean_std']:.3f} | {fps:.0f} fps | fwd"
            f" {stats['forward_time']:.2f} s bwd {stats['backward_time']:.2f} s upd {stats['update_time']:.2f} s"
            f"{kappa_text}{skip}"
        )

    def flush(self) -> None:
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
