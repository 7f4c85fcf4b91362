"""A local ground-plane USD (Isaac Lab's default grid plane lives on the asset server)."""

from __future__ import annotations

from pathlib import Path

from .robot_usd import asset_cache_dir, writable_cache_folder

GROUND_PLANE_VERSION = 1


def ground_plane_usd_path(static_friction: float = 1.0, dynamic_friction: float = 1.0, cache_dir=None) -> Path:
    """USD file with an infinite collision plane (z up, through the origin) and a physics material.

    Written on first use into the asset cache (one file per friction pair); a file that does not open
    as a stage with that plane is rewritten.
    """
    from pxr import Tf, Usd, UsdGeom, UsdPhysics, UsdShade

    folder = Path(cache_dir) if cache_dir is not None else asset_cache_dir()
    path = (
        folder
        / "ground_plane"
        / f"ground_plane_v{GROUND_PLANE_VERSION}_mu{static_friction:g}_{dynamic_friction:g}.usda"
    )
    if path.is_file():
        try:
            stage = Usd.Stage.Open(str(path))
        except Tf.ErrorException:
            stage = None
        if stage is not None and stage.GetPrimAtPath("/GroundPlane/CollisionPlane").IsA(UsdGeom.Plane):
            return path
    writable_cache_folder(path.parent)
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    root = UsdGeom.Xform.Define(stage, "/GroundPlane")
    stage.SetDefaultPrim(root.GetPrim())
    plane = UsdGeom.Plane.Define(stage, "/GroundPlane/CollisionPlane")
    plane.CreateAxisAttr(UsdGeom.Tokens.z)
    plane.CreateWidthAttr(100.0)  # visual extent; the collision plane is infinite
    plane.CreateLengthAttr(100.0)
    UsdPhysics.CollisionAPI.Apply(plane.GetPrim())
    material = UsdShade.Material.Define(stage, "/GroundPlane/PhysicsMaterial")
    material_api = UsdPhysics.MaterialAPI.Apply(material.GetPrim())
    material_api.CreateStaticFrictionAttr(static_friction)
    material_api.CreateDynamicFrictionAttr(dynamic_friction)
    material_api.CreateRestitutionAttr(0.0)
    UsdShade.MaterialBindingAPI.Apply(plane.GetPrim()).Bind(material, UsdShade.Tokens.weakerThanDescendants, "physics")
    tmp = path.with_suffix(".tmp.usda")
    stage.GetRootLayer().Export(str(tmp))
    tmp.replace(path)
    return path
