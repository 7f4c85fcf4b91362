"""Legged robots as USD files for Isaac Lab scenes, converted locally from their installed URDF (never downloaded).

On first use the URDF is converted with ``urdf-usd-converter`` and then made lean for articulated simulation: links
joined by fixed joints are merged into their parent body (masses, centres of mass and inertias combined by Newton's
``collapse_fixed_joints``, so the rigid-body dynamics are unchanged), except the feet, which stay bodies so that
Isaac Lab's contact sensors and feet terms find them by name. The converter's fixed joint to the world is removed
(floating base), and the bodies are made direct children of the asset root, like Isaac Lab's robot USDs
(``/Robot/base``, ``/Robot/LF_FOOT``, ...). A robot whose URDF feet are meshes gets a collision sphere per foot
(``<foot>/sphere``), the one contact point per foot that the DiffSim presets collide.

The result is cached with a manifest under ``<cache>/<name>/``; a missing, stale or corrupt cache is rebuilt, and a
failed rebuild raises. Processes sharing the cache: a build holds an exclusive file lock (``<name>.lock``) and checks
the cache again once it has it, so concurrent first uses build once. The build goes into a fresh folder, and
``<name>`` is a symbolic link switched to it in one atomic rename, so a reader sees either the previous complete
asset or the new one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import json
import logging
import os
import shutil
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .robot_cfg import DiffRobotCfg

logger = logging.getLogger(__name__)

FORMAT_VERSION = 2
"""Bump when the post-processing changes, so existing caches are rebuilt."""


@dataclass(frozen=True)
class UsdConversion:
    """What the conversion of one robot needs: its name, URDF, foot links and (optionally) added foot spheres."""

    name: str
    """Cache folder, lock and file name (``<name>/<name>.usda``)."""
    urdf: Path
    foot_links: tuple[str, ...]
    """URDF links kept as bodies although fixed joints attach them."""
    sphere_links: tuple[str, ...] = ()
    """Foot links that get a collision sphere ``<link>/sphere`` (each one of ``foot_links``)."""
    sphere_radius: float = 0.0
    sphere_center: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Sphere centre in the link's frame [m]."""

    @property
    def usd_name(self) -> str:
        return f"{self.name}.usda"

    def fingerprint(self) -> dict:
        """What the cached asset was built from; a different one means a rebuild."""
        out = {
            "format": FORMAT_VERSION,
            "urdf_sha256": hashlib.sha256(self.urdf.read_bytes()).hexdigest(),
            "converter": importlib.metadata.version("urdf-usd-converter"),
        }
        if self.sphere_links:
            out["foot_sphere"] = {
                "links": list(self.sphere_links),
                "radius": self.sphere_radius,
                "center": list(self.sphere_center),
            }
        return out

    def body_names(self) -> tuple[str, ...]:
        """Rigid bodies of the lean articulation: the URDF's root link, the children of its moving joints, the feet."""
        root = ET.parse(self.urdf).getroot()
        parent_joint = {j.find("child").get("link"): j.get("type") for j in root.findall("joint")}
        links = [link.get("name") for link in root.findall("link")]
        bodies = {n for n in links if n not in parent_joint or parent_joint[n] != "fixed"}
        return tuple(sorted(bodies | set(self.foot_links)))


def robot_usd_conversion(robot: DiffRobotCfg) -> UsdConversion:
    """The conversion of ``robot``: its feet ``robot.foot_link`` per leg, plus ``robot.foot_sphere`` if set."""
    feet = tuple(robot.foot_link.format(leg=leg) for leg in robot.legs)
    sphere = robot.foot_sphere
    if sphere is None:
        return UsdConversion(robot.name, robot.urdf_path(), feet)
    links = tuple(sphere.link.format(leg=leg) for leg in robot.legs)
    if not set(links) <= set(feet):
        raise ValueError(f"robot {robot.name!r}: foot_sphere.link {sphere.link!r} must be its foot_link")
    return UsdConversion(
        robot.name, robot.urdf_path(), feet, links, float(sphere.radius), tuple(float(c) for c in sphere.center)
    )


