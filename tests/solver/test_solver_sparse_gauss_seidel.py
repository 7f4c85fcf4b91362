"""The solver's fast paths against their dense / fixed-sweep definitions:

- the branch-sparse LTL factorisation H = L^T L and the chain-sparse Delassus G = J H^-1 J^T equal the dense
  float64 linear algebra on the same H, h and J (ANYmal C, and a tree with BALL, FIXED and REVOLUTE branches);
- Gauss-Seidel's early exit stops a resting robot's sweeps well below the maximum, at a residual under the
  tolerance, and moves the result by no more than the tolerance allows; tolerance 0 runs every sweep;
- the warm start reaches the cold start's impulses to tolerance in fewer sweeps, and is deterministic;
- the unrolled adjoint ignores both (its sweeps are what reverse mode replays).
"""

import newton
import numpy as np
import pytest
import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.solver import DEFAULT_TOLERANCE, SolverMoreauGS

DT = 0.005


def branched_tree_model():
    """Free base with two branches: ball joint + revolute, and revolute + fixed + revolute; spheres at the tips."""
    b = newton.ModelBuilder()
    b.add_ground_plane()
    inertia = wp.mat33(0.01, 0.0, 0.0, 0.0, 0.02, 0.0, 0.0, 0.0, 0.015)
    base = b.add_link(xform=wp.transform((0.0, 0.0, 0.5), wp.quat_identity()), mass=5.0, inertia=inertia)
    b.add_shape_box(base, hx=0.2, hy=0.1, hz=0.05)
    root = b.add_joint_free(base)

    def link(parent, offset, mass):
        body = b.add_link(mass=mass, inertia=wp.mat33(0.002, 0.0, 0.0, 0.0, 0.002, 0.0, 0.0, 0.0, 0.001))
        return body, wp.transform(offset, wp.quat_identity())

    a1, x = link(base, (0.2, 0.0, 0.0), 1.0)
    j1 = b.add_joint_ball(base, a1, parent_xform=x)
    a2, x = link(a1, (0.0, 0.0, -0.2), 0.5)
    j2 = b.add_joint_revolute(a1, a2, parent_xform=x, axis=newton.Axis.Y)
    b.add_shape_sphere(a2, xform=wp.transform((0.0, 0.0, -0.2), wp.quat_identity()), radius=0.03)
    c1, x = link(base, (-0.2, 0.0, 0.0), 1.0)
    j3 = b.add_joint_revolute(base, c1, parent_xform=x, axis=newton.Axis.X)
    c2, x = link(c1, (0.0, 0.0, -0.1), 0.3)
    j4 = b.add_joint_fixed(c1, c2, parent_xform=x)
    c3, x = link(c2, (0.0, 0.0, -0.1), 0.5)
    j5 = b.add_joint_revolute(c2, c3, parent_xform=x, axis=newton.Axis.Y)
    b.add_shape_sphere(c3, xform=wp.transform((0.0, 0.0, -0.2), wp.quat_identity()), radius=0.03)
    b.add_articulation([root, j1, j2, j3, j4, j5])
    return b.finalize(device="cpu")


def dense_blocks(solver, art):
    """(H, h, J, G, acc, c_free, L) of articulation ``art`` from the last step's scratch, float64."""
    lay, sc = solver.layout, solver._last
    topo = lay.topo
    n = int(topo.art_ndof.numpy()[art])
    m = 3 * int(topo.art_ncand.numpy()[art])
    d0, c0 = int(topo.art_dof_start.numpy()[art]), int(topo.art_cand_start.numpy()[art])
    ho, jo, go = (int(getattr(topo, f"art_{k}_off").numpy()[art]) for k in "hjg")

    def block(arr, off, rows, cols):
        return arr.numpy()[off : off + rows * cols].reshape(rows, cols).astype(np.float64)

    return (
        block(sc.H, ho, n, n),
        sc.hvec.numpy()[d0 : d0 + n].astype(np.float64),
        block(sc.J, jo, m, n),
        block(sc.G, go, m, m),
        sc.acc.numpy()[d0 : d0 + n].astype(np.float64),
        sc.c_free.numpy()[3 * c0 : 3 * c0 + m].astype(np.float64),
        block(sc.L, ho, n, n),
    )


def check_against_dense(model, qd, tree_entries):
    solver = SolverMoreauGS(model, contact_model="hard", margin=1.0)  # every candidate active: full G
    s0, s1 = model.state(), model.state()
    s0.joint_qd.assign(qd.astype(np.float32))
    solver.step(s0, s1, None, None, DT)
    for art in range(solver.layout.articulation_count):
        H, h, J, G, acc, c_free, L = dense_blocks(solver, art)
        n = H.shape[0]
        # L is lower triangular with nonzeros only on root paths: no fill-in
        assert np.all(L[~tree_entries] == 0.0)
        np.testing.assert_allclose(L.T @ L, H, rtol=0, atol=2e-6 * np.abs(H).max())
        np.testing.assert_allclose(acc, np.linalg.solve(H, h), rtol=0, atol=2e-6 * np.abs(acc).max())
        G_dense = J @ np.linalg.solve(H, J.T)
        np.testing.assert_allclose(G, G_dense, rtol=0, atol=2e-6 * np.abs(G_dense).max())
        assert np.array_equal(G, G.T)
        v = qd[:n].astype(np.float64) if art == 0 else None
        if v is not None:
            np.testing.assert_allclose(c_free, J @ (v + DT * acc), rtol=0, atol=1e-5 * max(np.abs(c_free).max(), 1.0))
        # the dense H has exactly the tree's pattern
        assert np.all(H[~(tree_entries | tree_entries.T)] == 0.0)


