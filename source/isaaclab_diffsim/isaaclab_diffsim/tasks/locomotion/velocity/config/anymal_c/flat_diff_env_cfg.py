"""ANYmal C flat velocity tracking on the differentiable backend (direct env)."""

from isaaclab.utils import configclass

from isaaclab_diffsim.envs import DiffVelocityEnvCfg


@configclass
class AnymalCFlatDiffEnvCfg(DiffVelocityEnvCfg):
    """Isaac Lab's flat ANYmal C MDP; 64 envs on CPU by default, smoothed contact.

    The model is built by Isaac Lab (``asset_source="isaaclab"``: InteractiveScene with ``ANYMAL_C_DIFFSIM_CFG``,
    cloner, DiffSim physics manager); ``env.asset_source=urdf`` uses our URDF builder instead (no Isaac Lab
    simulation context, several envs per process).
    """

    num_envs: int = 64
    asset_source: str = "isaaclab"


@configclass
class AnymalCFlatDiffEnvCfg_PLAY(AnymalCFlatDiffEnvCfg):
    """Evaluation: hard contact, forward commands in [-1, 1] m/s only, no pushes."""

    def __post_init__(self):
        self.contact_model = "hard"
        self.commands.lin_vel_y = (0.0, 0.0)
        self.commands.ang_vel_z = (0.0, 0.0)
        self.events.push_velocity = 0.0