def robot_usd_path(robot: DiffRobotCfg, cache_dir: str | Path | None = None, rebuild: bool = False) -> Path:
    """Path of ``robot``'s cached USD, converting its URDF first if the cache is missing or invalid."""
    return cached_usd_path(robot_usd_conversion(robot), cache_dir, rebuild)


def asset_cache_dir() -> Path:
    """Cache folder: ``$ISAACLAB_DIFFSIM_ASSET_DIR`` or ``~/.cache/isaaclab_diffsim/assets``."""
    root = os.environ.get("ISAACLAB_DIFFSIM_ASSET_DIR")
    return Path(root) if root else Path.home() / ".cache" / "isaaclab_diffsim" / "assets"


class AssetCacheError(OSError):
    """The asset cache folder cannot be written; the message names ``ISAACLAB_DIFFSIM_ASSET_DIR``."""


def writable_cache_folder(folder: Path) -> Path:
    """``folder``, created if needed; AssetCacheError if it cannot be created or written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write_test_{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as err:
        raise AssetCacheError(
            f"asset cache {folder} is not writable ({err.strerror or err}): the robot USDs and the ground plane are "
            "generated there on first use; set ISAACLAB_DIFFSIM_ASSET_DIR to a writable folder"
        ) from err
    return folder


def cached_usd_path(conv: UsdConversion, cache_dir: str | Path | None = None, rebuild: bool = False) -> Path:
    """Path of the cached USD of ``conv``, converting the URDF first if the cache is missing or invalid."""
    folder = Path(cache_dir) if cache_dir is not None else asset_cache_dir()
    target = folder / conv.name
    expected = conv.fingerprint()
    bodies = conv.body_names()
    if not rebuild and cache_problem(target, expected, conv.usd_name, bodies) is None:
        return target / conv.usd_name
    with _exclusive_lock(writable_cache_folder(folder) / f"{conv.name}.lock"):
        problem = cache_problem(target, expected, conv.usd_name, bodies)  # another process may have built it
        if problem is None and not rebuild:
            return target / conv.usd_name
        if problem is not None and ((target / "manifest.json").exists() or (target / conv.usd_name).exists()):
            logger.warning("%s USD cache at %s is unusable (%s): rebuilding it.", conv.name, target, problem)
        _build(conv, target, expected)
        problem = cache_problem(target, expected, conv.usd_name, bodies)
    if problem is not None:
        raise RuntimeError(f"{conv.name} USD conversion into {target} produced an invalid asset: {problem}")
    return target / conv.usd_name


def cache_problem(target: Path, expected: dict, usd_name: str, body_names) -> str | None:
    """Why the cached asset in ``target`` cannot be used, or None."""
    manifest = target / "manifest.json"
    if not manifest.is_file() or not (target / usd_name).is_file():
        return "missing"
    try:
        stored = json.loads(manifest.read_text())
    except (OSError, ValueError) as exc:
        return f"unreadable manifest ({exc})"
    if stored.get("fingerprint") != expected:
        return "built from another URDF, converter or format version"
    from pxr import Tf, Usd, UsdPhysics

    try:
        stage = Usd.Stage.Open(str(target / usd_name))
    except Tf.ErrorException as exc:
        return f"USD stage does not open ({str(exc).strip().splitlines()[-1]})"
    if stage is None:
        return "USD stage does not open"
    bodies = sorted(p.GetName() for p in stage.Traverse() if p.HasAPI(UsdPhysics.RigidBodyAPI))
    if bodies != sorted(body_names):
        return f"unexpected rigid bodies {bodies}"
    masses = [stage.GetPrimAtPath(p).GetAttribute("physics:mass").Get() for p in stored.get("body_paths", [])]
    if not masses or any(m is None for m in masses):
        return "bodies listed in the manifest have no mass"
    mass = sum(masses)
    if not abs(mass - stored["total_mass"]) < 1e-3:
        return f"total mass {mass} differs from the manifest's {stored['total_mass']}"
    return None


@contextlib.contextmanager
def _exclusive_lock(path: Path):
    """Hold an exclusive ``flock`` on ``path`` (created if needed) for the block; blocks until it is free."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _publish(staging: Path, target: Path) -> None:
    """Make ``target`` a symbolic link to ``staging`` in one atomic rename; remove what it replaced."""
    link = target.parent / f".{target.name}.link-{os.getpid()}"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(staging.name)
    old = None
    if target.is_symlink():
        old = target.parent / os.readlink(target)
    elif target.exists():  # a cache from before the link layout: move it aside (readers wait on the lock meanwhile)
        old = target.parent / f".{target.name}.old-{os.getpid()}"
        target.rename(old)
    os.replace(link, target)
    if old is not None and old.resolve() != staging.resolve():
        shutil.rmtree(old, ignore_errors=True)


