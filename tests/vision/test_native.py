"""Ctrl-C while a native module loads is held back until it has loaded."""

from __future__ import annotations

import signal
import sys

import pytest

from vision.native import import_uninterrupted

SLOW_MODULE = """\
import os, signal, time
os.kill(os.getpid(), signal.SIGINT)  # the key, pressed while the module initialises
for _ in range(50):
    time.sleep(0.002)
LOADED = True
"""


def test_ctrl_c_during_an_import_arrives_once_the_module_has_loaded(
    tmp_path, monkeypatch, python_handles_ctrl_c
):
    (tmp_path / "slow_native_a.py").write_text(SLOW_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        import_uninterrupted("slow_native_a")
    assert sys.modules["slow_native_a"].LOADED  # its initialisation ran to the end
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    monkeypatch.delitem(sys.modules, "slow_native_a")


def test_a_plain_import_is_cut_short_by_the_same_key(tmp_path, monkeypatch, python_handles_ctrl_c):
    (tmp_path / "slow_native_b.py").write_text(SLOW_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        __import__("slow_native_b")
    assert "slow_native_b" not in sys.modules  # what a native module turns into ImportError


def test_an_import_without_ctrl_c_is_a_plain_import(python_handles_ctrl_c):
    assert import_uninterrupted("json") is sys.modules["json"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
