"""Throughput of SolverMoreauGS on ANYmal C standing on a rough terrain mesh against the flat ground plane.

Both scenes are built and measured in the same run, world count by world count (the plane right before the terrain,
so the ratio is paired against the drifting load of a shared machine). Every world's robot stands at the origin;
only the four foot spheres collide. The terrain is a static triangle mesh (GeoType.MESH on body -1):

  numpy     a random uniform height grid (terrain_scenes.rough_terrain_mesh): --size m square, --cell m cells,
            heights uniform in +-amplitude (Isaac Lab's "random_uniform" rough terrain, built without Isaac Lab)
  isaaclab  Isaac Lab's terrain generator (isaaclab.terrains, kitless: ROUGH_TERRAINS_CFG on --isaaclab-grid
            sub-terrains; pyramids, stairs, boxes, random rough; nothing is downloaded)

Columns: solver steps x worlds per wall second and per CPU second (Warp's CPU kernels run in the calling thread, so
CPU time is robust to other load on a shared machine), each the fastest of >= 3 repetitions of --steps steps lasting
>= --min-time s, after --settle-time simulated seconds that compile and let the robots land and stand; the terrain /
plane ratios; the terrain query's thread CPU time per step, its share of the step and per candidate (every launch
synchronised and timed); and the base height at the end. A
forward+backward horizon (--horizon steps on a wp.Tape, then backward) is timed at the first world count. Usage:

    WARP_CACHE_PATH=.cache/warp .venv/bin/python scripts/benchmarks/terrain_throughput.py [--quick]
"""

from __future__ import annotations

import argparse
import collections
import os
import time

import newton
import numpy as np
import warp as wp
from solver_throughput import BASE_HEIGHT, FRAME_DT, launch_timer, timed

from isaaclab_diffsim.assets.anymal_c import ANYMAL_C_ROBOT_CFG
from isaaclab_diffsim.assets.robot_builder import add_robot
from isaaclab_diffsim.solver import SolverMoreauGS
from isaaclab_diffsim.solver import terrain_scenes as ts


def isaaclab_terrain(grid: int) -> newton.Mesh:
    """Isaac Lab's rough-terrain generator (grid x grid sub-terrains, no curriculum, no cache) as a Newton mesh."""
    from isaaclab.terrains import TerrainGenerator
    from isaaclab.terrains.config.rough import ROUGH_TERRAINS_CFG

    cfg = ROUGH_TERRAINS_CFG.replace(num_rows=grid, num_cols=grid, curriculum=False, use_cache=False)
    mesh = TerrainGenerator(cfg=cfg, device="cpu").terrain_mesh
    return newton.Mesh(
        vertices=np.asarray(mesh.vertices, np.float32),
        indices=np.asarray(mesh.faces, np.int32).ravel(),
        compute_inertia=False,
        is_solid=False,
    )


def anymal_model(worlds: int, terrain: newton.Mesh | None, device, requires_grad=False):
    """W ANYmal C worlds with their feet just above the ground under the origin (the plane, or ``terrain``)."""
    ground = 0.0
    if terrain is not None:
        v = np.asarray(terrain.vertices)
        ground = float(v[np.linalg.norm(v[:, :2], axis=1) < 0.6, 2].max())
    one = newton.ModelBuilder()
    xform = wp.transform((0.0, 0.0, BASE_HEIGHT + ground), wp.quat_identity())
    add_robot(one, ANYMAL_C_ROBOT_CFG, xform)
    builder = newton.ModelBuilder()
    builder.replicate(one, worlds)
    cfg = builder.default_shape_cfg.copy()
    cfg.mu = 1.0
    if terrain is None:
        builder.add_ground_plane(cfg=cfg)
    else:
        builder.add_shape_mesh(-1, mesh=terrain, cfg=cfg)
    model = builder.finalize(device=device, requires_grad=requires_grad)
    newton.eval_fk(model, model.joint_q, model.joint_qd, model)
    return model


