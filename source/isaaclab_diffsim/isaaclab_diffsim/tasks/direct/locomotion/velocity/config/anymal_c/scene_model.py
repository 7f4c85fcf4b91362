"""ANYmal C worlds built by Isaac Lab: ``InteractiveScene`` + the DiffSim physics manager, for the differentiable env.

Isaac Lab's ``Articulation`` and ``NewtonManager`` step the model in place and without a ``wp.Tape``, so the
differentiable env cannot step through them. It can share everything before the first step: the scene spawns
``ANYMAL_C_DIFFSIM_CFG`` (the cached USD), Isaac Lab's cloner replicates it into one Newton world per env, and
the DiffSim manager finalizes the model and builds its :class:`SolverMoreauGS`. The env then writes its drives into
that model and steps it with that same solver (one solver per model) through the bridge, with the body, foot and
joint indexing read from the scene's ``Articulation``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import newton
import numpy as np
import torch
import warp as wp

from .......assets.anymal_c_urdf import LEGS, urdf_joint_limits
from .......assets.robot_layout import RobotLayout
from .......envs.seeding import global_rng_seeded
from .......physics.diffsim_manager_cfg import DiffSimSolverCfg
from .......solver import SolverMoreauGS
from .......solver.terrain import terrain_triangles
from .......terrains import GeneratedTerrain, seeded_generation


class AnymalCScene:
    """Isaac Lab simulation context and scene holding ANYmal C worlds; ``model``, ``layout`` and ``solver`` for the env.

    Only one can exist per process (Isaac Lab's ``SimulationContext`` is a singleton); :meth:`close` releases it.

    Args:
        num_envs: Number of robots (Newton worlds).
        device: Torch/Warp device.
        sim_dt: Physics step [s].
        kp, kd: PD gains of the implicit joint drives (the ANYdrive DC motor, stepped by the solver).
        base_height: Height of the base at the default pose [m].
        env_spacing: Spacing of the scene's env-origin grid [m] (``env_origins``).
        solver_cfg: The solver's parameters; the physics manager builds the solver (``solver``) from it.
        terrain: A terrain generator config (its seed set) for Isaac Lab's ``TerrainImporter`` in place of the
            ground plane, generated under :func:`~isaaclab_diffsim.terrains.seeded_generation` (the terrain
            ``generate_terrain`` makes); kept as ``terrain``. None: the ground plane.
    """

    def __init__(
        self,
        num_envs: int,
        device: str,
        sim_dt: float,
        *,
        kp: float,
        kd: float,
        base_height: float,
        solver_cfg: DiffSimSolverCfg,
        env_spacing: float = 2.5,
        terrain=None,
    ):
        from isaaclab.scene import InteractiveScene, InteractiveSceneCfg
        from isaaclab.sim import SimulationCfg, SimulationContext
        from isaaclab.terrains import TerrainImporterCfg
        from isaaclab.utils import replace
        from isaaclab_newton.physics import NewtonCfg, NewtonManager

        from .......assets.anymal_c_cfg import ANYMAL_C_DIFFSIM_CFG, ANYMAL_C_FOOT_COLLIDERS_EXPR
        from .......assets.ground_plane import ground_plane_usd_path

        if SimulationContext.instance() is not None:
            raise RuntimeError(
                "asset_source='isaaclab': an Isaac Lab SimulationContext already exists in this process; close the "
                "other environment (env.close()) first"
            )
        robot_cfg = replace(ANYMAL_C_DIFFSIM_CFG, prim_path="{ENV_REGEX_NS}/Robot")
        robot_cfg.init_state.pos = (0.0, 0.0, float(base_height))
        scene_cfg = InteractiveSceneCfg(num_envs=num_envs, env_spacing=float(env_spacing))
        if terrain is None:
            scene_cfg.terrain = TerrainImporterCfg(
                prim_path="/World/ground", terrain_type="usd", usd_path=str(ground_plane_usd_path())
            )
        else:
            scene_cfg.terrain = TerrainImporterCfg(
                prim_path="/World/ground", terrain_type="generator", terrain_generator=terrain, collision_group=-1
            )
        scene_cfg.robot = robot_cfg
        solver_cfg = replace(solver_cfg, collider_shapes_expr=ANYMAL_C_FOOT_COLLIDERS_EXPR)
        physics = NewtonCfg(solver_cfg=solver_cfg, num_substeps=1)
        self.sim = SimulationContext(SimulationCfg(dt=float(sim_dt), device=str(device), physics=physics))
        try:
            if terrain is None:
                self.scene = InteractiveScene(scene_cfg)
            else:
                with seeded_generation(terrain.seed):
                    self.scene = InteractiveScene(scene_cfg)
            self.sim.reset()
            self.model: newton.Model = NewtonManager.get_model()
            self.terrain: GeneratedTerrain | None = None if terrain is None else self._terrain(terrain)
            """The terrain the model collides with and its sub-terrain origins (None: the ground plane)."""
            self.robot = self.scene["robot"]
            self.layout: RobotLayout = self._configure(kp, kd, base_height)
            self.solver: SolverMoreauGS = NewtonManager._solver
            """The solver the physics manager built for ``model``; the env steps this one."""
            self.solver.notify_model_changed(0)  # re-read the model after the edits above
            origins = self.scene.env_origins
            self.env_origins = torch.as_tensor(getattr(origins, "torch", origins)).to(str(device)).view(num_envs, 3)
            self.device = torch.device(device)
        except Exception:
            self.close()
            raise

    def _terrain(self, cfg) -> GeneratedTerrain:
        """The model's one static shape (the importer's terrain mesh, world space) and the importer's origins."""
        model = self.model
        static = np.nonzero(model.shape_body.numpy() < 0)[0]
        if len(static) != 1 or int(model.shape_type.numpy()[static[0]]) != int(newton.GeoType.MESH):
            raise RuntimeError("asset_source='isaaclab': expected the terrain as the model's one static MESH shape")
        vertices, triangles = terrain_triangles(model, int(static[0]))
        origins = self.scene.terrain.terrain_origins
        origins = torch.as_tensor(getattr(origins, "torch", origins)).cpu().numpy().astype(np.float64)
        return GeneratedTerrain(vertices, triangles, origins, (float(cfg.size[0]), float(cfg.size[1])))

    def _configure(self, kp: float, kd: float, base_height: float) -> RobotLayout:
        """Write the default pose (in each env's own frame: base above the world origin), drives and limits into the
        model; return the layout. ``env_origins`` places the robots only where they are shown."""
        model, robot = self.model, self.robot
        n = model.world_count
        nb, nj = model.body_count // n, model.joint_count // n
        nq, nd = model.joint_coord_count // n, model.joint_dof_count // n
        if n * nb != model.body_count or n * nq != model.joint_coord_count or n * nd != model.joint_dof_count:
            raise RuntimeError("asset_source='isaaclab': the scene's worlds are not uniform")
        leaf = [label.rsplit("/", 1)[-1] for label in model.body_label[:nb]]
        if leaf != list(robot.body_names):
            raise RuntimeError(f"body order of the model {leaf} differs from the Articulation's {robot.body_names}")

        q_start, qd_start = model.joint_q_start.numpy(), model.joint_qd_start.numpy()
        joint_leaf = [label.rsplit("/", 1)[-1] for label in model.joint_label[:nj]]
        leg_joints = [joint_leaf.index(name) for name in robot.joint_names]
        leg_q = np.array([q_start[j] for j in leg_joints])
        leg_d = np.array([qd_start[j] for j in leg_joints])
        if not (np.all(np.diff(leg_q) == 1) and np.all(np.diff(leg_d) == 1)):
            raise RuntimeError("asset_source='isaaclab': leg joints are not contiguous in the model")

        default_pos = robot.data.default_joint_pos
        default_pos = getattr(default_pos, "torch", default_pos)[0].cpu()
        effort = urdf_joint_limits("effort")  # 80 N m; the USD import and the actuator cfg leave it unset (1e6)
        q = wp.to_torch(model.joint_q, requires_grad=False).view(n, nq)
        q[:, 0:7] = torch.tensor([0.0, 0.0, float(base_height), 0.0, 0.0, 0.0, 1.0])
        q[:, leg_q[0] : leg_q[-1] + 1] = default_pos.to(q.device)
        wp.to_torch(model.joint_qd, requires_grad=False).zero_()
        target_q = wp.to_torch(model.joint_target_q, requires_grad=False).view(n, nq)
        target_q.copy_(q)
        dofs = slice(int(leg_d[0]), int(leg_d[-1]) + 1)
        for name, value in (("joint_target_ke", kp), ("joint_target_kd", kd)):
            wp.to_torch(getattr(model, name), requires_grad=False).view(n, nd)[:, dofs] = float(value)
        limits = torch.tensor([effort[name] for name in robot.joint_names])
        wp.to_torch(model.joint_effort_limit, requires_grad=False).view(n, nd)[:, dofs] = limits
        mode = wp.to_torch(model.joint_target_mode, requires_grad=False).view(n, nd)
        mode[:, dofs] = int(newton.JointTargetMode.POSITION)  # Isaac Lab's explicit actuators leave EFFORT
        newton.eval_fk(model, model.joint_q, model.joint_qd, model)

        # feet: the foot sphere of each *_FOOT body (the scene keeps the feet as bodies on fixed joints)
        shape_body, shape_tf = model.shape_body.numpy(), model.shape_transform.numpy()
        worlds = np.arange(n)
        foot_bodies, foot_shapes = np.zeros((n, 4), np.int64), np.zeros((n, 4), np.int64)
        foot_centers = []
        for k, leg in enumerate(LEGS):  # the env's per-foot order, as for the URDF model
            body = worlds * nb + leaf.index(f"{leg}_FOOT")
            shapes = np.array([i for i, label in enumerate(model.shape_label) if label.endswith(f"/{leg}_FOOT/sphere")])
            shapes = shapes[np.argsort(shape_body[shapes])] if shapes.size else shapes
            if shapes.size != n or not np.array_equal(shape_body[shapes], body):
                raise RuntimeError(f"asset_source='isaaclab': expected one {leg}_FOOT/sphere shape per world")
            foot_bodies[:, k], foot_shapes[:, k] = body, shapes
            foot_centers.append(tuple(float(v) for v in shape_tf[shapes[0]][:3]))
        radius = float(model.shape_scale.numpy()[foot_shapes[0, 0]][0])
        velocity = wp.to_torch(model.joint_velocity_limit, requires_grad=False).view(n, nd)[0, dofs]
        nj = len(robot.joint_names)
        return RobotLayout(
            num_worlds=n,
            bodies_per_world=nb,
            shapes_per_world=model.shape_count // n,  # the ground (plane or terrain): the one shape outside the worlds
            coords_per_world=nq,
            dofs_per_world=nd,
            joint_names=tuple(robot.joint_names),
            default_joint_pos=tuple(float(v) for v in default_pos),
            stiffness=(float(kp),) * nj,
            damping=(float(kd),) * nj,
            effort_limit=tuple(float(v) for v in limits),
            velocity_limit=tuple(float(v) for v in velocity),
            foot_names=LEGS,
            foot_radius=radius,
            foot_centers=tuple(foot_centers),
            base_body=worlds * nb + leaf.index("base"),
            foot_bodies=foot_bodies,
            foot_shapes=foot_shapes,
            q_start=worlds * nq,
            qd_start=worlds * nd,
        )

    def build_event_manager(self, events, seed: int, draw_seed: Callable[[], int]) -> None:
        """Isaac Lab's ``EventManager`` with Isaac Lab's event functions and the ranges of ``events``
        (:class:`DiffEventsCfg`), acting on the scene's ``Articulation``. The functions draw from torch's global
        generator, seeded for each call: with ``seed`` for the startup events, with a ``draw_seed()`` (a seed from the
        env's generator) for each reset and push. The terms:

        - startup: ``randomize_rigid_body_material`` (the feet), ``randomize_rigid_body_mass`` (the base,
          ``operation="add"``, ``recompute_inertia=True``), ``randomize_rigid_body_com`` (the base);
        - reset: ``reset_root_state_uniform`` (yaw uniform, base velocities within +-``reset_base_velocity``) and
          ``reset_joints_by_scale`` (default pose scaled by ``reset_joint_scale_range``, zero velocities).
        """
        from isaaclab.envs import mdp
        from isaaclab.managers import EventManager, EventTermCfg, SceneEntityCfg

        v = float(events.reset_base_velocity)
        terms = {
            "physics_material": EventTermCfg(
                func=mdp.randomize_rigid_body_material,
                mode="startup",
                params={
                    "asset_cfg": SceneEntityCfg("robot", body_names=".*_FOOT"),
                    "static_friction_range": tuple(events.foot_friction_range),
                    "dynamic_friction_range": tuple(events.foot_friction_range),
                    "restitution_range": (0.0, 0.0),
                    "num_buckets": 64,
                },
            ),
            "add_base_mass": EventTermCfg(
                func=mdp.randomize_rigid_body_mass,
                mode="startup",
                params={
                    "asset_cfg": SceneEntityCfg("robot", body_names="base"),
                    "mass_distribution_params": tuple(events.base_mass_add_range),
                    "operation": "add",
                    "recompute_inertia": True,
                    "min_mass": 1e-6,
                },
            ),
            "base_com": EventTermCfg(
                func=mdp.randomize_rigid_body_com,
                mode="startup",
                params={
                    "asset_cfg": SceneEntityCfg("robot", body_names="base"),
                    "com_range": {k: tuple(r) for k, r in events.base_com_range.items()},
                },
            ),
            "reset_base": EventTermCfg(
                func=mdp.reset_root_state_uniform,
                mode="reset",
                params={
                    "asset_cfg": SceneEntityCfg("robot"),
                    "pose_range": {"yaw": (-math.pi, math.pi)},
                    "velocity_range": {k: (-v, v) for k in ("x", "y", "z", "roll", "pitch", "yaw")},
                },
            ),
            "reset_robot_joints": EventTermCfg(
                func=mdp.reset_joints_by_scale,
                mode="reset",
                params={
                    "asset_cfg": SceneEntityCfg("robot"),
                    "position_range": tuple(events.reset_joint_scale_range),
                    "velocity_range": (0.0, 0.0),
                },
            ),
        }
        self.event_env = _EventEnv(self)
        self.event_manager = EventManager(terms, self.event_env)
        self._startup_seed, self._draw_seed = int(seed), draw_seed

    def apply_startup_events(self) -> None:
        """Apply the startup events; the model changes they report are passed on to ``solver``."""
        from isaaclab_newton.physics import NewtonManager

        with global_rng_seeded(self.device, self._startup_seed):
            self.event_manager.apply(mode="startup")
        for change in NewtonManager._model_changes:  # what NewtonManager.step would pass on before its next step
            self.solver.notify_model_changed(change)
        NewtonManager._model_changes = set()

    def apply_reset_events(self, envs: torch.Tensor, step_count: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Apply the reset events to the envs of the bool mask ``envs`` (``step_count``: the env's step counter, for
        the event manager); return the joint state they wrote, (q, qd) for all envs with the base in each env's own
        frame (rows of other envs are stale: merge by ``envs``)."""
        from isaaclab_newton.physics import NewtonManager

        seed = self._draw_seed()
        with global_rng_seeded(self.device, seed):
            self.event_manager.apply(mode="reset", env_ids=envs.nonzero().view(-1), global_env_step_count=step_count)
        state = NewtonManager.get_state_0()  # where the Articulation's root and joint bindings point
        n = self.scene.num_envs
        q = wp.to_torch(state.joint_q, requires_grad=False).view(n, -1).clone()
        qd = wp.to_torch(state.joint_qd, requires_grad=False).view(n, -1).clone()
        q[:, 0:3] -= self.env_origins
        return q, qd

    def apply_push(self, envs: torch.Tensor, velocity: float) -> torch.Tensor:
        """Isaac Lab's ``push_by_setting_velocity`` (base x and y velocity changes uniform in +-``velocity``) on the
        envs of the bool mask ``envs``; returns the joint-velocity change it wrote into the state, (num_envs, dofs),
        zero outside ``envs`` (the env adds it to its own differentiable state).

        The pushed envs' base velocity in Isaac Lab's state is zeroed first, so the change is the sampled velocity
        itself: that state is not the env's (it holds whatever was last written there), and a difference of two
        velocities read from it would round differently from one restore of the env's state to the next."""
        from isaaclab.envs import mdp
        from isaaclab.managers import SceneEntityCfg
        from isaaclab_newton.physics import NewtonManager

        seed = self._draw_seed()
        n = self.scene.num_envs
        ids = envs.nonzero().view(-1)
        self.robot.write_root_velocity_to_sim_index(
            root_velocity=torch.zeros(len(ids), 6, device=self.device), env_ids=ids
        )
        qd = wp.to_torch(NewtonManager.get_state_0().joint_qd, requires_grad=False).view(n, -1)
        before = qd.clone()
        with global_rng_seeded(self.device, seed):
            mdp.push_by_setting_velocity(
                self.event_env,
                ids,
                asset_cfg=SceneEntityCfg("robot"),
                velocity_range={"x": (-velocity, velocity), "y": (-velocity, velocity)},
            )
        return (qd - before) * envs[:, None]

    def set_solver(self, solver: SolverMoreauGS) -> None:
        """Replace the solver of ``model`` (a new contact model), in the physics manager too: one solver per model."""
        from isaaclab_newton.physics import NewtonManager

        if solver.model is not self.model:
            raise ValueError("AnymalCScene.set_solver: the solver was built for another model")
        NewtonManager._solver = solver
        self.solver = solver

    def close(self) -> None:
        """Stop and release Isaac Lab's simulation context (and with it the scene and manager)."""
        from isaaclab.sim import SimulationContext

        sim = getattr(self, "sim", None)
        if sim is None:
            return
        sim.stop()
        if hasattr(self, "scene"):
            del self.scene
        SimulationContext.clear_instance()
        self.sim = None


class _EventEnv:
    """What Isaac Lab's event terms and ``EventManager`` read from an env: the scene, the simulation context, the
    number of envs and the device. The differentiable env's own ``sim`` is its bridge simulator, so the terms get
    this view of the Isaac Lab side instead."""

    def __init__(self, scene: AnymalCScene):
        self.scene, self.sim = scene.scene, scene.sim
        self.num_envs, self.device = scene.scene.num_envs, str(scene.device)
