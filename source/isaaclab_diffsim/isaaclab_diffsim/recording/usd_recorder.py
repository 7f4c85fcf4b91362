"""``RolloutRecorder``: a time-sampled USD of a :class:`~isaaclab_diffsim.envs.DiffDirectRLEnv` rollout (pxr only).

Layout (names in :data:`.schema.SCHEMA`, also stored in the layer's ``customLayerData``)::

    /World                                   default prim, z up, metres, one time code per policy step
      ground                                 quad under the recorded robots
      RobotPrototypes/<body>/shape_<k>       class prims: each body's geometry once (the model's shapes)
      envs/env_<i>/Robot                     one per recorded env; primvars:actor_grad_norm per step
      envs/env_<i>/Robot/<body>              references its prototype; translate/orient per step (world frame)
      envs/env_<i>/Feet/<leg>                BasisCurves arrow along the contact force, with per-step primvars
                                             contact_force, signed_distance, contact_weight, contact_point

Body poses are those of the env's state after each step (forward kinematics of ``env.q``); the contact data are
the solver's last substep of that step. The file opens in usdview, Omniverse USD Composer and Isaac Sim.
"""

from __future__ import annotations

import os

import newton
import numpy as np

from ..assets.anymal_c import LEGS
from .foot_contacts import FootContactReader
from .schema import LAYER_KEY, SCHEMA

ROBOT_COLOR = (0.62, 0.64, 0.68)
GROUND_COLOR = (0.35, 0.37, 0.40)


def _pxr():
    try:
        from pxr import Gf, Sdf, Usd, UsdGeom, Vt
    except ImportError as err:  # usd-core ships with isaaclab; say what is missing if it does not
        raise ImportError("recording needs the 'pxr' module (usd-core)") from err
    return Gf, Sdf, Usd, UsdGeom, Vt


def _leaf(label: str) -> str:
    """A valid prim name from a Newton label (its last path component)."""
    from pxr import Tf

    return Tf.MakeValidIdentifier(label.rsplit("/", 1)[-1])


