"""Shared fixtures of the firmware tests."""

import pytest

from engine.games import GAMES
from tests.firmware import toygame


@pytest.fixture
def toy(monkeypatch):
    """The toy game registered as ``toy`` for the test's duration; yields its name."""
    monkeypatch.setitem(GAMES, toygame.NAME, toygame.MODULE)
    return toygame.NAME
