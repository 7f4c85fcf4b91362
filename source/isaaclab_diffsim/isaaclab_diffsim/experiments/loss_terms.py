"""Which reward terms move the actor's weights: the SHAC actor loss of a horizon split into one part per reward term
and the rest (the critic's values at the ends of the segments), and per input group of the actor's first layer
(flat-MDP terms, height scan) each part's gradient measured against the whole and against the weights.

The SHAC actor loss of one horizon of h steps over N envs is linear in the rewards::

    L = -1/(h N) sum_t sum_n c_tn r_tn  +  L_V,    c_tn = gamma^k,  k the steps since env n's segment began

(the discount restarts after every done), so with r = sum_k r^(k) the weighted reward terms of the env,
L = sum_k L^(k) + L_V, and the gradient splits the same way.
"""

from __future__ import annotations

import torch

VALUES = "values"
"""Name of the part of the loss that is not a reward term: gamma^(k+1) V(s) at the ends of the segments."""
SPLIT_FIELDS = ("norm", "share", "cosine", "radial")
"""Per part and input group: ||G_k||; <G_k, G> / ||G||^2 (the part's share of the whole gradient; the shares of
the parts add up to 1); the cosine of G_k and G; <G_k, W> / ||W|| (positive: a step down that part's gradient
shrinks the weights, negative: it grows them)."""


def reward_coefficients(done: torch.Tensor, gamma: float) -> torch.Tensor:
    """(T, N) coefficients c_tn = gamma^k of each step's reward in the SHAC actor loss, from the (T, N) done flags
    of the steps (terminated or truncated): k counts the steps since the env's segment began, and a segment ends
    with a done step."""
    coeff = torch.empty(done.shape, dtype=torch.float64)
    c = torch.ones(done.shape[1], dtype=torch.float64)
    for t in range(done.shape[0]):
        coeff[t] = c
        c = torch.where(done[t].cpu().bool(), torch.ones_like(c), c * gamma)
    return coeff


class RewardTermRecorder:
    """Inside the block, each env step's weighted reward terms (graph kept), from the env's ``_get_rewards``, and
    the done flags the algorithm's ``process_env_step`` receives."""

    def __init__(self, env, alg):
        self.env, self.alg = env, alg
        self.terms: list[dict[str, torch.Tensor]] = []
        self.rewards: list[torch.Tensor] = []
        self.done: list[torch.Tensor] = []

    def _get_rewards(self):
        reward, terms = type(self.env)._get_rewards(self.env)
        self.terms.append(dict(terms))
        return reward, terms

    def _process_env_step(self, obs, rewards, terminated, truncated, extras):
        self.rewards.append(rewards)
        self.done.append((terminated.bool() | truncated.bool()).detach().reshape(-1).cpu())
        return type(self.alg).process_env_step(self.alg, obs, rewards, terminated, truncated, extras)

    def __enter__(self):
        self.env._get_rewards = self._get_rewards
        self.alg.process_env_step = self._process_env_step
        return self

    def __exit__(self, *exc):
        del self.env._get_rewards
        del self.alg.process_env_step


def term_losses(
    terms: list[dict[str, torch.Tensor]], done: list[torch.Tensor], gamma: float, rewards: list[torch.Tensor]
) -> dict[str, torch.Tensor]:
    """Per reward term k, its part of the SHAC actor loss -1/(h N) sum_t sum_n c_tn r^(k)_tn (h the steps given,
    N the envs; ``terms``, ``done`` and ``rewards`` per step). A term missing at some step counts as 0 there.
    ValueError when a step's terms do not add up to its reward (the split would miss a part of the loss)."""
    if not terms or not len(terms) == len(done) == len(rewards):
        raise ValueError(
            f"need the same steps' terms, done flags and rewards, got {len(terms)}, {len(done)}, {len(rewards)}"
        )
    for t, (step, r) in enumerate(zip(terms, rewards)):
        err = float((sum(step.values()).detach().reshape(-1) - r.detach().reshape(-1)).abs().max())
        if err > 1e-5 * (1.0 + float(r.detach().abs().max())):
            raise ValueError(f"step {t}: the reward terms add up to the reward only to {err:.3g}")
    coeff = reward_coefficients(torch.stack([d.reshape(-1) for d in done]), gamma)
    horizon, num_envs = coeff.shape
    names = list(dict.fromkeys(k for step in terms for k in step))
    out = {}
    for name in names:
        total = None
        for t, step in enumerate(terms):
            if name not in step:
                continue
            r = step[name].reshape(-1)
            part = (coeff[t].to(device=r.device, dtype=r.dtype) * r).sum()
            total = part if total is None else total + part
        out[name] = -total / (horizon * num_envs)
    return out