def _build(conv: UsdConversion, target: Path, fingerprint: dict) -> None:
    try:
        from urdf_usd_converter import Converter
    except ImportError as exc:  # pragma: no cover - dependency of this package
        raise RuntimeError(
            f"urdf-usd-converter is required to build the {conv.name} USD (pip install urdf-usd-converter)"
        ) from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{conv.name}_", dir=target.parent))
    try:
        logger.info("Converting %s to USD in %s (first use).", conv.urdf, target)
        raw = Path(Converter(layer_structure=False, scene=False).convert(str(conv.urdf), str(staging / "raw")).path)
        body_paths, total_mass = make_lean(raw, staging / conv.usd_name, conv)
        # textures referenced by relative paths sit next to the layer
        if (raw.parent / "Textures").is_dir():
            shutil.move(str(raw.parent / "Textures"), staging / "Textures")
        shutil.rmtree(staging / "raw")
        manifest = {
            "fingerprint": fingerprint,
            "body_paths": body_paths,
            "total_mass": total_mass,
            "built_by_pid": os.getpid(),
        }
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=1))
        staging.chmod(0o755)  # mkdtemp makes it private
        _publish(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def make_lean(raw: Path, out: Path, conv: UsdConversion) -> tuple[list[str], float]:
    """Flatten the converted stage into ``out``, merging fixed-joint links (feet kept) into their parents, then add
    the foot spheres. Returns the body paths and the total mass."""
    import newton
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

    stage = Usd.Stage.Open(str(raw))
    root = stage.GetDefaultPrim()
    # Newton computes the merged inertial properties (parallel-axis theorem) from the shipped link inertials.
    builder = newton.ModelBuilder()
    result = builder.add_usd(stage, root_path=str(root.GetPath()), load_visual_shapes=False)
    body_of_path = dict(result["path_body_map"])
    fixed = [i for i in range(builder.joint_count) if builder.joint_type[i] == newton.JointType.FIXED]

    def leaf(label: str) -> str:
        return label.rsplit("/", 1)[-1]

    feet = set(conv.foot_links)
    keep = [i for i in fixed if leaf(builder.body_label[builder.joint_child[i]]) in feet]  # the feet's joints
    keep_names = {leaf(builder.joint_label[i]) for i in keep}
    world_joints = [i for i in fixed if builder.joint_parent[i] < 0]  # the converter's fixed joint to the world
    builder.collapse_fixed_joints(joints_to_keep=keep + world_joints)

    out_stage = Usd.Stage.CreateInMemory()
    out_stage.GetRootLayer().TransferContent(stage.Flatten())
    xf = UsdGeom.XformCache()

    def world(prim_path: str) -> Gf.Matrix4d:
        return xf.GetLocalToWorldTransform(out_stage.GetPrimAtPath(prim_path))

    survivors = {builder.body_label[b]: b for b in range(builder.body_count)}
    missing = feet - {leaf(p) for p in survivors}
    if missing:
        raise RuntimeError(f"the converted {conv.name} has no foot bodies {sorted(missing)}")
    merged_into: dict[str, str] = {}
    for path in body_of_path:
        if path in survivors:
            continue
        anc = Sdf.Path(path).GetParentPath()
        while str(anc) not in survivors:
            if anc.IsAbsoluteRootPath():
                raise RuntimeError(f"no surviving ancestor body for the merged link {path}")
            anc = anc.GetParentPath()
        merged_into[path] = str(anc)

    # joints: drop the world joint and the collapsed fixed joints, re-anchor the others on surviving bodies
    for prim in list(out_stage.Traverse()):
        if not prim.IsA(UsdPhysics.Joint):
            continue
        joint = UsdPhysics.Joint(prim)
        b0 = [str(t) for t in joint.GetBody0Rel().GetTargets()]
        b1 = [str(t) for t in joint.GetBody1Rel().GetTargets()]
        is_world = not b0 or b0[0] not in body_of_path
        collapsed = prim.IsA(UsdPhysics.FixedJoint) and prim.GetName() not in keep_names
        if is_world or collapsed:
            out_stage.RemovePrim(prim.GetPath())
            continue
        for rel, side, targets in ((joint.GetBody0Rel(), 0, b0), (joint.GetBody1Rel(), 1, b1)):
            if targets and targets[0] in merged_into:
                _reanchor(joint, side, world(targets[0]), world(merged_into[targets[0]]))
                rel.SetTargets([Sdf.Path(merged_into[targets[0]])])

    for path in merged_into:
        prim = out_stage.GetPrimAtPath(path)
        prim.RemoveAPI(UsdPhysics.MassAPI)
        prim.RemoveAPI(UsdPhysics.RigidBodyAPI)
        for name in (
            "physics:mass",
            "physics:centerOfMass",
            "physics:diagonalInertia",
            "physics:principalAxes",
            "newton:inertia",
        ):
            if prim.HasAttribute(name):
                prim.RemoveProperty(name)
    total = 0.0
    for path, b in survivors.items():
        _write_inertial(out_stage.GetPrimAtPath(path), builder, b)
        total += float(builder.body_mass[b])
    moved = _flatten_bodies(out_stage, list(survivors), str(root.GetPath()))
    for path in moved.values():
        if Sdf.Path(path).name in conv.sphere_links:
            _add_foot_sphere(out_stage, path, conv.sphere_radius, conv.sphere_center)
    out_stage.GetRootLayer().Export(str(out))
    return sorted(moved.values()), total


def _add_foot_sphere(stage, body_path: str, radius: float, center) -> None:
    """A collision sphere ``<body>/sphere`` (a guide, like the converter's primitive colliders); no mass (the body's
    authored mass is the URDF's)."""
    from pxr import Gf, UsdGeom, UsdPhysics

    path = f"{body_path}/sphere"
    if stage.GetPrimAtPath(path):
        raise RuntimeError(f"{path} exists already")
    sphere = UsdGeom.Sphere.Define(stage, path)
    sphere.CreateRadiusAttr(float(radius))
    sphere.CreateExtentAttr([Gf.Vec3f(-radius), Gf.Vec3f(radius)])
    sphere.CreatePurposeAttr(UsdGeom.Tokens.guide)
    sphere.AddTranslateOp().Set(Gf.Vec3d(*center))
    UsdPhysics.CollisionAPI.Apply(sphere.GetPrim())
    sphere.GetPrim().AddAppliedSchema("NewtonCollisionAPI")


def _flatten_bodies(stage, body_paths: list[str], root_path: str) -> dict[str, str]:
    """Make every rigid body a direct child of the asset root, as in Isaac Lab's robot USDs (so patterns like
    ``{ENV_REGEX_NS}/Robot/base`` or ``Robot/[^/]*`` match), keeping world poses; relationship targets follow."""
    from pxr import Sdf, UsdGeom

    xf = UsdGeom.XformCache()
    root_inv = xf.GetLocalToWorldTransform(stage.GetPrimAtPath(root_path)).GetInverse()
    local = {p: xf.GetLocalToWorldTransform(stage.GetPrimAtPath(p)) * root_inv for p in body_paths}
    moves = {p: f"{root_path}/{Sdf.Path(p).name}" for p in body_paths}
    if len(set(moves.values())) != len(moves):
        raise RuntimeError(f"body names are not unique: {sorted(moves.values())}")
    layer = stage.GetRootLayer()
    for old in sorted(body_paths, key=lambda p: -p.count("/")):  # deepest first: children leave before parents
        if moves[old] != old:
            edit = Sdf.BatchNamespaceEdit()
            edit.Add(old, moves[old])
            if not layer.Apply(edit):
                raise RuntimeError(f"could not move {old} to {moves[old]}")
    for old, new in moves.items():
        UsdGeom.Xformable(stage.GetPrimAtPath(new)).MakeMatrixXform().Set(local[old])

    by_depth = sorted(moves, key=lambda p: -p.count("/"))

    def remap(target: Sdf.Path) -> Sdf.Path:
        text = str(target)
        for old in by_depth:  # the deepest moved body that contains the target
            if text == old or text.startswith(old + "/"):
                return Sdf.Path(moves[old] + text[len(old) :])
        return target

    for prim in stage.TraverseAll():
        for rel in prim.GetRelationships():
            targets = rel.GetTargets()
            new_targets = [remap(t) for t in targets]
            if new_targets != list(targets):
                rel.SetTargets(new_targets)
    return moves


def _reanchor(joint, side: int, body_world, anc_world) -> None:
    """Express a joint frame given in ``body``'s frame in the surviving ancestor's frame instead."""
    from pxr import Gf

    pos_attr = joint.GetLocalPos0Attr() if side == 0 else joint.GetLocalPos1Attr()
    rot_attr = joint.GetLocalRot0Attr() if side == 0 else joint.GetLocalRot1Attr()
    local = Gf.Matrix4d().SetRotate(Gf.Rotation(Gf.Quatd(rot_attr.Get())))
    local.SetTranslateOnly(Gf.Vec3d(pos_attr.Get()))
    rel = local * body_world * anc_world.GetInverse()  # USD row-vector convention: child * parent
    rel.Orthonormalize()
    pos_attr.Set(Gf.Vec3f(rel.ExtractTranslation()))
    rot_attr.Set(Gf.Quatf(rel.ExtractRotationQuat()))


def _write_inertial(prim, builder, body: int) -> None:
    """Mass, centre of mass and inertia (about the CoM, body frame) as UsdPhysics MassAPI values."""
    from pxr import Gf, UsdPhysics

    inertia = np.array(builder.body_inertia[body], dtype=np.float64).reshape(3, 3)
    inertia = 0.5 * (inertia + inertia.T)
    eigvals, eigvecs = np.linalg.eigh(inertia)
    if np.linalg.det(eigvecs) < 0:
        eigvecs[:, 0] = -eigvecs[:, 0]
    axes = Gf.Matrix3d(*eigvecs.T.flatten().tolist())  # rows = principal axes (USD row-vector convention)
    mass_api = UsdPhysics.MassAPI.Apply(prim)
    mass_api.CreateMassAttr().Set(float(builder.body_mass[body]))
    mass_api.CreateCenterOfMassAttr().Set(Gf.Vec3f(*[float(c) for c in builder.body_com[body]]))
    mass_api.CreateDiagonalInertiaAttr().Set(Gf.Vec3f(*eigvals.tolist()))
    mass_api.CreatePrincipalAxesAttr().Set(Gf.Quatf(axes.ExtractRotation().GetQuat()))
    if prim.HasAttribute("newton:inertia"):
        prim.RemoveProperty("newton:inertia")
