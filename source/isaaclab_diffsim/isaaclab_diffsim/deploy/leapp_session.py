"""A LEAPP export's ONNX model run by onnxruntime for :class:`~isaaclab_diffsim.deploy.Controller` (numpy,
onnxruntime and pyyaml only; no ``leapp`` package on the robot).

The export of :mod:`.leapp_pipeline` is one model: the robot's raw measurements and the command in, joint position
targets out, with the last actions and the gait clock's step count as feedback state (``<x>_in`` -> ``<x>_out``,
zero at an episode's start). The Controller keeps that state itself, as it does for a bundle, and feeds it back.
"""

from __future__ import annotations

import os

import numpy as np

from .io_spec import BundleMismatchError

MEASURED = {
    "robot_root_quat_w": "base_quat_xyzw",
    "robot_root_lin_vel_b": "base_lin_vel",
    "robot_root_ang_vel_b": "base_ang_vel",
    "base_velocity": "command",
    "robot_joint_pos": "joint_pos",
    "robot_joint_vel": "joint_vel",
}
"""The model's measured inputs (:mod:`.leapp_pipeline.annotations` names) and the Controller's names of them."""
STATE = {"last_action_in": "last_action_out", "gait_step_in": "gait_step_out"}
"""The model's feedback state: input -> the output fed back to it."""
TARGET = "joint_pos"
"""The model's joint position target output."""
NOISE_NOT_LEAPP = (
    "the noise variant perturbs projected_gravity, which a LEAPP export does not take (its model takes the base "
    "quaternion): run it on the bundle of the same checkpoint"
)
"""Why sim2sim's ``noise`` variant is refused for a LEAPP export."""


def _model(descriptor) -> tuple[str, dict]:
    models = descriptor.leapp["models"]
    if len(models) != 1:
        raise BundleMismatchError(
            f"{descriptor.path}: {len(models)} models in the pipeline; the Controller runs a one-model LEAPP export"
        )
    name, model = next(iter(models.items()))
    backend = model["parameters"].get("backend")
    if backend != "onnx":
        raise BundleMismatchError(f"{descriptor.path}: model {name} has backend {backend!r}, the Controller runs onnx")
    return name, model


def _check_interface(descriptor, name: str, model: dict) -> None:
    """Refuse a model whose inputs, outputs, feedback or joint order are not those this session feeds."""
    inputs = {i["name"]: i for i in model["inputs"]}
    outputs = {o["name"]: o for o in model["outputs"]}
    want_in, want_out = [*MEASURED, *STATE], [TARGET, *STATE.values()]
    if sorted(inputs) != sorted(want_in) or sorted(outputs) != sorted(want_out):
        raise BundleMismatchError(
            f"{descriptor.path}: model {name} has inputs {sorted(inputs)} and outputs {sorted(outputs)}, the "
            f"Controller feeds {sorted(want_in)} and reads {sorted(want_out)}"
        )
    feedback = descriptor.leapp["pipeline"].get("feedback_flow") or {}
    want_fb = {f"{name}/{out}": [f"{name}/{inp}"] for inp, out in STATE.items()}
    if feedback != want_fb:
        raise BundleMismatchError(f"{descriptor.path}: feedback_flow {feedback}, the Controller feeds back {want_fb}")
    joints = descriptor.spec["articulations"]["robot"]["joint_names"]
    for tensor in (inputs["robot_joint_pos"], inputs["robot_joint_vel"], outputs[TARGET]):
        if tensor.get("element_names", [None])[0] != joints:
            raise BundleMismatchError(
                f"{descriptor.path}: {tensor['name']} joints {tensor.get('element_names')} differ from the io spec's "
                f"joint_names {joints}"
            )


class LeappSession:
    """``run(values, last_action, step) -> (joint_pos_target, actions)`` of a LEAPP export's model, robot by robot
    (the export's tensors have a batch of one)."""

    def __init__(self, descriptor):
        import onnxruntime as ort

        name, model = _model(descriptor)
        _check_interface(descriptor, name, model)
        onnx_path = os.path.join(os.path.dirname(descriptor.path), model["parameters"]["model_path"])
        if not os.path.isfile(onnx_path):
            raise BundleMismatchError(f"{descriptor.path}: model {name}'s file {onnx_path} does not exist")
        try:
            self.session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        except Exception as err:  # noqa: BLE001 - onnxruntime raises its own exception types for unreadable models
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise BundleMismatchError(f"{onnx_path} is not a readable ONNX model: {first}") from err
        self.path = onnx_path

    def run(self, values: dict, last_action: np.ndarray, step: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Targets and actions (num_robots, num_joints) for ``values`` (the Controller's measurements by its names,
        joints in the spec's order), the previous ``last_action`` and the ``step`` counts (num_robots,)."""
        targets, actions = [], []
        for i in range(len(last_action)):
            feed = {key: np.asarray(values[name][i : i + 1], dtype=np.float32) for key, name in MEASURED.items()}
            feed["last_action_in"] = np.asarray(last_action[i : i + 1], dtype=np.float32)
            feed["gait_step_in"] = np.full((1, 1), step[i], dtype=np.float32)
            t, a = self.session.run([TARGET, STATE["last_action_in"]], feed)
            targets.append(t)
            actions.append(a)
        return np.concatenate(targets), np.concatenate(actions)
