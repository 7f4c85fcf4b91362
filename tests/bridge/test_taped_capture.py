"""Differentiable steps through TapedStepper slots (DiffSimulator, capture_taped): forward and backward replayed from
graphs bitwise equal to the eager tape, slots handed back after the backward or with their outputs, re-captured
after a configuration change, and steps the graphs cannot express left eager."""

import gc

import pytest
import torch

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.bridge import DiffSimulator, live_records
from isaaclab_diffsim.bridge.physics_step import probe_substeps

H = 3  # policy steps per horizon


def pair(device, num_worlds=3, **solver_kwargs):
    """A slot-stepping and an eager simulator of two identical models (ANYmal C on smoothed contact)."""
    sims = []
    for capture in (True, False):
        model, _ = build_anymal_c_model(num_worlds=num_worlds, device=device, requires_grad=True)
        sims.append(DiffSimulator(model, capture_taped=capture, kappa=300.0, **solver_kwargs))
    return sims


def horizon(sim, seed: int, kappa=True):
    """One differentiable horizon from the default state with random targets and forces; returns every output, the
    contact impulses after each step, and the gradients of a loss on the last state."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    q0, qd0 = sim.default_state()
    dev = q0.device
    target = (q0 + 0.3 * torch.rand(q0.shape, generator=g).to(dev)).requires_grad_(True)
    force = (torch.rand(qd0.shape, generator=g).to(dev) - 0.5).requires_grad_(True)
    qd = qd0.clone().requires_grad_(True)
    kap = torch.tensor([250.0], device=dev, requires_grad=True) if kappa else None
    q, v, seen = q0, qd, []
    for _ in range(H):
        out = sim.step(q, v, target, joint_f=force, kappa=kap)
        q, v = out.joint_q, out.joint_qd
        seen += [t.detach().clone() for t in out] + [sim.last_contact_impulses()]
    (out.body_q[:, :3].sum() + v.square().sum()).backward()
    grads = [target.grad, force.grad, qd.grad] + ([kap.grad] if kappa else [])
    return seen, [g.clone() for g in grads]


def assert_equal_lists(a, b):
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        assert torch.equal(x, y), f"tensor {i}: max diff {(x - y).abs().max().item()}"


def test_replayed_steps_are_bitwise_the_eager_tape(device):
    graph, eager = pair(device)
    for seed in range(4):  # the first horizon captures, the later ones replay
        out_g, grad_g = horizon(graph, seed)
        out_e, grad_e = horizon(eager, seed)
        assert_equal_lists(out_g, out_e)
        assert_equal_lists(grad_g, grad_e)
        assert all(g.abs().sum() > 0 for g in grad_g[:3])
        assert seed > 0 or grad_g[3].abs().sum() > 0  # kappa's (later targets lift the feet out of its band)
    out_g, grad_g = horizon(graph, 9, kappa=False)  # the solver's kappa: another slot shape, captured anew
    out_e, grad_e = horizon(eager, 9, kappa=False)
    assert_equal_lists(out_g + grad_g, out_e + grad_e)
    assert eager.taped is None
    if graph.model.device.is_cpu:
        assert graph.taped.captures == 2 * H and graph.taped.replays == 3 * H
    else:  # CUDA: the slots are CPU-only, every step eager
        assert graph.taped.captures == graph.taped.replays == 0


def test_slots_are_handed_back_with_their_outputs(device):
    """Outputs dropped without a backward hand their slots back (reused, nothing kept alive); a backward hands its
    slot back at once."""
    graph, _ = pair(device)
    if not graph.model.device.is_cpu:
        pytest.skip("slots step on the CPU only")
    before = live_records()
    for _ in range(3):
        q, qd = graph.default_state()
        qd = qd.clone().requires_grad_(True)
        outs = []
        for _ in range(H):
            out = graph.step(q, qd)
            q, qd = out.joint_q, out.joint_qd
            outs.append(out)
        assert live_records() == before + H
        del out, outs, q, qd
        gc.collect()
        assert live_records() == before
    assert graph.taped.captures == H and graph.taped.replays == 2 * H
    assert sum(len(v) for v in graph.taped._free.values()) == H


def test_configuration_changes_recapture(device):
    """A solver setting changed between horizons is seen by the slots (re-captured, still bitwise the eager tape);
    notify_model_changed drops them."""
    graph, eager = pair(device)
    horizon(graph, 0)
    for sim in (graph, eager):
        sim.solver.iterations = 7
    assert_equal_lists(sum(horizon(graph, 1), []), sum(horizon(eager, 1), []))
    if graph.model.device.is_cpu:
        assert graph.taped.captures == 2 * H and graph.taped.replays == 0
    for sim in (graph, eager):
        sim.notify_model_changed(0)
    assert graph.taped._free == {}
    assert_equal_lists(sum(horizon(graph, 2), []), sum(horizon(eager, 2), []))


@pytest.mark.parametrize("parallel_backward", [True, False])
def test_sharded_slots_replay_the_shards_on_their_threads(device, parallel_backward):
    """With threads=2 each direction replays the shards' graphs at once (the backward's one after the other without
    parallel_backward): bitwise the one-thread eager tape."""
    if not str(device).startswith("cpu"):
        pytest.skip("threads shard CPU steps")
    model, _ = build_anymal_c_model(num_worlds=3, device=device, requires_grad=True)
    graph = DiffSimulator(model, capture_taped=True, kappa=300.0, threads=2, parallel_backward=parallel_backward)
    assert graph.solver.step_parts() == ("prepare", 0, 1, "kinematics")
    _, eager = pair(device)
    for seed in range(3):
        out_g, grad_g = horizon(graph, seed, kappa=False)
        out_e, grad_e = horizon(eager, seed, kappa=False)
        assert_equal_lists(out_g + grad_g, out_e + grad_e)
        assert all(g.abs().sum() > 0 for g in grad_g)
    assert graph.taped.captures == H and graph.taped.replays == 2 * H


@pytest.mark.parametrize("setting", ["threads", "warm_start", "probe"])
def test_steps_the_graphs_cannot_express_stay_eager(device, setting):
    """A differentiated kappa with sharded threads, warm starting and the substep probe step eagerly (and still
    bitwise the eager tape)."""
    if setting == "threads" and not str(device).startswith("cpu"):
        pytest.skip("threads shard CPU steps")
    kwargs = {"threads": {"threads": 2}, "warm_start": {"warm_start": True}, "probe": {}}[setting]
    graph, eager = pair(device, **kwargs)
    if setting == "probe":
        with probe_substeps() as probe:
            a = sum(horizon(graph, 3), [])
        assert len(probe.steps) == H
    else:
        a = sum(horizon(graph, 3), [])
    assert_equal_lists(a, sum(horizon(eager, 3), []))
    assert graph.taped.captures == graph.taped.replays == 0
