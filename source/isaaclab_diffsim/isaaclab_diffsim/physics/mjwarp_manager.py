"""Isaac Lab's MuJoCo Warp manager, raising when MJWarp's contact buffer drops Newton contacts."""

from __future__ import annotations

from isaaclab_newton.physics import NewtonManager
from isaaclab_newton.physics.mjwarp_manager import NewtonMJWarpManager


class NewtonCheckedMJWarpManager(NewtonMJWarpManager):
    """:class:`NewtonMJWarpManager` whose step fails when Newton found more contacts than MJWarp holds.

    MJWarp clamps the converted contacts to ``naconmax`` (``nconmax`` per world times the worlds) and only prints
    a line; here the step raises instead, so a run never continues with contacts silently missing.
    """

    @classmethod
    def _check_solver_status(cls) -> None:
        super()._check_solver_status()
        if not NewtonManager._needs_collision_pipeline or cls._contacts is None:
            return  # MuJoCo's own collision detection: no Newton contacts to convert
        found = int(cls._contacts.rigid_contact_count.numpy()[0])
        held = int(cls._solver.mjw_data.naconmax)
        if found > held:
            worlds = int(cls._solver.mjw_data.nworld)
            raise RuntimeError(
                f"MJWarp dropped contacts: Newton found {found}, the buffer holds {held} "
                f"(nconmax {held // worlds} per env x {worlds} envs); raise solver_cfg.nconmax or leave it None."
            )
