"""Export of a policy of the differentiable ANYmal C task (SHAC or PPO there) to a LEAPP pipeline.

The env's annotated observation and action path (:mod:`.annotations`) is traced over a few policy steps from a
reset: the graph takes the robot's raw measurements and the command, holds the normaliser, the actor, the action
scale, the default pose and the gait clock (a step counter in the pipeline's feedback state, reset with it), and
returns joint position targets. LEAPP then compiles it to ONNX, writes ``<name>.yaml`` with the
``isaaclab_connection`` of every input and output and the controller's io spec (the content of a bundle's io.yaml,
under ``pipeline.configs``, :mod:`..leapp_descriptor`), and checks the ONNX model against the traced steps. No
io.yaml is written: the LEAPP YAML is the export's one descriptor.
"""

from __future__ import annotations

import os

import torch

from ...utils.leapp_support import require_leapp
from ..io_spec import build_io
from ..leapp_descriptor import SPEC_KEY, leapp_spec


def prepare_env_cfg_for_export(env_cfg) -> None:
    """One env on the CPU without what training randomises and a deployment does not reproduce: observation noise,
    action delay, motor strength (the exported PD gains are the nominal ones), pushes and leg kicks."""
    env_cfg.num_envs, env_cfg.device = 1, "cpu"
    env_cfg.observations.enable_corruption = False
    env_cfg.events.action_delay_range = (0, 0)
    env_cfg.events.motor_strength_range = (1.0, 1.0)
    env_cfg.events.push_velocity = 0.0
    env_cfg.events.leg_kick_velocity = 0.0


def export_leapp(
    env,
    policy: torch.nn.Module,
    out_dir: str,
    name: str,
    train_env_cfg: dict,
    algorithm: str,
    action_clip: float | None = None,
    steps: int = 5,
    visualize: bool = False,
):
    """Trace ``policy`` (raw observations -> actions, ``action_clip`` folded in when given) on ``env`` (one env,
    built with :func:`prepare_env_cfg_for_export`) for ``steps`` policy steps and write the LEAPP export to
    ``out_dir/name/``; returns the path of its YAML, which carries the io spec of ``env`` trained with
    ``train_env_cfg`` by ``algorithm`` (as :func:`~..bundle.export_bundle` writes it). Raises RuntimeError if
    LEAPP's validation of the compiled model against the traced steps fails."""
    leapp = require_leapp()
    if env.num_envs != 1:
        raise ValueError(f"a LEAPP export traces one env, got num_envs={env.num_envs}")
    spec = leapp_spec(build_io(env, train_env_cfg, {"algorithm": algorithm, "action_clip": action_clip}))
    steps = max(int(steps), 2)  # two steps at least: LEAPP checks a state update
    env.leapp_node = name
    leapp.start(name, save_path=out_dir, max_cached_io=steps)
    try:
        with torch.no_grad():
            obs = env.reset()
            for _ in range(steps):
                obs = env.step(policy(obs))[0]
    except BaseException:
        leapp.stop()
        env.leapp_node = None
        raise
    leapp.stop()
    env.leapp_node = None
    configs = leapp.GraphConfigs(frequency=1.0 / env.step_dt, extra={SPEC_KEY: spec})
    if not leapp.compile_graph(visualize=visualize, validate=True, graph_configs=configs):
        raise RuntimeError(f"LEAPP's validation of the compiled {name} graph against the traced steps failed")
    return os.path.join(out_dir, name, f"{name}.yaml")