class Runner:
    def __init__(self, worlds, terrain, device, contact_model):
        self.device = device
        self.model = anymal_model(worlds, terrain, device)
        self.solver = SolverMoreauGS(self.model, contact_model=contact_model)
        self.control = self.model.control()
        self.s0, self.s1 = self.model.state(), self.model.state()
        self.base = np.arange(worlds) * (self.model.body_count // worlds)

    def advance(self, n):
        for _ in range(n):
            self.solver.step(self.s0, self.s1, self.control, None, FRAME_DT)
            self.s0, self.s1 = self.s1, self.s0

    def steps_per_second(self, steps, min_time, settle_steps):
        """(per wall second, per CPU second) of ``steps``-step chunks, each the fastest chunk."""
        self.advance(settle_steps)  # compiles, lands and settles the robots: both scenes timed standing
        wp.synchronize_device(self.device)
        cpu = []

        def chunk():
            c0 = time.process_time()
            self.advance(steps)
            wp.synchronize_device(self.device)
            cpu.append(time.process_time() - c0)

        return steps / timed(chunk, self.device, min_time), steps / min(cpu)

    def kernel_times(self, steps):
        """Thread CPU seconds per step of each kernel (the terrain query is terrain_frames.contact_frames), every
        launch synchronised and timed (solver_throughput.launch_timer)."""
        totals, counts = collections.defaultdict(float), collections.Counter()
        with launch_timer(totals, counts, time.thread_time):
            self.advance(steps)
        return {k: v / steps for k, v in totals.items()}

    def base_z(self):
        z = self.s0.body_q.numpy()[self.base, 2]
        return f"{z.min():.3f}..{z.max():.3f}"


def forward_backward(worlds, terrain, device, contact_model, horizon, min_time):
    """Seconds of one taped horizon plus its backward; whether d(sum q_T)/d q_0 is finite."""
    model = anymal_model(worlds, terrain, device)
    solver = SolverMoreauGS(model, contact_model=contact_model)
    states = [model.state(requires_grad=True) for _ in range(horizon + 1)]
    finite = []

    def run():
        tape = wp.Tape()
        with tape:
            for i in range(horizon):
                solver.step(states[i], states[i + 1], None, None, FRAME_DT)
        states[-1].joint_q.grad.fill_(1.0)
        tape.backward()
        finite.append(bool(np.isfinite(states[0].joint_q.grad.numpy()).all()))
        tape.reset()

    run()  # compiles the adjoints
    return timed(run, device, min_time), all(finite)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--worlds", default=None, help='comma list (default "64,256,1024", +4096 on cuda)')
    p.add_argument("--models", default="smoothed,hard", help="contact models")
    p.add_argument("--terrain", choices=("numpy", "isaaclab"), default="numpy")
    p.add_argument("--size", type=float, default=20.0, help="numpy terrain: side [m]")
    p.add_argument("--cell", type=float, default=0.1, help="numpy terrain: cell [m]")
    p.add_argument("--amplitude", type=float, default=0.03, help="numpy terrain: height amplitude [m]")
    p.add_argument("--isaaclab-grid", type=int, default=4, help="isaaclab terrain: sub-terrains per side")
    p.add_argument("--steps", type=int, default=50, help="forward steps per timed chunk")
    p.add_argument("--horizon", type=int, default=16, help="steps of the forward+backward horizon (0: skip)")
    p.add_argument("--min-time", type=float, default=2.0, help="minimum wall seconds per measurement")
    p.add_argument("--settle-time", type=float, default=0.5, help="simulated seconds before timing")
    p.add_argument("--quick", action="store_true", help="tiny run: 4,16 worlds, short measurements")
    args = p.parse_args()

    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    device = wp.get_device(args.device)
    if args.worlds is None:
        args.worlds = "4,16" if args.quick else "64,256,1024" + (",4096" if device.is_cuda else "")
    if args.quick:
        args.steps, args.horizon, args.min_time = min(args.steps, 5), min(args.horizon, 4), min(args.min_time, 0.2)
        args.settle_time = min(args.settle_time, 0.02)
    settle = max(1, round(args.settle_time / FRAME_DT))
    worlds = [int(w) for w in args.worlds.split(",")]
    models = [m for m in args.models.split(",") if m]
    t0 = time.perf_counter()
    if args.terrain == "numpy":
        terrain = ts.rough_terrain_mesh(args.size, args.cell, args.amplitude)
        what = f"numpy random grid {args.size:g} m, {args.cell:g} m cells, +-{args.amplitude:g} m"
    else:
        terrain = isaaclab_terrain(args.isaaclab_grid)
        what = f"Isaac Lab ROUGH_TERRAINS_CFG {args.isaaclab_grid}x{args.isaaclab_grid} sub-terrains"
    ntri = len(terrain.indices) // 3
    print(
        f"device {device}; terrain: {what} ({ntri} triangles, built in {time.perf_counter() - t0:.1f} s); "
        f"dt {FRAME_DT * 1e3:g} ms; load average {os.getloadavg()[0]:.2f}\n"
    )
    print(
        f"{'':>15} {'steps*W per wall s':>34} | {'steps*W per CPU s':>34} | terrain query (thread CPU)\n"
        f"{'contact':>9} {'W':>5} {'plane':>10} {'terrain':>10} {'ratio':>12} | {'plane':>10} {'terrain':>10} "
        f"{'ratio':>12} | {'us/step':>8} {'share':>6} {'ns/query':>8} | base z"
    )
    for cm in models:
        for W in worlds:
            plane = np.array(Runner(W, None, device, cm).steps_per_second(args.steps, args.min_time, settle)) * W
            r = Runner(W, terrain, device, cm)
            rough = np.array(r.steps_per_second(args.steps, args.min_time, settle)) * W
            kernels = r.kernel_times(args.steps)
            query_s, step_s = kernels.get("contact_frames", 0.0), sum(kernels.values())
            ratio = rough / plane
            print(
                f"{cm:>9} {W:>5} {plane[0]:>10.0f} {rough[0]:>10.0f} {ratio[0]:>12.2f} | {plane[1]:>10.0f} "
                f"{rough[1]:>10.0f} {ratio[1]:>12.2f} | {query_s * 1e6:>8.0f} {100 * query_s / step_s:>5.1f}% "
                f"{query_s * 1e9 / r.solver.layout.candidate_count:>8.0f} | {r.base_z()}",
                flush=True,
            )
    W, cm = worlds[-1], models[0]
    plane_k = Runner(W, None, device, cm)
    plane_k.advance(settle)
    rough_k = Runner(W, terrain, device, cm)
    rough_k.advance(settle)
    rows = [plane_k.kernel_times(args.steps), rough_k.kernel_times(args.steps)]
    print(f"\nper-kernel thread CPU ms per step, {cm}, {W} worlds: plane | terrain")
    for key in sorted(rows[1], key=lambda k: -rows[1][k]):
        print(f"  {key:>28} {rows[0].get(key, 0.0) * 1e3:>8.2f} | {rows[1][key] * 1e3:>8.2f}")
    if args.horizon > 0:
        W, cm = worlds[0], models[0]
        print(f"\nforward+backward, {cm}, {W} worlds, {args.horizon}-step horizon on a wp.Tape")
        plane_s, plane_ok = forward_backward(W, None, device, cm, args.horizon, args.min_time)
        rough_s, rough_ok = forward_backward(W, terrain, device, cm, args.horizon, args.min_time)
        print(
            f"  plane {plane_s * 1e3:.0f} ms (grad {'ok' if plane_ok else 'NaN'}), terrain {rough_s * 1e3:.0f} ms "
            f"(grad {'ok' if rough_ok else 'NaN'}), terrain/plane time {rough_s / plane_s:.2f}"
        )
    print(f"(total {time.perf_counter() - t0:.0f} s wall, load average now {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
