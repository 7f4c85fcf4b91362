"""Names and units of a rollout recording: the one place the recorder and its readers agree on.

The recorder also writes this dictionary into the USD layer's ``customLayerData`` under :data:`LAYER_KEY`, so a
reader (the Kit extension in ``exts/``, which does not import this package) finds every path and attribute name
in the file it opens.
"""

from __future__ import annotations

LAYER_KEY = "isaaclab_diffsim_recording"
VERSION = 1

SCHEMA = {
    "version": VERSION,
    "envs_path": "/World/envs",
    "env_prefix": "env_",
    "robot_name": "Robot",
    "feet_scope": "Feet",
    "prototypes_path": "/World/RobotPrototypes",
    # per foot (BasisCurves from the foot's lowest point along the contact force), time-sampled
    "force_attr": "primvars:contact_force",  # world frame [N], force of the ground on the foot
    "distance_attr": "primvars:signed_distance",  # [m], negative in penetration
    "weight_attr": "primvars:contact_weight",  # sigmoid s(d) (smoothed), 1/0 active flag (hard, soft)
    "point_attr": "primvars:contact_point",  # foot's lowest point, world frame [m]
    # per robot, time-sampled
    "grad_attr": "primvars:actor_grad_norm",  # |dJ/da_t| of the differentiated horizon (absent: not differentiated)
    "origin_attr": "isaaclab_diffsim:env_origin",  # env origin [m] (not time-sampled)
    "force_scale_m_per_n": 0.002,  # arrow length per newton
}
