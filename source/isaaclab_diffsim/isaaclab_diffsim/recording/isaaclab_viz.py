"""Isaac Lab's visualizers (``newton_gl``, ``rerun``, ``viser``) on the differentiable env, and frames for a video.

The differentiable env steps its own solver, so Isaac Lab's simulation context never sees the new state by
itself. :class:`IsaacLabVisualizers` copies the env's joint state (robots at their env origins, ``joint_q_w``) into
the Newton manager's state after each step,
runs the manager's forward kinematics and steps the visualizers, as Isaac Lab's envs do after a physics step.
Needs ``asset_source="isaaclab"`` (the registered task's default): the visualizers draw that scene.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import warp as wp

VISUALIZER_PACKAGES = {"newton_gl": "pyglet", "rerun": "rerun", "viser": "viser"}


def request_visualizers(types: list[str]) -> None:
    """Select Isaac Lab visualizers by type (as its launcher's ``--viz`` does); call before the env is made.

    Raises ValueError for an unknown type and ImportError when the type's package is not installed."""
    from isaaclab.app.settings_manager import get_settings_manager

    for name in types:
        if name not in VISUALIZER_PACKAGES:
            raise ValueError(f"--viz: unknown visualizer {name!r} (one of {sorted(VISUALIZER_PACKAGES)})")
        if importlib.util.find_spec(VISUALIZER_PACKAGES[name]) is None:
            raise ImportError(f"--viz {name} needs the '{VISUALIZER_PACKAGES[name]}' package, which is not installed")
    settings = get_settings_manager()
    settings.set("/isaaclab/visualizer/types", " ".join(types))
    settings.set("/isaaclab/visualizer/explicit", True)
    settings.set("/isaaclab/visualizer/disable_all", not types)


class IsaacLabVisualizers:
    """Keeps the Isaac Lab scene of a differentiable env in step with it and drives the visualizers."""

    def __init__(self, env):
        if env.isaaclab_scene is None:
            raise ValueError("Isaac Lab visualizers need the env built by Isaac Lab (env.asset_source=isaaclab)")
        from isaaclab_newton.physics import NewtonManager

        self.env, self.manager = env, NewtonManager
        self.sim = env.isaaclab_scene.sim
        if not self.sim.visualizers:
            raise RuntimeError("no Isaac Lab visualizer is active (request_visualizers before making the env)")

    def step(self) -> None:
        """Show the env's current state."""
        state = self.manager.get_state_0()
        wp.to_torch(state.joint_q, requires_grad=False).copy_(self.env.joint_q_w().reshape(-1))
        wp.to_torch(state.joint_qd, requires_grad=False).copy_(self.env.qd.detach().reshape(-1))
        self.manager.invalidate_fk()  # as Isaac Lab's asset writers do: new transforms, FK pending
        self.manager.forward()
        self.sim.update_visualizers(self.env.step_dt)

    def frame(self) -> np.ndarray:
        """An RGB frame (H, W, 3) uint8 of the first visualizer that renders images (newton_gl)."""
        for viz in self.sim.visualizers:
            try:
                img = viz.render_rgb_array()
            except NotImplementedError:
                continue
            if img is not None:
                return np.asarray(img.numpy() if hasattr(img, "numpy") else img)
        raise RuntimeError("no active visualizer renders frames (use --viz newton_gl for --video)")


def write_video(frames: list[np.ndarray], path: str, fps: float, width: int = 640) -> str:
    """Write frames as an animated GIF (Pillow; Isaac Lab's mp4 writer needs moviepy), scaled to ``width``."""
    from PIL import Image

    if not frames:
        raise ValueError("no frames to write")
    if not path.endswith(".gif"):
        raise ValueError(f"--video writes an animated GIF: the path must end in .gif, got {path!r}")
    images = []
    for f in frames:
        img = Image.fromarray(f)
        images.append(img.resize((width, round(img.height * width / img.width))))
    images[0].save(path, save_all=True, append_images=images[1:], duration=round(1000.0 / fps), loop=0)
    return path
