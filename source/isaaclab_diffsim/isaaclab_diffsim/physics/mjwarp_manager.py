"""Isaac Lab's MuJoCo Warp manager, raising when MJWarp's buffers drop Newton contacts."""

from __future__ import annotations

from isaaclab_newton.physics import NewtonManager
from isaaclab_newton.physics.mjwarp_manager import NewtonMJWarpManager


class NewtonCheckedMJWarpManager(NewtonMJWarpManager):
    """:class:`NewtonMJWarpManager` whose step fails when Newton found more contacts than MJWarp holds.

    MJWarp clamps the converted contacts to ``naconmax`` (``nconmax`` per world times the worlds) and an env's
    constraint rows to ``njmax``, and only prints a line; here the step raises instead, so a run never continues
    with contacts silently missing.
    """

    @classmethod
    def _check_solver_status(cls) -> None:
        super()._check_solver_status()
        data = cls._solver.mjw_data
        rows = int(data.nefc.numpy().max())
        if rows > data.njmax:
            raise RuntimeError(
                f"MJWarp dropped constraints: an env needs {rows} rows, njmax is {data.njmax}; raise solver_cfg.njmax "
                "or leave it None."
            )
        if not NewtonManager._needs_collision_pipeline or cls._contacts is None:
            return  # MuJoCo's own collision detection: no Newton contacts to convert
        found, held = int(cls._contacts.rigid_contact_count.numpy()[0]), int(data.naconmax)
        if found > held:
            worlds = int(data.nworld)
            raise RuntimeError(
                f"MJWarp dropped contacts: Newton found {found}, the buffer holds {held} "
                f"(nconmax {held // worlds} per env x {worlds} envs); raise solver_cfg.nconmax or leave it None."
            )
