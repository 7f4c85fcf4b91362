"""``io.yaml``: what a robot must feed the deployed controller and what it gets back.

Isaac Lab's IO descriptors (``ManagerBasedEnv.export_IO_descriptors``) are built from a manager-based env's
observation and action managers and are deprecated (to be removed in Isaac Lab 3.2); the differentiable env is a
direct env without managers. So the bundle writes its own YAML, laid out like those descriptors where they overlap
(``observations`` with name/shape/dtype per term, ``articulations.robot`` with ``joint_names``,
``default_joint_pos``, ``default_joint_stiffness``, ``default_joint_damping``, ``scene`` with ``physics_dt``, ``dt``
and ``decimation``) and adding what a deployment of this controller needs: the controller's inputs and outputs,
effort limits, the gait and the contact model of training; with a height scan, its grid, offset and clip
(``height_scan``), with foot heights their feet, clip and scale (``foot_heights``) and the generated terrain of
training (``terrain``), :mod:`.scan_io`.
"""

from __future__ import annotations

import math

import yaml

from .scan_io import scan_and_terrain_blocks

FORMAT_VERSION = 1

# Observation terms of the differentiable velocity env, in order: (name, size, description). All have scale 1 and
# no offset except joint_pos (minus the default pose), as in Isaac Lab's flat velocity MDP.
OBSERVATION_TERMS = (
    ("base_lin_vel", 3, "base linear velocity in the base frame [m/s]"),
    ("base_ang_vel", 3, "base angular velocity in the base frame [rad/s]"),
    ("projected_gravity", 3, "unit gravity direction (0, 0, -1) in the base frame"),
    ("velocity_commands", 3, "commanded (v_x, v_y, yaw rate) in the base frame [m/s, m/s, rad/s]"),
    ("joint_pos_rel", 12, "joint positions minus default_joint_pos [rad], joint order of the bundle"),
    ("joint_vel_rel", 12, "joint velocities [rad/s], joint order of the bundle"),
    ("last_action", 12, "the controller's previous 'actions' output (zeros at the episode's start)"),
)
HEIGHT_SCAN_DESCRIPTION = (
    "base height minus the terrain height at each point of a yaw-aligned grid around the base, minus the offset, "
    "clipped (io.yaml height_scan: pattern_xy, offset, clip; x fastest) [m]"
)
FOOT_HEIGHTS_DESCRIPTION = (
    "each foot's height above the terrain straight below it, clipped, times the scale (io.yaml foot_heights: feet, "
    "clip, scale) [m]"
)
HEIGHT_SCAN_FIELDS = ("pattern_xy", "offset", "clip")
"""What io.yaml's ``height_scan`` block must hold for a controller to rebuild the scan."""
GAIT_LEG_LABELS = ("LF", "RF", "LH", "RH")
"""The labels of io.yaml's ``gait.phase_offsets_by_leg``, in the order of the gait config's ``phase_offsets``."""
GAIT_CLOCK_TERM = ("gait_phase", 2, "(sin, cos) of 2 pi phase; computed inside the controller from 'step'")


class BundleMismatchError(ValueError):
    """A bundle that does not fit the env it is asked to drive; the message names the mismatch."""


