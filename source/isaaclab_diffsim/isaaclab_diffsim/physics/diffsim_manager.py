"""Newton manager running the differentiable Moreau / Gauss-Seidel solver inside Isaac Lab."""

from __future__ import annotations

import logging
import re

from isaaclab.physics import PhysicsManager
from isaaclab_newton.physics.newton_manager import NewtonManager
from newton import Contacts, GeoType, Model, ModelBuilder, ShapeFlags

from ..solver import SolverMoreauGS
from .diffsim_manager_cfg import DiffSimSolverCfg

logger = logging.getLogger(__name__)

_BODY_COLLIDERS = (int(GeoType.SPHERE), int(GeoType.CAPSULE), int(GeoType.BOX))


class NewtonDiffSimManager(NewtonManager):
    """:class:`NewtonManager` specialization for :class:`SolverMoreauGS`.

    The solver finds its ground contacts itself (no collision pipeline) and reports them, with forces,
    through ``update_contacts`` into a :class:`Contacts` buffer this manager owns, which Isaac Lab's
    ContactSensor reads. Model changes (mass, CoM, friction, ...) reach the solver; a captured CUDA
    graph is re-captured after them. Capture is declined for models that require gradients.
    """

    @classmethod
    def _create_solver(cls, model: Model, solver_cfg: DiffSimSolverCfg) -> SolverMoreauGS:
        """Construct the configured solver (fields re-validated: CLI overrides skip ``__post_init__``)."""
        return SolverMoreauGS(model, **solver_cfg.solver_kwargs())

    @classmethod
    def _build_solver(cls, model: Model, solver_cfg: DiffSimSolverCfg) -> None:
        """Populate the base-class slots: separate in/out states, no collision pipeline, body forces applied."""
        NewtonManager._solver = cls._create_solver(model, solver_cfg)
        NewtonManager._use_single_state = False
        NewtonManager._needs_collision_pipeline = False
        NewtonManager._supports_rigid_body_force_input = True

    @classmethod
    def _initialize_contacts(cls) -> None:
        """Allocate a contact buffer for every ground-contact candidate (with ``force`` if a sensor asked)."""
        solver = cls._solver
        if solver is None:
            return
        NewtonManager._contacts = Contacts(
            rigid_contact_max=max(solver.layout.candidate_count, 1),
            soft_contact_max=0,
            device=PhysicsManager._device,
            requested_attributes=cls.backend.model.get_requested_contact_attributes(),
        )

    @classmethod
    def _update_sensors(cls, contacts) -> None:
        """Report contacts; a sensor added after solver start (through the base class) gets ``force`` here."""
        if cls._report_contacts and cls._contacts is not None and cls._contacts.force is None:
            cls._initialize_contacts()
        super()._update_sensors(contacts)

    @classmethod
    def _supports_cuda_graph_capture(cls) -> bool:
        """The forward step is capture-safe (buffers reused); with gradients each step allocates anew."""
        model = cls.backend.model if cls.backend is not None else None
        return model is not None and not model.requires_grad

    @classmethod
    def step(cls) -> None:
        """Step; a pending model change makes the solver rebuild its buffers, so drop a captured graph first."""
        if cls._model_changes and cls._graph is not None:
            cls._invalidate_graph()
        super().step()

    @classmethod
    def _prepare_builder_for_finalize(cls, builder: ModelBuilder) -> None:
        """Apply ``collider_shapes_expr`` (bodies' shapes) and ``disable_unsupported_colliders``."""
        solver_cfg = getattr(PhysicsManager._cfg, "solver_cfg", None)
        expr = getattr(solver_cfg, "collider_shapes_expr", None)
        pattern = re.compile(expr) if expr else None
        drop_unsupported = getattr(solver_cfg, "disable_unsupported_colliders", False)
        if pattern is None and not drop_unsupported:
            return
        collide = int(ShapeFlags.COLLIDE_SHAPES)
        filtered = unsupported = 0
        for s in range(builder.shape_count):
            if not builder.shape_flags[s] & collide:
                continue
            kind, body = int(builder.shape_type[s]), builder.shape_body[s]
            if body >= 0 and pattern is not None and not pattern.fullmatch(builder.shape_label[s] or ""):
                filtered += 1
            elif drop_unsupported and not cls._collidable(kind, body, builder.shape_scale[s]):
                unsupported += 1
            else:
                continue
            builder.shape_flags[s] &= ~collide
        if filtered or unsupported:
            msg = "NewtonDiffSimManager: collision off for %d shapes (collider_shapes_expr) and %d (unsupported)."
            logger.info(msg, filtered, unsupported)

    @staticmethod
    def _collidable(kind: int, body: int, scale) -> bool:
        """Shapes SolverMoreauGS collides: spheres/capsules/boxes on bodies, static infinite planes."""
        if body >= 0:
            return kind in _BODY_COLLIDERS
        return kind == int(GeoType.PLANE) and scale[0] == 0.0 and scale[1] == 0.0
