"""Importing native extension modules without losing Ctrl-C.

A ``KeyboardInterrupt`` raised while an extension module initialises (onnxruntime's pybind11
core, pygame's) becomes ``ImportError: initialization failed``: a traceback instead of the
one-line stop every ``referee`` command gives, or, where a library imports the module inside
``try: ... except ImportError``, a Ctrl-C lost altogether.
"""

from __future__ import annotations

import importlib
import signal
import threading
from types import ModuleType


def import_uninterrupted(name: str) -> ModuleType:
    """Import module ``name`` with Ctrl-C held back until it is loaded: a SIGINT meanwhile is
    only noted, and sent again once the import is over (loaded or failed), to whatever handled
    it before (Python's own handler: the ``KeyboardInterrupt`` the commands handle). Off the
    main thread, which never handles signals, a plain import."""
    if threading.current_thread() is not threading.main_thread():
        return importlib.import_module(name)
    pressed: list[int] = []
    before = signal.signal(signal.SIGINT, lambda signum, _frame: pressed.append(signum))
    try:
        return importlib.import_module(name)
    finally:
        signal.signal(signal.SIGINT, before)
        if pressed:
            signal.raise_signal(signal.SIGINT)
