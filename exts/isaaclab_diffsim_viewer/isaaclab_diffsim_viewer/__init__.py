"""isaaclab_diffsim recording viewer: the Kit extension (``extension.py``, imports omni.* when Kit loads it) and its
Kit-free logic (``recording.py``)."""

from .recording import FootSeries, Overlays, Recording, heat_color

__all__ = ["FootSeries", "Overlays", "Recording", "heat_color"]

try:  # Kit discovers the IExt subclass in the module it loads; outside Kit there is no omni.ext
    import omni.ext  # noqa: F401
except ImportError:
    pass
else:
    from .extension import RecordingViewerExtension  # noqa: F401
