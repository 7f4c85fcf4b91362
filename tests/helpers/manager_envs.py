"""Manager-based env configs set up for deterministic checks."""


def deterministic_start(cfg) -> None:
    """No pushes, no reset velocities or offsets, the nominal base mass and CoM (Isaac Lab's velocity-task events)."""
    cfg.seed = 0
    cfg.events.push_robot = None
    cfg.events.base_com = None
    cfg.events.add_base_mass.params["mass_distribution_params"] = (1.0, 1.0)
    cfg.events.reset_base.params["pose_range"] = {}
    cfg.events.reset_base.params["velocity_range"] = {}
    cfg.events.reset_robot_joints.params["position_range"] = (1.0, 1.0)
