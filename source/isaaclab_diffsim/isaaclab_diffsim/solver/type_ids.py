"""Integer ids the kernels branch on: Newton's joint types (as Warp constants) and the contact models."""

import newton
import warp as wp

JOINT_PRISMATIC = wp.constant(int(newton.JointType.PRISMATIC))
JOINT_REVOLUTE = wp.constant(int(newton.JointType.REVOLUTE))
JOINT_BALL = wp.constant(int(newton.JointType.BALL))
JOINT_FREE = wp.constant(int(newton.JointType.FREE))
JOINT_D6 = wp.constant(int(newton.JointType.D6))

CONTACT_MODELS = {"hard": 0, "smoothed": 1, "soft": 2, "penalty": 3}
"""Contact model name -> the id passed to the kernels."""
MODEL_HARD = wp.constant(CONTACT_MODELS["hard"])
MODEL_SMOOTHED = wp.constant(CONTACT_MODELS["smoothed"])
MODEL_SOFT = wp.constant(CONTACT_MODELS["soft"])
MODEL_PENALTY = wp.constant(CONTACT_MODELS["penalty"])
