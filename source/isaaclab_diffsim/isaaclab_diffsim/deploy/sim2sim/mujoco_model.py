"""ANYmal C in MuJoCo, built from the project's URDF (example-robot-data) with a free base on a ground plane or a
terrain's heightfield."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...assets.anymal_c_urdf import anymal_c_urdf_path
from .mujoco_ground import add_ground

FOOT_LINKS = ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT")


def urdf_link_mass(path: Path | None = None) -> float:
    """Sum of the URDF's link masses [kg]."""
    root = ET.parse(path or anymal_c_urdf_path()).getroot()
    return sum(float(m.get("value")) for m in root.iter("mass"))


def urdf_for_mujoco(path: Path | None = None) -> str:
    """The URDF text MuJoCo can compile: without visual geometry (.dae meshes MuJoCo cannot read) and the
    ``self_filter`` boxes, every collision geometry kept; an inertia tensor that is not positive definite (the
    hatch's) keeps its diagonal. Masses are untouched."""
    root = ET.parse(path or anymal_c_urdf_path()).getroot()
    for link in root.iter("link"):
        for tag in ("visual", "self_filter"):
            for el in link.findall(tag):
                link.remove(el)
        inertia = link.find("inertial/inertia")
        if inertia is None:
            continue
        a = {k: float(inertia.get(k, 0.0)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        tensor = np.array(
            [[a["ixx"], a["ixy"], a["ixz"]], [a["ixy"], a["iyy"], a["iyz"]], [a["ixz"], a["iyz"], a["izz"]]]
        )
        if np.linalg.eigvalsh(tensor).min() <= 0.0:
            for k in ("ixy", "ixz", "iyz"):
                inertia.set(k, "0")
    return ET.tostring(root, encoding="unicode")


@dataclass
class MujocoAnymal:
    """A compiled model and where the bundle's joints live in it: ``qpos_adr[i]``/``dof_adr[i]`` of joint
    ``joint_names[i]``; ``foot_geoms`` the four foot spheres (LF, RF, LH, RH); ``base_body`` the base's id;
    ``ground_top`` the ground's highest point [m]."""

    model: object
    joint_names: list[str]
    qpos_adr: np.ndarray
    dof_adr: np.ndarray
    base_body: int
    foot_geoms: list[int]
    ground_top: float = 0.0


def build_mujoco_anymal(
    joint_names: list[str],
    friction: float,
    timestep: float = 0.0025,
    payload: float = 0.0,
    terrain=None,
    feet_only: bool = False,
) -> MujocoAnymal:
    """MuJoCo model of the URDF with a free joint on ``base``, a ground plane (or ``terrain``'s heightfield, a
    :class:`~isaaclab_diffsim.deploy.sim2sim.bundle_terrain.BundleTerrain`), elliptic friction cones and
    ``friction`` on every robot geom and on the ground (MuJoCo combines two geoms' friction by their maximum, so
    the effective coefficient is ``friction``). Robot geoms collide with the ground only (no self-collision).
    ``payload`` kg is added to the base, its inertia scaled by the same ratio. With ``feet_only`` only the four
    foot spheres collide, as in the differentiable task (base, thighs and shanks pass through the ground). Raises
    ValueError naming a joint of ``joint_names`` the URDF lacks."""
    import mujoco

    spec = mujoco.MjSpec.from_string(urdf_for_mujoco())
    spec.compiler.balanceinertia = True  # small camera links violate the triangle inequality slightly
    spec.compiler.fusestatic = True
    # links without <inertial> (the base's geometry link) are massless, not given a density
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    spec.option.timestep = timestep
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.body("base").add_freejoint(name="base_free")
    for geom in spec.geoms:
        geom.contype, geom.conaffinity = 1, 0
        geom.friction = [friction, geom.friction[1], geom.friction[2]]
    top = add_ground(spec, friction, terrain)
    model = spec.compile()
    base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "base")
    if payload:
        ratio = (model.body_mass[base] + payload) / model.body_mass[base]
        model.body_mass[base] *= ratio
        model.body_inertia[base] *= ratio
    missing = [n for n in joint_names if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) < 0]
    if missing:
        raise ValueError(f"the MuJoCo model has no joints named {missing} (io.yaml joint_names)")
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in joint_names]
    feet = []
    for link in FOOT_LINKS:
        # fusestatic merges the FOOT link into its shank: the foot is the shank's sphere
        shank = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, link.replace("FOOT", "SHANK"))
        spheres = [
            g
            for g in range(model.ngeom)
            if model.geom_bodyid[g] == shank and model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE
        ]
        if len(spheres) != 1:
            raise ValueError(f"expected one foot sphere on {link}'s shank, found {len(spheres)}")
        feet.append(spheres[0])
    if feet_only:
        robot_geoms = np.nonzero(model.geom_contype == 1)[0]
        model.geom_contype[np.setdiff1d(robot_geoms, feet)] = 0
    return MujocoAnymal(
        model,
        list(joint_names),
        np.array([model.jnt_qposadr[i] for i in ids]),
        np.array([model.jnt_dofadr[i] for i in ids]),
        base,
        feet,
        top,
    )
