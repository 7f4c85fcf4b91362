"""ANYmal C rough-terrain velocity tracking on the differentiable backend (direct env): the reference-free task
and the trot-generator task on Isaac Lab's generated terrain."""

from isaaclab.utils import configclass

from .......terrains.terrain_cfg import DiffHeightScanCfg, DiffTerrainCfg
from ...recipes import use_play_settings
from .flat_env_cfg import AnymalCFlatDiffEnvCfg, AnymalCFlatTrotDiffEnvCfg


@configclass
class AnymalCRoughDiffEnvCfg(AnymalCFlatDiffEnvCfg):
    """The reference-free flat task (:class:`AnymalCFlatDiffEnvCfg`: no trajectory generator, no gait clock,
    omnidirectional commands with standing envs, 1024 envs) on Isaac Lab's rough terrains.

    What differs from :class:`AnymalCFlatDiffEnvCfg`:

    - ``terrain``: Isaac Lab's ``ROUGH_TERRAINS_CFG`` (stairs up and down, boxes, random rough, slopes up and down)
      on Isaac Lab's 10 levels x 20 columns, generated with the env's seed, as a static mesh collider; no terrain
      curriculum (each sub-terrain draws its difficulty uniformly, as the ``-Play`` evaluation sees them) and envs
      start on every row; Isaac Lab's ``terrain_levels_vel`` curriculum from levels 0-5 (``curriculum=True``,
      ``max_init_terrain_level=5``) sent the training envs down to the easy rows;
    - ``height_scan``: Isaac Lab's 1.6 x 1.0 m grid at 0.1 m (187 points) appended to the observation;
    - ``rewards.termination_penalty``: -100 per failure (about 1.5 times the discounted value a fall loses), the
      reason SHAC's critic gives the actor to avoid falls it has no gradient for;
    - ``events.ground_friction`` stays 0.3 on the terrain (the flat task's effective 0.3-1.2).

    Heights in the rewards and terminations (base height, foot lift) are taken above the terrain below them. The
    model is built by Isaac Lab as the flat task's (``asset_source="isaaclab"``), its ``TerrainImporter`` generating
    the terrain in place of the ground plane; ``env.asset_source=urdf`` uses our builder with the same terrain.
    The trot-generator recipe on the same terrain is ``DiffSim-Velocity-Rough-AnymalC-Trot-Direct``.
    """

    terrain: DiffTerrainCfg | None = DiffTerrainCfg(curriculum=False, max_init_terrain_level=None)
    height_scan: DiffHeightScanCfg | None = DiffHeightScanCfg()

    def __post_init__(self):
        super().__post_init__()
        self.rewards.termination_penalty = -100.0


@configclass
class AnymalCRoughDiffEnvCfg_PLAY(AnymalCRoughDiffEnvCfg):
    """Evaluation: the flat ``-Play`` settings (:func:`use_play_settings`); the terrain's rows ordered by difficulty
    (``curriculum=True``, so that evaluations can report per level) and envs on every row at startup; 64 envs."""

    num_envs: int = 64

    def __post_init__(self):
        super().__post_init__()
        use_play_settings(self)
        self.terrain.curriculum = True
        self.terrain.max_init_terrain_level = None


@configclass
class AnymalCRoughTrotDiffEnvCfg(AnymalCFlatTrotDiffEnvCfg):
    """The flat trot task's recipe (:class:`AnymalCFlatTrotDiffEnvCfg`: trot generator, gait clock, forward
    commands, 64 envs) on the terrain and with the height scan of :class:`AnymalCRoughDiffEnvCfg`."""

    terrain: DiffTerrainCfg | None = DiffTerrainCfg()
    height_scan: DiffHeightScanCfg | None = DiffHeightScanCfg()


@configclass
class AnymalCRoughTrotDiffEnvCfg_PLAY(AnymalCRoughTrotDiffEnvCfg):
    """Evaluation: the flat ``-Play`` settings (:func:`use_play_settings`); every terrain level at startup."""

    def __post_init__(self):
        super().__post_init__()
        use_play_settings(self)
        self.terrain.max_init_terrain_level = None