def gradient_split(parts: dict[str, torch.Tensor], weight: torch.Tensor, groups: dict[str, slice]) -> dict:
    """Per input group (columns of ``weight``) and part: :data:`SPLIT_FIELDS` of the part's gradient ``parts[k]``
    (same shape as ``weight``) against the sum over the parts and against the weights."""
    total = sum(parts.values())
    out = {}
    for group, cols in groups.items():
        g, w = total[:, cols].double(), weight[:, cols].double()
        g2, wn = float(g.square().sum()), float(w.norm())
        rec = {}
        for name, grad in parts.items():
            gk = grad[:, cols].double()
            nk = float(gk.norm())
            dot = float((gk * g).sum())
            rec[name] = {
                "norm": nk,
                "share": dot / g2 if g2 > 0 else 0.0,
                "cosine": dot / (nk * g2**0.5) if nk > 0 and g2 > 0 else 0.0,
                "radial": float((gk * w).sum()) / wn if wn > 0 else 0.0,
            }
        out[group] = {"norm": g2**0.5, "weight_norm": wn, "parts": rec}
    return out


def alignment(parts: dict[str, torch.Tensor], reference: str) -> dict:
    """Each part's gradient (all of the first layer) projected on the ``reference`` part's direction: ``along``,
    <G_k, G_ref> / ||G_ref|| (negative: a step down G_k undoes the reference's step; the parts' values add up to
    the whole gradient's), and ``cosine``. Which parts hold back what one reward term asks for, e.g. the tracking
    term: at a converged policy the whole is about 0 along it, so the parts against it are what balance it.
    KeyError naming the parts for an unknown ``reference``."""
    if reference not in parts:
        raise KeyError(f"alignment: no part {reference!r} (parts: {sorted(parts)})")
    ref = parts[reference].double().flatten()
    rn = float(ref.norm())
    out = {}
    for name, grad in [*parts.items(), ("whole", sum(parts.values()))]:
        g = grad.double().flatten()
        along = float(g @ ref) / rn if rn > 0 else 0.0
        gn = float(g.norm())
        out[name] = {"along": along, "cosine": along / gn if gn > 0 else 0.0}
    return out


def alignment_per_horizon(horizons: list[dict[str, torch.Tensor]], reference: str) -> dict:
    """:func:`alignment` within each horizon (each part on that horizon's ``reference`` gradient), summarised per
    part over the horizons: ``per_horizon`` (its ``along`` in each, 0 where the part is absent), ``median`` (torch's:
    the lower middle value for an even count) and ``against`` (the share of the horizons where it is negative). One
    horizon whose gradient explodes through contact (norms 100-1000 times the others') decides the projection of the
    summed gradients; the median over the horizons is not moved by it."""
    if not horizons:
        raise ValueError("alignment_per_horizon: no horizons")
    each = [alignment(parts, reference) for parts in horizons]
    out = {}
    for name in dict.fromkeys(k for a in each for k in a):
        along = [a[name]["along"] if name in a else 0.0 for a in each]
        out[name] = {
            "per_horizon": along,
            "median": float(torch.tensor(along, dtype=torch.float64).median()),
            "against": sum(v < 0 for v in along) / len(along),
        }
    return out