def build_io(env, train_env_cfg: dict, policy_info: dict) -> dict:
    """The io.yaml content for ``env`` (joint order, gains, dt) trained with ``train_env_cfg`` (the env cfg as a
    dict: contact model and gait of training)."""
    cfg = env.cfg
    gait = train_env_cfg["gait"]
    if "solver_cfg" not in train_env_cfg:
        raise ValueError(
            "the training env cfg has no 'solver_cfg' (written before the solver parameters moved from "
            "env.contact_model/kappa/margin to env.solver_cfg); move them there to export it"
        )
    train_solver = train_env_cfg["solver_cfg"]
    terms = list(OBSERVATION_TERMS)
    if getattr(env, "scan_pattern", None) is not None:  # the rough task's height scan, before the gait clock
        terms.append(("height_scan", len(env.scan_pattern), HEIGHT_SCAN_DESCRIPTION))
    scales = {}
    if getattr(cfg, "foot_heights", None) is not None:  # after the scan, before the gait clock
        terms.append(("foot_heights", len(env.layout.foot_names), FOOT_HEIGHTS_DESCRIPTION))
        scales["foot_heights"] = float(cfg.foot_heights.scale)
    obs_terms = [
        {"name": n, "shape": [s], "dtype": "float32", "scale": scales.get(n, 1.0), "description": d}
        for n, s, d in terms
    ]
    num_obs = sum(s for _, s, _ in terms)
    nj = len(env.layout.joint_names)
    default = env.default_leg.detach().cpu().tolist()
    clock = gait["period_s"] > 0
    step_input = {
        "name": "step",
        "shape": ["N", 1],
        "dtype": "float32",
        "description": "control steps since the episode started (0 at the first action): the gait clock",
    }
    gait_block = {"period_s": float(gait["period_s"]), "joint_swing_scale": float(gait["joint_swing_scale"])}
    if clock:  # without a clock the controller has no phase, no step input and no generator offsets
        gait_block.update(
            {
                "phase_offsets_by_leg": dict(zip(GAIT_LEG_LABELS, map(float, gait["phase_offsets"]))),
                "joint_phase_offsets": env.gait_offsets[env.joint_legs].detach().cpu().tolist(),
                "phase": "(step * dt / period_s) mod 1",
                "gait_offsets": "joint_swing_scale * max(sin(2 pi (phase + joint_phase_offsets)), 0) "
                "* default_joint_pos",
            }
        )
    return {
        "format_version": FORMAT_VERSION,
        "controller": {
            "files": {"onnx": "policy.onnx", "torchscript": "policy.pt"},
            "inputs": [
                {
                    "name": "obs",
                    "shape": ["N", num_obs],
                    "dtype": "float32",
                    "description": "the observation terms below, concatenated in order",
                },
                *([step_input] if clock else []),
            ],
            "outputs": [
                {
                    "name": "joint_pos_target",
                    "shape": ["N", nj],
                    "dtype": "float32",
                    "description": "joint position targets [rad] for the PD drives, in the joint order of "
                    "articulations.robot.joint_names",
                },
                {
                    "name": "actions",
                    "shape": ["N", nj],
                    "dtype": "float32",
                    "description": "raw policy actions: feed back as the next observation's last_action",
                },
            ],
            "target_formula": "default_joint_pos + action_scale * actions"
            + (" + gait_offsets(step)" if clock and gait["joint_swing_scale"] > 0 else ""),
            "algorithm": policy_info.get("algorithm"),
            "action_clip": policy_info.get("action_clip"),
        },
        "observations": {
            "policy": obs_terms,
            "computed_inside": [
                {"name": GAIT_CLOCK_TERM[0], "shape": [GAIT_CLOCK_TERM[1]], "description": GAIT_CLOCK_TERM[2]}
            ]
            if clock
            else [],
        },
        "actions": {
            "joint_pos": {
                "action_type": "JointAction",
                "scale": float(cfg.action_scale),
                "offset": "default_joint_pos",
                "shape": [nj],
            }
        },
        "articulations": {
            "robot": {
                "joint_names": list(env.layout.joint_names),
                "default_joint_pos": default,
                "default_joint_stiffness": list(env.layout.stiffness),
                "default_joint_damping": list(env.layout.damping),
                "effort_limit": list(env.layout.effort_limit),
                "velocity_limit": list(env.layout.velocity_limit),
                "actuator_saturation": float(cfg.solver_cfg.actuator_saturation),
                "actuator": "DC motor: clip(kp (target - q) - kd qd) to +-min(effort_limit, saturation (1 -+ qd / "
                "velocity_limit))",
            }
        },
        "scene": {"physics_dt": float(cfg.sim_dt), "dt": float(env.step_dt), "decimation": int(cfg.decimation)},
        "gait": gait_block,
        "training": {
            "contact_model": train_solver["contact_model"],
            "kappa": float(train_solver["kappa"]),
            "margin": train_solver["margin"],
            "asset_source": train_env_cfg["asset_source"],
        },
        **scan_and_terrain_blocks(env),
    }


def write_io(io: dict, path: str) -> None:
    with open(path, "w") as f:
        yaml.safe_dump(io, f, sort_keys=False, default_flow_style=None, width=120)


def read_io(path: str) -> dict:
    with open(path) as f:
        io = yaml.safe_load(f)
    if not isinstance(io, dict) or io.get("format_version") != FORMAT_VERSION:
        raise BundleMismatchError(f"{path}: not an io.yaml of format version {FORMAT_VERSION}")
    return io


