"""Driving a DiffVelocityEnv with a bundle through onnxruntime only: observations built in numpy as ``io.yaml``
declares them from the simulated state (the robot's state estimate), the commands and the controller's own
previous actions."""

from __future__ import annotations

import os

import numpy as np

from .descriptor import LEAPP, read_descriptor
from .io_spec import OBSERVATION_TERMS, BundleMismatchError, check_env_matches
from .leapp_session import LeappSession
from .observations import concat_terms, state_terms


def open_bundle(bundle_dir: str, env=None):
    """``(io, session)`` of a bundle folder (its io.yaml and an onnxruntime session of its ONNX controller) or of a
    LEAPP export (the io spec in its YAML and a :class:`~.leapp_session.LeappSession` of its model); see
    :func:`~.descriptor.read_descriptor`. Raises BundleMismatchError naming the path when it is missing, lacks a
    file, does not match ``env`` (when given; checked before the ONNX file is read), or the ONNX file is not a
    readable model (truncated, corrupt)."""
    import onnxruntime as ort

    descriptor = read_descriptor(bundle_dir)
    io = descriptor.spec
    if env is not None:
        check_env_matches(io, env)
    if descriptor.kind == LEAPP:
        return io, LeappSession(descriptor)
    onnx_path = os.path.join(bundle_dir, io["controller"]["files"]["onnx"])
    if not os.path.isfile(onnx_path):
        raise BundleMismatchError(f"{bundle_dir}: io.yaml names {onnx_path}, which does not exist")
    try:
        session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    except Exception as err:  # noqa: BLE001 - onnxruntime raises its own exception types for unreadable models
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise BundleMismatchError(f"{onnx_path} is not a readable ONNX model (truncated or corrupt?): {first}") from err
    return io, session


class OnnxBundlePolicy:
    """``policy(obs) -> actions`` for :func:`~isaaclab_diffsim.rl.evaluation.evaluate` that ignores the env's
    observation tensor: it builds the controller's input from ``env``'s state as io.yaml says, runs the ONNX
    controller, and returns its ``actions`` (the env applies scale, default pose and gait offsets itself; the
    controller's ``joint_pos_target`` output is compared with those targets at every step).

    Refuses (:class:`BundleMismatchError`) a bundle whose joint order, observation terms or sizes, gait or dt do
    not match ``env``.
    """

    def __init__(self, bundle_dir: str, env):
        self.io, self.session = open_bundle(bundle_dir, env)
        if isinstance(self.session, LeappSession):
            raise BundleMismatchError(
                f"{bundle_dir} is a LEAPP export: this policy runs a bundle's ONNX controller (scripts/export.py); "
                "drive a LEAPP export with isaaclab_diffsim.deploy.Controller or scripts/deploy/sim2sim.py"
            )
        self.takes_step = "step" in (i.name for i in self.session.get_inputs())
        """Whether the policy takes the ``step`` input (only a bundle with a gait clock does)."""
        self.env = env
        want = int(self.io["controller"]["inputs"][0]["shape"][1])
        got = self.session.get_inputs()[0].shape[1]
        if got != want:
            raise BundleMismatchError(f"policy.onnx takes {got} observation entries, io.yaml declares {want}")
        robot = self.io["articulations"]["robot"]
        self.default_joint_pos = np.asarray(robot["default_joint_pos"], dtype=np.float32)
        self.scales = {t["name"]: float(t["scale"]) for t in self.io["observations"]["policy"]}
        self.terms = [t["name"] for t in self.io["observations"]["policy"]]
        self.last_actions = np.zeros((env.num_envs, len(robot["joint_names"])), dtype=np.float32)
        self.max_target_error = 0.0
        """Largest |controller joint_pos_target - env target| seen [rad]."""
        self.max_obs_error = 0.0
        """Largest |built observation - env observation| seen (without the gait clock)."""

    def observation(self) -> np.ndarray:
        """The controller's ``obs`` input from the env's state, term by term in io.yaml's order."""
        env = self.env
        q = env.q.detach().cpu().numpy().astype(np.float32)
        qd = env.qd.detach().cpu().numpy().astype(np.float32)
        values = state_terms(
            q[:, 3:7],
            qd[:, 0:3],
            qd[:, 3:6],
            env.commands.detach().cpu().numpy().astype(np.float32),
            q[:, 7:] - self.default_joint_pos,
            qd[:, 6:],
            self.last_actions,
        )
        return concat_terms(self.terms, self.scales, values)

    def __call__(self, env_obs):
        import torch

        env = self.env
        step = env.episode_length_buf.detach().cpu().numpy().astype(np.float32)[:, None]
        self.last_actions[step[:, 0] == 0] = 0.0  # a new episode: no previous action
        obs = self.observation()
        n_phys = sum(s for _, s, _ in OBSERVATION_TERMS)
        self.max_obs_error = max(self.max_obs_error, float(np.abs(obs - env_obs[:, :n_phys].cpu().numpy()).max()))
        feed = {"obs": obs}
        if self.takes_step:
            feed["step"] = step
        targets, actions = self.session.run(["joint_pos_target", "actions"], feed)
        self.last_actions = actions.copy()
        a = torch.from_numpy(actions).to(env.device)
        with torch.no_grad():
            env_targets = env.default_leg + env.cfg.action_scale * a
            if env.cfg.gait.joint_swing_scale > 0:
                env_targets = env_targets + env.trajectory_generator_offsets()
        error = float((torch.from_numpy(targets) - env_targets.cpu()).abs().max())
        self.max_target_error = max(self.max_target_error, error)
        return a
