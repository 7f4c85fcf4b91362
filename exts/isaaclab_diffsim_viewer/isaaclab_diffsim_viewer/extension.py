"""Kit entry point: the extension's lifecycle and menu-less window (omni.* is only imported inside Kit)."""

from __future__ import annotations

import omni.ext

from .panel import RecordingPanel


class RecordingViewerExtension(omni.ext.IExt):
    """Opens the panel on startup, closes it on shutdown."""

    def on_startup(self, ext_id: str) -> None:
        self._panel = RecordingPanel()

    def on_shutdown(self) -> None:
        if getattr(self, "_panel", None) is not None:
            self._panel.destroy()
            self._panel = None