def tree_pattern(parents):
    """Boolean n x n: (k, i) with i == k or i an ancestor of k, from each dof's parent dof."""
    n = len(parents)
    pat = np.zeros((n, n), dtype=bool)
    for k in range(n):
        i = k
        while i >= 0:
            pat[k, i] = True
            i = parents[i]
    return pat


def test_sparse_factorisation_matches_dense_on_anymal():
    model, _ = build_anymal_c_model(2, device="cpu", base_height=0.55)
    qd = np.random.default_rng(0).normal(size=model.joint_dof_count)
    # floating base (a chain of 6 dofs), then four legs of 3 dofs hanging below the base's last dof
    parents = [-1, 0, 1, 2, 3, 4] + [p for leg in range(4) for p in (5, 6 + 3 * leg, 7 + 3 * leg)]
    check_against_dense(model, qd, tree_pattern(parents))


def test_sparse_factorisation_matches_dense_on_branched_tree():
    model = branched_tree_model()
    qd = np.random.default_rng(1).normal(size=model.joint_dof_count)
    # free base 0..5; ball 6..8 (a chain below 5); revolute 9 below 8; revolute 10 below 5; fixed (no dof);
    # revolute 11 below 10
    parents = [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 5, 10]
    assert model.joint_dof_count == len(parents)
    check_against_dense(model, qd, tree_pattern(parents))


def settled_anymal(worlds=4, steps=60, **kwargs):
    model, info = build_anymal_c_model(worlds, device="cpu", base_height=0.55)
    solver = SolverMoreauGS(model, **kwargs)
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
    return model, solver, s0


def step_from(model, solver, state):
    out = model.state()
    solver.step(state, out, None, None, DT)
    return out


def test_early_exit_on_resting_contact():
    model, solver, rest = settled_anymal(contact_model="hard")
    sweeps = solver.last_sweep_counts().numpy()
    assert sweeps.max() <= solver.iterations // 2, f"sweeps {sweeps}"
    assert solver.last_solve_residual().numpy().max() < DEFAULT_TOLERANCE
    # all 20 sweeps from the same state: the same motion to within what the tolerance leaves
    full = SolverMoreauGS(model, contact_model="hard", tolerance=0.0)
    a = step_from(model, solver, rest)
    p_early = solver.last_contact_impulses().numpy().copy()
    b = step_from(model, full, rest)
    assert np.all(full.last_sweep_counts().numpy() == full.iterations)
    np.testing.assert_allclose(p_early, full.last_contact_impulses().numpy(), atol=1e-4)
    np.testing.assert_allclose(a.joint_qd.numpy(), b.joint_qd.numpy(), atol=1e-4)


def test_warm_start_reaches_the_cold_solution_in_fewer_sweeps():
    model, cold, rest = settled_anymal(contact_model="smoothed")
    warm = SolverMoreauGS(model, contact_model="smoothed", warm_start=True)
    prev = step_from(model, warm, rest)  # the warm solver's previous step ends in ``prev``
    cold_sweeps = warm_sweeps = 0
    for _ in range(10):
        nxt_cold = step_from(model, cold, prev)
        p_cold = cold.last_contact_impulses().numpy().copy()
        nxt_warm = step_from(model, warm, prev)  # continues from its own output: warm-started
        p_warm = warm.last_contact_impulses().numpy()
        np.testing.assert_allclose(p_warm, p_cold, atol=2e-5)
        np.testing.assert_allclose(nxt_warm.joint_qd.numpy(), nxt_cold.joint_qd.numpy(), atol=1e-4)
        cold_sweeps += int(cold.last_sweep_counts().numpy().sum())
        warm_sweeps += int(warm.last_sweep_counts().numpy().sum())
        prev = nxt_warm
    assert warm_sweeps < cold_sweeps, (warm_sweeps, cold_sweeps)


def test_warm_start_is_deterministic():
    runs = []
    for _ in range(2):
        _, solver, state = settled_anymal(worlds=2, steps=30, warm_start=True)
        runs.append((state.joint_q.numpy().copy(), solver.last_contact_impulses().numpy().copy()))
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])


@pytest.mark.parametrize("grad", [False, True])
def test_unrolled_adjoint_runs_every_sweep(grad):
    model, info = build_anymal_c_model(2, device="cpu", base_height=0.55, requires_grad=grad)
    solver = SolverMoreauGS(model, adjoint="unrolled", warm_start=True, iterations=7)
    states = [model.state(requires_grad=grad) for _ in range(4)]
    tape = wp.Tape()
    with tape:
        for i in range(3):
            solver.step(states[i], states[i + 1], None, None, DT)
            assert np.all(solver.last_sweep_counts().numpy() == 7)
    if grad:
        states[-1].joint_q.grad.fill_(1.0)
        tape.backward()
        assert np.isfinite(states[0].joint_qd.grad.numpy()).all()


def test_invalid_tolerance_raises():
    model, _ = build_anymal_c_model(1, device="cpu")
    with pytest.raises(ValueError, match="tolerance"):
        SolverMoreauGS(model, tolerance=-1e-6)
