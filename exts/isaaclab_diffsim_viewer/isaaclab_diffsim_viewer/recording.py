"""Reading an isaaclab_diffsim rollout recording and computing what the panel draws (pxr and numpy only, no Kit).

A recording names its own layout in the root layer's ``customLayerData["isaaclab_diffsim_recording"]`` (prim
paths, attribute names, legs, frame count), so nothing here hard-codes them. The overlays the panel toggles are
written into the stage's session layer (never into the file): contact-force arrows shown or hidden, weight
markers (a sphere per foot whose radius and colour follow the contact weight) and gradient heat (each robot
coloured by its per-step actor-gradient magnitude).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LAYER_KEY = "isaaclab_diffsim_recording"
WEIGHT_MARKER_SUFFIX = "_weight"
MARKER_RADIUS = (0.01, 0.05)  # sphere radius [m] at weight 0 and 1


def heat_color(x: float) -> tuple[float, float, float]:
    """Colour of a value in [0, 1] (clipped): blue -> green -> yellow -> red."""
    x = float(np.clip(x, 0.0, 1.0))
    stops = np.array([[0.1, 0.2, 0.9], [0.1, 0.8, 0.3], [0.95, 0.85, 0.1], [0.9, 0.1, 0.1]])
    pos = x * (len(stops) - 1)
    i = min(int(pos), len(stops) - 2)
    c = stops[i] + (pos - i) * (stops[i + 1] - stops[i])
    return tuple(float(v) for v in c)


@dataclass
class FootSeries:
    """One foot over the recording: time [s], signed distance [m], weight, force magnitude [N], force (T, 3)."""

    time: np.ndarray
    distance: np.ndarray
    weight: np.ndarray
    force_norm: np.ndarray
    force: np.ndarray
    point: np.ndarray


class Recording:
    """A rollout recording opened on a ``pxr.Usd.Stage`` (pass a path or an already open stage)."""

    def __init__(self, stage_or_path):
        from pxr import Usd

        self.stage = Usd.Stage.Open(stage_or_path) if isinstance(stage_or_path, str) else stage_or_path
        if self.stage is None:
            raise ValueError(f"cannot open {stage_or_path!r}")
        data = self.stage.GetRootLayer().customLayerData
        if LAYER_KEY not in data:
            raise ValueError(
                f"{self.stage.GetRootLayer().identifier} is not an isaaclab_diffsim recording "
                f"(no customLayerData[{LAYER_KEY!r}])"
            )
        self.meta = dict(data[LAYER_KEY])
        self.legs = [str(x) for x in self.meta["legs"]]
        self.num_envs = int(self.meta["num_envs"])
        self.frames = int(self.meta["frames"])
        self.step_dt = float(self.meta["step_dt"])

    # ------------------------------------------------------------------ layout
    def env_path(self, env: int) -> str:
        if not 0 <= env < self.num_envs:
            raise IndexError(f"env {env} not in the recording (0..{self.num_envs - 1})")
        return f"{self.meta['envs_path']}/{self.meta['env_prefix']}{env}"

    def robot_path(self, env: int) -> str:
        return f"{self.env_path(env)}/{self.meta['robot_name']}"

    def foot_path(self, env: int, leg: str) -> str:
        if leg not in self.legs:
            raise KeyError(f"leg {leg!r} not in {self.legs}")
        return f"{self.env_path(env)}/{self.meta['feet_scope']}/{leg}"

    def time_codes(self) -> np.ndarray:
        return np.arange(self.frames, dtype=np.float64)

    def frame_of_time(self, seconds: float) -> int:
        """Nearest recorded frame to a playback time [s] (clamped to the recording)."""
        return int(np.clip(round(seconds / self.step_dt), 0, max(self.frames - 1, 0)))

    # ------------------------------------------------------------------ data
    def _series(self, path: str, attr: str, width: int) -> np.ndarray:
        a = self.stage.GetPrimAtPath(path).GetAttribute(attr)
        if not a:
            raise KeyError(f"{path} has no attribute {attr}")
        out = np.full((self.frames, width), np.nan)
        for t in range(self.frames):
            v = a.Get(t)
            if v is not None:
                out[t] = np.asarray(v, dtype=np.float64).reshape(-1)[:width]
        return out if width > 1 else out[:, 0]

    def foot_series(self, env: int, leg: str) -> FootSeries:
        p, m = self.foot_path(env, leg), self.meta
        force = self._series(p, m["force_attr"], 3)
        return FootSeries(
            time=self.time_codes() * self.step_dt,
            distance=self._series(p, m["distance_attr"], 1),
            weight=self._series(p, m["weight_attr"], 1),
            force_norm=np.linalg.norm(force, axis=1),
            force=force,
            point=self._series(p, m["point_attr"], 3),
        )

    def grad_series(self, env: int) -> np.ndarray | None:
        """Per-step actor-gradient magnitude of a robot, or None when the rollout was not differentiated."""
        a = self.stage.GetPrimAtPath(self.robot_path(env)).GetAttribute(self.meta["grad_attr"])
        if not a or not a.GetTimeSamples():
            return None
        return self._series(self.robot_path(env), self.meta["grad_attr"], 1)

    def plot_series(self, env: int, leg: str) -> dict[str, tuple[list[float], float, float]]:
        """What the panel's plot shows for the selected foot: per quantity, its values and a (min, max) range."""
        s = self.foot_series(env, leg)
        out = {}
        for name, values in (("distance [m]", s.distance), ("weight", s.weight), ("force [N]", s.force_norm)):
            v = np.nan_to_num(values)
            lo, hi = float(v.min(initial=0.0)), float(v.max(initial=0.0))
            out[name] = ([float(x) for x in v], lo, hi if hi > lo else lo + 1.0)
        return out


