"""The differentiable task's env as a LEAPP export traces it (URDF model, one env, no randomisation)."""

from isaaclab_diffsim.deploy.leapp_pipeline.shac_export import prepare_env_cfg_for_export
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv
from isaaclab_diffsim.tasks.task_cfgs import load_task_cfgs


def export_env_and_agent(task: str):
    """(env, SHAC agent cfg) of ``task`` prepared for an export (:func:`prepare_env_cfg_for_export`)."""
    env_cfg, agent = load_task_cfgs(task, "shac_cfg_entry_point")
    env_cfg.asset_source = "urdf"
    prepare_env_cfg_for_export(env_cfg)
    return DiffVelocityEnv(env_cfg), agent
