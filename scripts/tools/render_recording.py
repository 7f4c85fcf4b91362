"""Render one frame of a rollout recording (USD) to PNG with Newton's OpenGL viewer, headless (EGL).

    .venv/bin/python scripts/tools/render_recording.py rollout.usd --frame 120 --out frame.png

Every gprim of the stage (the robots, the ground, the contact-force arrows) is tessellated at that time and drawn;
force arrows are drawn as thin cylinders coloured by the recorded contact weight (blue 0, red 1). Without a display
pyglet renders through
EGL (Mesa's software renderer on a CPU-only machine; about a second per 1280x720 frame).
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np


def _tessellate(prim, time):
    """(points (n, 3) in the prim's frame, triangle indices) of a gprim, or None for curves."""
    import newton
    from pxr import UsdGeom

    if prim.IsA(UsdGeom.Mesh):
        mesh = UsdGeom.Mesh(prim)
        pts = np.array(mesh.GetPointsAttr().Get(time), dtype=np.float32)
        counts = np.array(mesh.GetFaceVertexCountsAttr().Get(time))
        idx = np.array(mesh.GetFaceVertexIndicesAttr().Get(time))
        tris, start = [], 0
        for c in counts:  # fan triangulation of each polygon
            tris += [(idx[start], idx[start + j], idx[start + j + 1]) for j in range(1, c - 1)]
            start += c
        return pts, np.array(tris, dtype=np.int32).reshape(-1)
    if prim.IsA(UsdGeom.Sphere):
        m = newton.Mesh.create_sphere(UsdGeom.Sphere(prim).GetRadiusAttr().Get(time), compute_inertia=False)
    elif prim.IsA(UsdGeom.Cube):
        h = 0.5 * UsdGeom.Cube(prim).GetSizeAttr().Get(time)
        m = newton.Mesh.create_box(h, h, h, compute_inertia=False)
    elif prim.IsA(UsdGeom.Capsule) or prim.IsA(UsdGeom.Cylinder):
        g = UsdGeom.Capsule(prim) if prim.IsA(UsdGeom.Capsule) else UsdGeom.Cylinder(prim)
        make = newton.Mesh.create_capsule if prim.IsA(UsdGeom.Capsule) else newton.Mesh.create_cylinder
        axis = {"X": newton.Axis.X, "Y": newton.Axis.Y, "Z": newton.Axis.Z}[g.GetAxisAttr().Get(time)]
        m = make(g.GetRadiusAttr().Get(time), 0.5 * g.GetHeightAttr().Get(time), up_axis=axis, compute_inertia=False)
    else:
        return None
    return np.asarray(m.vertices, dtype=np.float32), np.asarray(m.indices, dtype=np.int32).reshape(-1)


def _segment_mesh(a: np.ndarray, b: np.ndarray, radius: float):
    """A cylinder from a to b (points, indices), or None for a segment shorter than 1 mm."""
    import newton

    d = b - a
    length = float(np.linalg.norm(d))
    if length < 1e-3:
        return None
    m = newton.Mesh.create_cylinder(radius, 0.5 * length, up_axis=newton.Axis.Z, compute_inertia=False)
    z = d / length
    x = np.cross(z, [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    rot = np.stack([x, np.cross(z, x), z], axis=1)  # columns: the cylinder's axes in world frame
    pts = np.asarray(m.vertices, dtype=np.float64) @ rot.T + 0.5 * (a + b)
    return pts.astype(np.float32), np.asarray(m.indices, dtype=np.int32).reshape(-1)


def render(path: str, frame: int, out: str, width: int, height: int, env: int | None) -> str:
    import pyglet

    pyglet.options["headless"] = not os.environ.get("DISPLAY")
    import newton.viewer
    import warp as wp
    from pxr import Usd, UsdGeom

    stage = Usd.Stage.Open(path)
    if stage is None:
        raise SystemExit(f"cannot open {path}")
    if not stage.GetStartTimeCode() <= frame <= stage.GetEndTimeCode():
        raise SystemExit(f"frame {frame} outside the recording ({stage.GetStartTimeCode()}..{stage.GetEndTimeCode()})")
    time = Usd.TimeCode(frame)
    cache = UsdGeom.XformCache(time)
    viewer = newton.viewer.ViewerGL(width=width, height=height, headless=pyglet.options["headless"])
    viewer.begin_frame(frame * 1.0)
    starts, ends, colors, bases = [], [], [], []
    for k, prim in enumerate(stage.Traverse()):  # instance proxies are not used: references are plain prims
        if not prim.IsA(UsdGeom.Gprim) or UsdGeom.Imageable(prim).ComputeVisibility(time) == UsdGeom.Tokens.invisible:
            continue
        if prim.IsA(UsdGeom.BasisCurves):
            pts = UsdGeom.BasisCurves(prim).GetPointsAttr().Get(time)
            if pts is not None and len(pts) == 2:
                c = UsdGeom.PrimvarsAPI(prim).GetPrimvar("displayColor").ComputeFlattened(time)
                starts.append(tuple(pts[0]))
                ends.append(tuple(pts[1]))
                colors.append(tuple(c[0]) if c else (1.0, 1.0, 0.0))
            continue
        geo = _tessellate(prim, time)
        if geo is None:
            continue
        pts, idx = geo
        m = np.array(cache.GetLocalToWorldTransform(prim), dtype=np.float64)  # row-vector convention
        world = (np.c_[pts, np.ones(len(pts))] @ m)[:, :3].astype(np.float32)
        if "RobotPrototypes" not in str(prim.GetPath()) and "/Robot/" in str(prim.GetPath()):
            bases.append(world.mean(0))
        c = UsdGeom.PrimvarsAPI(prim).FindPrimvarWithInheritance("displayColor")
        color = tuple(float(x) for x in c.Get(time)[0]) if c and c.Get(time) else (0.7, 0.7, 0.7)
        viewer.log_mesh(
            f"/g{k}", wp.array(world, dtype=wp.vec3), wp.array(idx, dtype=wp.int32), color=color, backface_culling=False
        )
    for k, (a, b, c) in enumerate(zip(starts, ends, colors)):  # force arrows as thin cylinders
        arrow = _segment_mesh(np.array(a), np.array(b), radius=0.012)
        if arrow is not None:
            viewer.log_mesh(
                f"/force{k}",
                wp.array(arrow[0], dtype=wp.vec3),
                wp.array(arrow[1], dtype=wp.int32),
                color=tuple(float(x) for x in c),
                backface_culling=False,
            )
    centre = np.mean(bases, axis=0) if bases else np.zeros(3)
    if env is not None:
        robot = stage.GetPrimAtPath(f"/World/envs/env_{env}/Robot/base")
        if robot:
            centre = np.array(cache.GetLocalToWorldTransform(robot).ExtractTranslation())
    spread = float(np.ptp(np.array(bases)[:, :2], axis=0).max()) if len(bases) > 1 and env is None else 0.0
    dist = 1.8 + 0.9 * spread
    yaw, pitch = -135.0, -25.0  # looking at the centre from the front left, slightly from above
    eye = centre + dist * np.array(
        [
            math.cos(math.radians(pitch)) * math.cos(math.radians(yaw + 180.0)),
            math.cos(math.radians(pitch)) * math.sin(math.radians(yaw + 180.0)),
            -math.sin(math.radians(pitch)),
        ]
    )
    viewer.set_camera(wp.vec3(*map(float, eye)), pitch, yaw)
    viewer.end_frame()
    img = viewer.get_frame()
    from PIL import Image

    Image.fromarray(img.numpy() if hasattr(img, "numpy") else np.asarray(img)).save(out)
    viewer.close()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recording")
    parser.add_argument("--frame", type=int, default=0)
    parser.add_argument("--out", default="frame.png")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--env", type=int, default=None, help="centre the camera on this robot (default: all)")
    args = parser.parse_args()
    print(f"[render] {render(args.recording, args.frame, args.out, args.width, args.height, args.env)}")


if __name__ == "__main__":
    sys.exit(main())
