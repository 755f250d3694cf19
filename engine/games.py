"""The registry of games the referee knows, by the names of ``shared/spec/observation.md``."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .core import FormatError, Game, shown

#: game name -> "module:Class", imported on first use.
GAMES: dict[str, str] = {
    "gobsmacked": "engine.gobsmacked:Gobsmacked",
    "spectrangle": "engine.spectrangle:Spectrangle",
    "gobblet": "engine.gobblet:Gobblet",
    "blokus": "engine.blokus:Blokus",
    "blokus-duo": "engine.blokus:BlokusDuo",
}


def game_class(name: str) -> type[Game]:
    """The :class:`Game` subclass for ``name``; :class:`FormatError` for an unknown game."""
    try:
        module_name, class_name = GAMES[name].split(":")
    except KeyError:
        raise FormatError(f"unknown game {shown(name)}; known games: {', '.join(GAMES)}") from None
    return getattr(import_module(module_name), class_name)


def new_game(name: str, **options: Any) -> Game:
    """A new game of ``name`` with ``options`` (``players``, ``teams``, ``first``, ...)."""
    return game_class(name)(**options)
