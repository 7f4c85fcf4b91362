"""ANYmal C standing on the contact models: the standing sink, the creep under the standing load, the stable dt.

    python scripts/experiments/penalty_standing.py                       # every setting, dt 5 ... 0.5 ms
    python scripts/experiments/penalty_standing.py --settings penalty:ahac_anymal --dts 0.002,0.001

One world, zero action: the joint PD drives (--kp, default the task's 80; kd 5) hold the default
pose from a 0.6 m start, for --duration seconds, sampled every 5 ms until the base falls below --fall_height (the
task's termination height) or the end; from --settle seconds on:
- stable: no NaN and, from 0.2 s on, all four feet in penetration (d < 0) at every sample (an explicit step that is
  too long makes the feet chatter off the ground);
- sink: the mean penetration -d of the four foot spheres [mm];
- creep: the mean horizontal speed of the four contact points [mm/s];
- fall: the time the base first falls below --fall_height [s] ("-": it stays up; a fall before --settle leaves
  sink and creep empty).
A setting is "model" or "penalty:<preset>" (PENALTY_PRESETS). Reported in docs/contact_solver.md "Penalty contact".
"""

from __future__ import annotations

import argparse

import newton
import numpy as np
import warp as wp

from isaaclab_diffsim.assets.anymal_c import build_anymal_c_model
from isaaclab_diffsim.solver import SolverMoreauGS

LANDED = 0.2
"""Seconds after which the feet must stay in the ground (the start's touchdown is over)."""


def make_solver(model, setting: str) -> SolverMoreauGS:
    """``"soft"`` -> SolverMoreauGS(contact_model="soft"); ``"penalty:ahac_anymal"`` -> the penalty model with that
    preset, one explicit step per dt."""
    name, _, preset = setting.partition(":")
    kwargs = {"penalty_preset": preset, "penalty_substeps": 1} if preset else {}  # the raw dt, no substeps
    return SolverMoreauGS(model, contact_model=name, **kwargs)


def contact_points(solver, state, contacts) -> tuple[np.ndarray, np.ndarray]:
    """World contact points (n, 3) and signed distances (n,) of the last step."""
    solver.update_contacts(contacts, state)
    n = int(contacts.rigid_contact_count.numpy()[0])
    return contacts.rigid_contact_point1.numpy()[:n].copy(), solver.last_contact_distances().numpy()[:n].copy()


def measure(setting: str, dt: float, duration: float, settle: float, fall_height: float, kp: float, kd: float):
    model, _ = build_anymal_c_model(num_worlds=1, device="cpu", kp=kp, kd=kd)
    solver = make_solver(model, setting)
    contacts = newton.Contacts(rigid_contact_max=solver.layout.candidate_count, soft_contact_max=0, device="cpu")
    s0, s1 = model.state(), model.state()
    every = max(int(round(0.005 / dt)), 1)
    times, points, sinks, stable, fall = [], [], [], True, None
    for i in range(int(round(duration / dt))):
        solver.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
        t = (i + 1) * dt
        if (i + 1) % every:
            continue
        z = float(s0.joint_q.numpy()[2])
        if z < fall_height:
            fall = t
            break
        if t < LANDED:
            continue
        x, d = contact_points(solver, s0, contacts)
        if not (np.all(np.isfinite(x)) and np.all(d < 0.0)):
            stable = False
            break
        if t < settle:
            continue
        times.append(t)
        points.append(x[:, :2])
        sinks.append(-d.mean())
    out = {"setting": setting, "dt_ms": 1e3 * dt, "stable": stable, "fall_s": fall}
    if stable and len(times) > 1:
        travel = np.linalg.norm(points[-1] - points[0], axis=1).mean()
        out.update(sink_mm=1e3 * float(np.mean(sinks)), creep_mm_s=1e3 * travel / (times[-1] - times[0]))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--settings", default="hard,soft,penalty:dflex_default,penalty:ahac_anymal")
    p.add_argument(
        "--dts", default="0.005,0.0025,0.002,0.0015,0.00125,0.001,0.0005", help="comma-separated time steps [s]"
    )
    p.add_argument("--duration", type=float, default=2.0, help="simulated seconds")
    p.add_argument("--settle", type=float, default=1.0, help="simulated seconds before the measurement")
    p.add_argument("--fall_height", type=float, default=0.3, help="base height [m] that counts as fallen")
    p.add_argument("--kp", type=float, default=80.0, help="the task's kp (AnymalCFlatDiffEnvCfg)")
    p.add_argument("--kd", type=float, default=5.0)
    args = p.parse_args()
    wp.config.log_level = wp.LOG_WARNING
    print("| setting | dt [ms] | stable | sink [mm] | creep [mm/s] | base below 0.3 m after [s] |")
    print("| --- | --- | --- | --- | --- | --- |")
    for setting in args.settings.split(","):
        for dt in (float(x) for x in args.dts.split(",")):
            r = measure(setting, dt, args.duration, args.settle, args.fall_height, args.kp, args.kd)
            fall = "-" if r["fall_s"] is None else f"{r['fall_s']:.2f}"
            if not r["stable"]:
                cells = "no (feet leave the ground) | | |"
            elif "sink_mm" in r:
                cells = f"yes | {r['sink_mm']:.2f} | {r['creep_mm_s']:.1f} |"
            else:
                cells = "yes | | |"
            print(f"| {setting} | {r['dt_ms']:g} | {cells} {fall} |", flush=True)


if __name__ == "__main__":
    main()
