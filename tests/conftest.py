"""Fixtures shared by every test folder."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest


@pytest.fixture
def python_handles_ctrl_c() -> Iterator[None]:
    """While the test runs, this process handles SIGINT (Ctrl-C) as Python does by default:
    ``KeyboardInterrupt`` here, and in the child processes it starts.

    A shell starts a background job (``make test &``, a CI runner's step) with SIGINT ignored,
    an ignored signal stays ignored across ``exec``, and a Python started that way never raises
    ``KeyboardInterrupt``: the referee under test would play on."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