def foot_heights_fields(io: dict) -> dict | None:
    """io.yaml's ``foot_heights`` block when the controller observes foot heights (None when it does not); raises
    :class:`BundleMismatchError` when the block lacks ``feet`` or ``clip`` or names another number of feet than the
    term's size."""
    terms = {t["name"]: t for t in io["observations"]["policy"]}
    if "foot_heights" not in terms:
        return None
    block = io.get("foot_heights") or {}
    missing = [k for k in ("feet", "clip") if k not in block]
    if missing:
        raise BundleMismatchError(f"io.yaml observes foot_heights but its foot_heights block lacks {missing}")
    if len(block["feet"]) != int(terms["foot_heights"]["shape"][0]):
        raise BundleMismatchError(
            f"io.yaml foot_heights.feet names {len(block['feet'])} feet, the observation term has "
            f"{terms['foot_heights']['shape'][0]} entries"
        )
    return block


def height_scan_fields(io: dict) -> dict | None:
    """io.yaml's ``height_scan`` block when the controller observes a height scan (None when it does not); raises
    :class:`BundleMismatchError` when the block or one of :data:`HEIGHT_SCAN_FIELDS` is missing or the grid's size
    is not the term's."""
    terms = {t["name"]: t for t in io["observations"]["policy"]}
    if "height_scan" not in terms:
        return None
    block = io.get("height_scan") or {}
    missing = [k for k in HEIGHT_SCAN_FIELDS if k not in block]
    if missing:
        raise BundleMismatchError(
            f"io.yaml observes a height_scan but its height_scan block lacks {missing}: a bundle exported before "
            "the scan's fields were written; export it again with scripts/export.py"
        )
    if len(block["pattern_xy"]) != int(terms["height_scan"]["shape"][0]):
        raise BundleMismatchError(
            f"io.yaml height_scan.pattern_xy has {len(block['pattern_xy'])} points, the observation term "
            f"{terms['height_scan']['shape'][0]}"
        )
    return block


def check_env_matches(io: dict, env) -> None:
    """Raise :class:`BundleMismatchError` naming the first thing in which the bundle and ``env`` differ: joint
    order, observation terms or size, gait clock, action scale, control dt."""
    joints = io["articulations"]["robot"]["joint_names"]
    env_joints = list(env.layout.joint_names)
    if joints != env_joints:
        diff = [f"{i}: bundle {a} env {b}" for i, (a, b) in enumerate(zip(joints, env_joints)) if a != b]
        raise BundleMismatchError(
            f"joint order differs: bundle {joints}, env {env_joints} (first differences {diff[:4]}; lengths "
            f"{len(joints)} vs {len(env_joints)})"
        )
    names = [t["name"] for t in io["observations"]["policy"]]
    expected = [n for n, _, _ in OBSERVATION_TERMS]
    if names != expected:
        raise BundleMismatchError(f"observation terms differ: bundle {names}, this env builds {expected}")
    sizes = {t["name"]: int(t["shape"][0]) for t in io["observations"]["policy"]}
    for n, s, _ in OBSERVATION_TERMS:
        want = len(env_joints) if s == 12 else s
        if sizes[n] != want:
            raise BundleMismatchError(f"observation term {n!r} has size {sizes[n]} in the bundle, {want} in the env")
    clock = len(io["observations"]["computed_inside"]) > 0
    num_obs = sum(sizes.values()) + (GAIT_CLOCK_TERM[1] if clock else 0)
    if num_obs != env.num_obs:
        raise BundleMismatchError(
            f"observation size differs: the bundle's policy takes {num_obs} entries "
            f"(gait clock {'in' if clock else 'out'}), the env builds {env.num_obs}"
        )
    gait = env.cfg.gait
    for key, value in (("period_s", gait.period_s), ("joint_swing_scale", gait.joint_swing_scale)):
        if not math.isclose(float(io["gait"][key]), float(value), rel_tol=1e-9):
            raise BundleMismatchError(f"gait {key} differs: bundle {io['gait'][key]}, env {value}")
    if not math.isclose(float(io["scene"]["dt"]), float(env.step_dt), rel_tol=1e-9):
        raise BundleMismatchError(f"control dt differs: bundle {io['scene']['dt']} s, env {env.step_dt} s")
    if not math.isclose(float(io["actions"]["joint_pos"]["scale"]), float(env.cfg.action_scale), rel_tol=1e-9):
        raise BundleMismatchError(
            f"action scale differs: bundle {io['actions']['joint_pos']['scale']}, env {env.cfg.action_scale}"
        )
