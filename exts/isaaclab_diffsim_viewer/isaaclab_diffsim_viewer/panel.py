"""The panel (omni.ui): open a recording, scrub time, toggle overlays, plot one foot. Kit only; the data and the
overlays come from :mod:`.recording`."""

from __future__ import annotations

from .recording import Overlays, Recording


class RecordingPanel:
    """A window with a file field, a time slider bound to Kit's timeline, three toggles, env/leg selectors and
    plots of the selected foot's signed distance, weight and force."""

    def __init__(self):
        import omni.timeline
        import omni.ui as ui

        self._ui = ui
        self._timeline = omni.timeline.get_timeline_interface()
        self.rec: Recording | None = None
        self.overlays: Overlays | None = None
        self._env, self._leg = 0, 0
        self.window = ui.Window("isaaclab_diffsim recording", width=420, height=560)
        with self.window.frame:
            with ui.VStack(spacing=4):
                with ui.HStack(height=24):
                    self._path = ui.StringField()
                    ui.Button("Open", width=60, clicked_fn=self._open)
                self._status = ui.Label("no recording", height=20)
                self._time = ui.IntSlider(min=0, max=1, height=20)
                self._time.model.add_value_changed_fn(self._on_scrub)
                self._toggles = {}
                for name, label in (
                    ("forces", "contact forces"),
                    ("weights", "sigmoid weights"),
                    ("grad_heat", "gradient heat"),
                ):
                    with ui.HStack(height=20):
                        box = ui.CheckBox(width=20)
                        box.model.add_value_changed_fn(lambda m, n=name: self._toggle(n, m.get_value_as_bool()))
                        ui.Label(label)
                        self._toggles[name] = box
                with ui.HStack(height=22):
                    ui.Label("env", width=30)
                    self._env_field = ui.IntField(width=50)
                    self._env_field.model.add_value_changed_fn(lambda m: self._select(env=m.get_value_as_int()))
                    ui.Label("leg", width=30)
                    self._leg_combo = ui.ComboBox(0, "LF", "RF", "LH", "RH")
                    self._leg_combo.model.get_item_value_model().add_value_changed_fn(
                        lambda m: self._select(leg=m.get_value_as_int())
                    )
                self._plots = ui.VStack(spacing=2)

    def _open(self) -> None:
        import omni.usd

        path = self._path.model.get_value_as_string()
        ctx = omni.usd.get_context()
        ctx.open_stage(path)
        self.rec = Recording(ctx.get_stage())
        self.overlays = Overlays(self.rec)
        self._time.max = max(self.rec.frames - 1, 1)
        self._timeline.set_end_time((self.rec.frames - 1) * self.rec.step_dt)
        self._status.text = f"{self.rec.num_envs} robots, {self.rec.frames} frames, {self.rec.meta['contact_model']}"
        self._toggles["forces"].model.set_value(True)
        self._select()

    def _on_scrub(self, model) -> None:
        if self.rec is not None:
            self._timeline.set_current_time(model.get_value_as_int() * self.rec.step_dt)

    def _toggle(self, name: str, on: bool) -> None:
        if self.overlays is None:
            return
        try:
            getattr(self.overlays, f"set_{name}")(on)
        except ValueError as err:  # e.g. gradient heat on a recording without gradients
            self._status.text = str(err)

    def _select(self, env: int | None = None, leg: int | None = None) -> None:
        if self.rec is None:
            return
        self._env = self._env if env is None else min(max(env, 0), self.rec.num_envs - 1)
        self._leg = self._leg if leg is None else leg
        ui = self._ui
        self._plots.clear()
        with self._plots:
            for name, (values, lo, hi) in self.rec.plot_series(self._env, self.rec.legs[self._leg]).items():
                ui.Label(f"{name}: {lo:.3g} .. {hi:.3g}", height=16)
                ui.Plot(ui.Type.LINE, lo, hi, *values, height=80)

    def destroy(self) -> None:
        self.window.destroy()
        self.window = None
