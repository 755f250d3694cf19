"""Fixtures shared by every test folder."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest


@pytest.fixture
def ctrl_c_reaches_children() -> Iterator[None]:
    """Child processes started in the test can be stopped with SIGINT (Ctrl-C).

    A shell starts a background job (``make test &``, a CI runner's step) with SIGINT ignored,
    an ignored signal stays ignored across ``exec``, and a Python started that way never raises
    ``KeyboardInterrupt``: the referee under test would play on. While the test runs, this
    process handles SIGINT as Python does by default, so its children start with it."""
    before = signal.getsignal(signal.SIGINT)
    if before == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if before == signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