# ---------------------------------------------------------------------- overlays (session layer)
class Overlays:
    """Toggles the panel's overlays on a recording's stage by authoring into its session layer."""

    def __init__(self, recording: Recording):
        self.rec = recording
        # time samples in the session layer are scaled by its time codes per second: make them the recording's
        session, root = recording.stage.GetSessionLayer(), recording.stage.GetRootLayer()
        session.timeCodesPerSecond = root.timeCodesPerSecond
        session.framesPerSecond = root.framesPerSecond
        self.forces = True
        self.weights = False
        self.grad_heat = False

    def _session(self):
        from pxr import Usd

        stage = self.rec.stage
        return Usd.EditContext(stage, stage.GetSessionLayer())

    def set_forces(self, on: bool) -> None:
        """Show or hide every foot's contact-force arrow."""
        from pxr import UsdGeom

        self.forces = bool(on)
        with self._session():
            for env in range(self.rec.num_envs):
                for leg in self.rec.legs:
                    img = UsdGeom.Imageable(self.rec.stage.GetPrimAtPath(self.rec.foot_path(env, leg)))
                    (img.MakeVisible if on else img.MakeInvisible)()

    def set_weights(self, on: bool) -> None:
        """Add (or remove) a sphere per foot at its contact point, radius and colour following the weight."""
        from pxr import Gf, UsdGeom

        self.weights = bool(on)
        stage = self.rec.stage
        with self._session():
            for env in range(self.rec.num_envs):
                for leg in self.rec.legs:
                    path = self.rec.foot_path(env, leg) + WEIGHT_MARKER_SUFFIX
                    if not on:
                        if stage.GetPrimAtPath(path):
                            stage.RemovePrim(path)
                        continue
                    s = self.rec.foot_series(env, leg)
                    sphere = UsdGeom.Sphere.Define(stage, path)
                    tr = sphere.AddTranslateOp()
                    radius, color = sphere.CreateRadiusAttr(), sphere.CreateDisplayColorAttr()
                    for t, (p, w) in enumerate(zip(s.point, s.weight)):
                        if np.isnan(w):
                            continue
                        tr.Set(Gf.Vec3d(*map(float, p)), t)
                        radius.Set(MARKER_RADIUS[0] + (MARKER_RADIUS[1] - MARKER_RADIUS[0]) * float(w), t)
                        color.Set([Gf.Vec3f(*heat_color(w))], t)

    def grad_heat_colors(self) -> dict[int, list[tuple[float, float, float]]]:
        """Per recorded robot, a colour per frame from its gradient magnitude, scaled by the recording's largest
        (log scale: magnitudes span decades); empty when the rollout was not differentiated."""
        series = {env: self.rec.grad_series(env) for env in range(self.rec.num_envs)}
        series = {k: v for k, v in series.items() if v is not None}
        if not series:
            return {}
        logs = {k: np.log10(np.maximum(np.nan_to_num(v, nan=0.0), 1e-12)) for k, v in series.items()}
        finite = np.concatenate([v[np.isfinite(series[k])] for k, v in logs.items()])
        hi = float(finite.max()) if finite.size else 0.0
        lo = max(float(finite.min()) if finite.size else 0.0, hi - 4.0)  # four decades of colour
        span = hi - lo if hi > lo else 1.0
        return {k: [heat_color((x - lo) / span) for x in v] for k, v in logs.items()}

    def set_grad_heat(self, on: bool) -> None:
        """Colour each robot by its per-step gradient magnitude (or restore the recorded colour)."""
        from pxr import Gf, UsdGeom

        self.grad_heat = bool(on)
        stage = self.rec.stage
        colors = self.grad_heat_colors() if on else {}
        if on and not colors:
            raise ValueError("this recording has no gradient magnitudes (the rollout was not differentiated)")
        with self._session():
            for env in range(self.rec.num_envs):
                prim = stage.GetPrimAtPath(self.rec.robot_path(env))
                attr = UsdGeom.PrimvarsAPI(prim).GetPrimvar("displayColor").GetAttr()
                if not on:
                    if stage.GetSessionLayer().GetAttributeAtPath(attr.GetPath()):
                        attr.Clear()  # only the session layer's opinion: the recorded colour shows again
                    continue
                for t, c in enumerate(colors[env]):
                    attr.Set([Gf.Vec3f(*c)], t)
