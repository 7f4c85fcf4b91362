"""The optional leapp dependency: a missing package is an error that names the extra; tracing is off by default."""

import importlib

import pytest

from isaaclab_diffsim.utils import leapp_support


def test_missing_leapp_names_the_extra(monkeypatch):
    real = importlib.import_module

    def fake(name, *args):
        if name == "leapp":
            raise ImportError("No module named 'leapp'")
        return real(name, *args)

    monkeypatch.setattr(leapp_support.importlib, "import_module", fake)
    with pytest.raises(ImportError, match=r"isaaclab_diffsim\[leapp\]"):
        leapp_support.require_leapp()


def test_not_tracing_outside_an_export():
    assert leapp_support.tracing() is False