class RolloutRecorder:
    """Writes the first ``record_envs`` robots of ``env``, one frame per :meth:`add_step` call.

    Args:
        env: A :class:`~isaaclab_diffsim.envs.DiffDirectRLEnv` (its model, solver, state and foot layout are read).
        path: Output file (``.usd``, ``.usda`` or ``.usdc``).
        record_envs: How many envs (the first ones) to record.
        geometry: ``"all"`` (every shape on the robot's bodies except sites, whatever its collision flags: the
            Isaac Lab-built model holds the asset's collision geometry, cylinders, boxes and foot spheres) or
            ``"visual"`` (only shapes flagged visible).
        max_frames: Frames after which :meth:`add_step` raises (bounds the file; None: unbounded).
    """

    def __init__(self, env, path: str, record_envs: int = 4, geometry: str = "all", max_frames: int | None = None):
        if not 1 <= record_envs <= env.num_envs:
            raise ValueError(f"record_envs must be in [1, {env.num_envs}], got {record_envs}")
        if geometry not in ("all", "visual"):
            raise ValueError(f"geometry must be 'all' or 'visual', got {geometry!r}")
        Gf, Sdf, Usd, UsdGeom, Vt = _pxr()
        self.env, self.path, self.record_envs, self.max_frames = (
            env,
            os.path.abspath(path),
            int(record_envs),
            max_frames,
        )
        self.contacts = FootContactReader(env)
        self.frames = 0
        self.schema = dict(SCHEMA)
        layer = Sdf.Layer.Find(self.path)
        if layer is not None:
            layer.Clear()
            self.stage = Usd.Stage.Open(layer)
        else:
            self.stage = Usd.Stage.CreateNew(self.path)
        stage = self.stage
        UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
        UsdGeom.SetStageMetersPerUnit(stage, 1.0)
        rate = 1.0 / env.step_dt
        stage.SetTimeCodesPerSecond(rate)
        stage.SetFramesPerSecond(rate)
        stage.SetStartTimeCode(0)
        world = UsdGeom.Xform.Define(stage, "/World")
        stage.SetDefaultPrim(world.GetPrim())

        nb = env.layout.bodies_per_world
        model = env.model
        self.body_names = [_leaf(label) for label in model.body_label[:nb]]
        if len(set(self.body_names)) != nb:
            raise RuntimeError(f"body names are not unique within a world: {self.body_names}")
        self.legs = list(LEGS)
        self._write_prototypes(geometry, nb)
        self.origins = env.env_origins[: self.record_envs].detach().cpu().numpy().astype(np.float64)
        self._write_ground()
        self._body_ops, self._feet, self._robots = [], [], []
        for i in range(self.record_envs):
            self._define_env(i)
        self._grad_rows: list[int] = []
        meta = dict(self.schema)
        meta.update(
            legs=Vt.StringArray(self.legs),
            bodies=Vt.StringArray(self.body_names),
            num_envs=self.record_envs,
            step_dt=float(env.step_dt),
            contact_model=str(env.sim.solver.contact_model),
            kappa=float(env.sim.solver.kappa),
            margin=float(env.sim.solver.margin),
            geometry=geometry,
            frames=0,
        )
        self._meta = meta
        stage.GetRootLayer().customLayerData = {LAYER_KEY: meta}

    # ------------------------------------------------------------------ static content
    def _write_prototypes(self, geometry: str, nb: int):
        Gf, Sdf, Usd, UsdGeom, Vt = _pxr()
        model, stage = self.env.model, self.stage
        root = stage.CreateClassPrim(self.schema["prototypes_path"])
        shape_body = model.shape_body.numpy()
        flags, types = model.shape_flags.numpy(), model.shape_type.numpy()
        keep = (flags & int(newton.ShapeFlags.SITE)) == 0
        if geometry == "visual":
            keep &= (flags & int(newton.ShapeFlags.VISIBLE)) != 0
        tf, scale = model.shape_transform.numpy(), model.shape_scale.numpy()
        self.prototype_paths = []
        written = 0
        for b in range(nb):
            path = root.GetPath().AppendChild(self.body_names[b])
            UsdGeom.Xform.Define(stage, path)
            self.prototype_paths.append(path)
            for k, s in enumerate(np.nonzero((shape_body == b) & keep)[0]):
                prim = self._define_shape(path.AppendChild(f"shape_{k}"), int(s), int(types[s]), scale[s])
                xf = UsdGeom.Xformable(prim)
                xf.AddTranslateOp().Set(Gf.Vec3d(*map(float, tf[s][:3])))
                qx, qy, qz, qw = map(float, tf[s][3:7])
                xf.AddOrientOp().Set(Gf.Quatf(qw, qx, qy, qz))
                if int(types[s]) == newton.GeoType.BOX:  # a cube of size 2 scaled by the half extents
                    xf.AddScaleOp().Set(Gf.Vec3f(*map(float, scale[s][:3])))
                written += 1
        if written == 0:
            raise RuntimeError(f"the model has no {geometry} shapes on the robot's bodies")

    def _define_shape(self, path, s: int, kind: int, scale):
        Gf, Sdf, Usd, UsdGeom, Vt = _pxr()
        G, stage = newton.GeoType, self.stage
        if kind == G.SPHERE:
            prim = UsdGeom.Sphere.Define(stage, path)
            prim.CreateRadiusAttr(float(scale[0]))
        elif kind in (G.CAPSULE, G.CYLINDER):
            prim = (UsdGeom.Capsule if kind == G.CAPSULE else UsdGeom.Cylinder).Define(stage, path)
            prim.CreateRadiusAttr(float(scale[0]))
            prim.CreateHeightAttr(2.0 * float(scale[1]))
            prim.CreateAxisAttr(UsdGeom.Tokens.z)
        elif kind == G.BOX:
            prim = UsdGeom.Cube.Define(stage, path)
            prim.CreateSizeAttr(2.0)
        elif kind in (G.MESH, G.CONVEX_MESH):
            mesh = self.env.model.shape_source[s]
            if mesh is None:
                raise RuntimeError(f"shape {s} is a mesh without vertices in the model")
            pts = np.asarray(mesh.vertices, dtype=np.float64) * np.asarray(scale, dtype=np.float64)
            tris = np.asarray(mesh.indices, dtype=np.int32).reshape(-1)
            prim = UsdGeom.Mesh.Define(stage, path)
            prim.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(pts.astype(np.float32)))
            prim.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(tris.size // 3, 3, np.int32)))
            prim.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(tris))
            prim.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
        else:
            raise ValueError(f"shape {s}: geometry type {G(kind).name} cannot be recorded")
        return prim.GetPrim()

    def _write_ground(self):
        """A quad under the robots; :meth:`save` extends it over everywhere they went."""
        Gf, Sdf, Usd, UsdGeom, Vt = _pxr()
        self._xy_lo, self._xy_hi = self.origins[:, :2].min(0), self.origins[:, :2].max(0)
        ground = UsdGeom.Mesh.Define(self.stage, "/World/ground")
        self._ground_points = ground.CreatePointsAttr()
        self._update_ground()
        ground.CreateFaceVertexCountsAttr([4])
        ground.CreateFaceVertexIndicesAttr([0, 1, 2, 3])
        ground.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
        ground.CreateDisplayColorAttr([Gf.Vec3f(*GROUND_COLOR)])

    def _update_ground(self, pad: float = 3.0):
        Gf = _pxr()[0]
        lo, hi = self._xy_lo - pad, self._xy_hi + pad
        self._ground_points.Set(
            [Gf.Vec3f(lo[0], lo[1], 0), Gf.Vec3f(hi[0], lo[1], 0), Gf.Vec3f(hi[0], hi[1], 0), Gf.Vec3f(lo[0], hi[1], 0)]
        )

    def _define_env(self, i: int):
        Gf, Sdf, Usd, UsdGeom, Vt = _pxr()
        sc, stage = self.schema, self.stage
        env_path = f"{sc['envs_path']}/{sc['env_prefix']}{i}"
        UsdGeom.Xform.Define(stage, env_path)
        robot = UsdGeom.Xform.Define(stage, f"{env_path}/{sc['robot_name']}")
        rp = robot.GetPrim()
        rp.CreateAttribute(sc["origin_attr"], Sdf.ValueTypeNames.Double3).Set(Gf.Vec3d(*self.origins[i]))
        # inherited by the body geometry, which authors no colour of its own (the Kit extension recolours it)
        UsdGeom.PrimvarsAPI(rp).CreatePrimvar(
            "displayColor", Sdf.ValueTypeNames.Color3fArray, UsdGeom.Tokens.constant
        ).Set([Gf.Vec3f(*ROBOT_COLOR)])
        self._robots.append(rp)
        ops = []
        for b, name in enumerate(self.body_names):
            body = UsdGeom.Xform.Define(stage, f"{robot.GetPath()}/{name}")
            body.GetPrim().GetReferences().AddInternalReference(self.prototype_paths[b])
            ops.append((body.AddTranslateOp().GetAttr().GetPath(), body.AddOrientOp().GetAttr().GetPath()))
        self._body_ops.append(ops)
        UsdGeom.Scope.Define(stage, f"{env_path}/{sc['feet_scope']}")
        feet = []
        pv = UsdGeom.PrimvarsAPI
        for leg in self.legs:
            curve = UsdGeom.BasisCurves.Define(stage, f"{env_path}/{sc['feet_scope']}/{leg}")
            curve.CreateTypeAttr(UsdGeom.Tokens.linear)
            curve.CreateCurveVertexCountsAttr([2])
            curve.CreateWidthsAttr([0.025, 0.004])  # tapering: the thin end is the arrow's tip
            curve.SetWidthsInterpolation(UsdGeom.Tokens.vertex)
            api = pv(curve.GetPrim())
            attrs = {
                "points": curve.CreatePointsAttr(),
                "force": api.CreatePrimvar(
                    sc["force_attr"].split(":", 1)[1], Sdf.ValueTypeNames.Vector3f, UsdGeom.Tokens.constant
                ),
                "distance": api.CreatePrimvar(
                    sc["distance_attr"].split(":", 1)[1], Sdf.ValueTypeNames.Float, UsdGeom.Tokens.constant
                ),
                "weight": api.CreatePrimvar(
                    sc["weight_attr"].split(":", 1)[1], Sdf.ValueTypeNames.Float, UsdGeom.Tokens.constant
                ),
                "point": api.CreatePrimvar(
                    sc["point_attr"].split(":", 1)[1], Sdf.ValueTypeNames.Point3f, UsdGeom.Tokens.constant
                ),
                "color": curve.CreateDisplayColorPrimvar(UsdGeom.Tokens.constant),
            }
            feet.append({k: a.GetAttr().GetPath() if hasattr(a, "GetAttr") else a.GetPath() for k, a in attrs.items()})
        self._feet.append(feet)

    # ------------------------------------------------------------------ frames
    def add_step(self, grad_norm: np.ndarray | None = None) -> int:
        """Record the env's current state and the contact data of its last step; returns the frame's time code.
        ``grad_norm`` (record_envs,) writes the per-robot gradient magnitude now (see also :meth:`set_grad_norms`)."""
        Gf, Sdf, Usd, UsdGeom, Vt = _pxr()
        if self.max_frames is not None and self.frames >= self.max_frames:
            raise RuntimeError(f"RolloutRecorder: max_frames={self.max_frames} reached")
        t = float(self.frames)
        body_q = self.contacts.body_q()
        feet = self.contacts.read(body_q)
        nb = len(self.body_names)
        xy = body_q[: self.record_envs * nb, :2]
        self._xy_lo, self._xy_hi = np.minimum(self._xy_lo, xy.min(0)), np.maximum(self._xy_hi, xy.max(0))
        with Sdf.ChangeBlock():  # one change notification per frame instead of one per value
            self._write_frame(t, body_q, feet, nb)
        self.frames += 1
        if grad_norm is not None:
            self.set_grad_norms(self.frames - 1, np.asarray(grad_norm).reshape(1, -1))
        return self.frames - 1

    def _write_frame(self, t: float, body_q: np.ndarray, feet, nb: int) -> None:
        """Time samples of one frame, written straight into the layer (twice as fast as attribute ``Set``)."""
        Gf = _pxr()[0]
        put = self.stage.GetRootLayer().SetTimeSample
        scale = float(self.schema["force_scale_m_per_n"])
        for i in range(self.record_envs):
            for (tr, orient), pose in zip(self._body_ops[i], body_q[i * nb : (i + 1) * nb].tolist()):
                put(tr, t, Gf.Vec3d(pose[0], pose[1], pose[2]))
                put(orient, t, Gf.Quatf(pose[6], pose[3], pose[4], pose[5]))
            for k, paths in enumerate(self._feet[i]):
                p, f = feet.point[i, k].tolist(), feet.force[i, k].tolist()
                w = float(feet.weight[i, k])
                tip = Gf.Vec3f(p[0] + scale * f[0], p[1] + scale * f[1], p[2] + scale * f[2])
                put(paths["points"], t, [Gf.Vec3f(*p), tip])
                put(paths["force"], t, Gf.Vec3f(*f))
                put(paths["distance"], t, float(feet.distance[i, k]))
                put(paths["weight"], t, w)
                put(paths["point"], t, Gf.Vec3f(*p))
                put(paths["color"], t, [Gf.Vec3f(w, 0.2, 1.0 - w)])  # blue: no contact weight, red: full

    def set_grad_norms(self, first_frame: int, norms: np.ndarray) -> None:
        """Write per-step gradient magnitudes (steps, record_envs) starting at ``first_frame`` (frames recorded
        before the backward pass that produced them)."""
        Gf, Sdf, Usd, UsdGeom, Vt = _pxr()
        norms = np.asarray(norms, dtype=np.float64)
        if norms.ndim != 2 or norms.shape[1] != self.record_envs:
            raise ValueError(f"norms must have shape (steps, {self.record_envs}), got {norms.shape}")
        if first_frame < 0 or first_frame + norms.shape[0] > self.frames:
            raise ValueError(f"frames {first_frame}..{first_frame + norms.shape[0] - 1} are not all recorded")
        for i, robot in enumerate(self._robots):
            attr = robot.GetAttribute(self.schema["grad_attr"])
            if not attr:
                attr = (
                    UsdGeom.PrimvarsAPI(robot)
                    .CreatePrimvar(
                        self.schema["grad_attr"].split(":", 1)[1], Sdf.ValueTypeNames.Float, UsdGeom.Tokens.constant
                    )
                    .GetAttr()
                )
            for s in range(norms.shape[0]):
                attr.Set(float(norms[s, i]), Usd.TimeCode(first_frame + s))

    def save(self) -> str:
        """Write the file (can be called repeatedly); returns its path."""
        self._meta["frames"] = self.frames
        self.stage.GetRootLayer().customLayerData = {LAYER_KEY: self._meta}
        self.stage.SetEndTimeCode(max(self.frames - 1, 0))
        self._update_ground()
        self.stage.Save()
        return self.path
