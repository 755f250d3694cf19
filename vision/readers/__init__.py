"""Per-game cell readers: a camera frame and a board pose -> an :class:`engine.Observation`.

Every game has one :class:`Reader` subclass, found by :func:`reader_for` (imported on first use,
so importing this package costs nothing). A reader reports, for every cell it can see, the most
likely content and honest probabilities over the cell's possible contents; cells hidden by a hand
or an object are left out (``partial`` and ``occluded`` set). :meth:`Reader.calibrate` teaches it
what known contents look like in the real light. Shared helpers live in :mod:`.common`; see
``docs/vision/readers.md``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from importlib import import_module
from typing import Any, ClassVar

import numpy as np

from engine import Observation
from engine.core import Content

from ..geometry import BoardGeometry, load_geometry
from ..hiding import Standing
from ..locate import BoardPose

#: game name -> "module:Class" of its reader, imported on first use.
READERS: dict[str, str] = {
    "gobblet": "vision.readers.fitted:GobbletReader",
    "spectrangle": "vision.readers.fitted:SpectrangleReader",
    "blokus": "vision.readers.fitted:BlokusReader",
    "blokus-duo": "vision.readers.fitted:BlokusReader",
    "gobsmacked": "vision.readers.fitted:FittedReader",
}


class Reader(ABC):
    """Reads every cell of one game's board from a camera frame.

    ``geometry`` is the board's geometry file (``hardware/boards/GAME.json``); ``options`` are
    reader-specific settings. Readers keep what :meth:`calibrate` taught them, so keep one reader
    per game for the whole session.
    """

    #: The game's name in the observation spec (the geometry's ``game``).
    game: str
    #: Games this class can read (a reader serving several editions lists them all).
    games: ClassVar[tuple[str, ...]] = ()

    def __init__(self, geometry: BoardGeometry, **options: Any) -> None:
        if self.games and geometry.game not in self.games:
            raise ValueError(
                f"{type(self).__name__} reads {', '.join(self.games)}, not {geometry.game}"
            )
        self.geometry = geometry
        self.game = geometry.game
        self.options = dict(options)

    @abstractmethod
    def read(
        self, frame: np.ndarray, pose: BoardPose, *, clear: bool = False, afresh: bool = False
    ) -> Observation:
        """The :class:`engine.Observation` of ``frame`` (BGR) with the board at ``pose``;
        ``clear``: the players say that nothing is over the board, so none is found there;
        ``afresh``: every cell is read, none kept as it was accepted (the players say that a
        move was missed)."""

    @abstractmethod
    def calibrate(
        self,
        frame: np.ndarray,
        pose: BoardPose,
        known: Mapping[str, Content],
        *,
        unchanged: bool = False,
    ) -> None:
        """Learn the look of the cells in ``known`` (cell name -> canonical content) from
        ``frame``: the opening position, then the engine's accepted state after every move.
        ``unchanged``: the referee judged ``frame``'s board unchanged, so only what did not
        change in it since the last calibration is the accepted state's look."""

    @abstractmethod
    def forget(self) -> None:
        """Forget what :meth:`calibrate` taught (a new game is being set up)."""

    @property
    def reads_contradicted(self) -> bool:
        """Whether the accepted boards have contradicted this reader's reads at this table
        beyond chance (a light that makes the pieces hard to read; :mod:`vision.adapt`)."""
        return False

    def standing(self, content: Content) -> Standing | None:
        """The footprint and height of ``content`` when it stands tall on its cell, so that it
        may hide a marker from a tilted camera (:mod:`vision.hiding`); ``None`` for an empty
        cell and for flat pieces."""
        return None


def reader_for(game: str, geometry: BoardGeometry | None = None, **options: Any) -> Reader:
    """A new reader of ``game`` (with its ``hardware/boards`` geometry unless one is given)."""
    try:
        module_name, class_name = READERS[game].split(":")
    except KeyError:
        raise ValueError(
            f"no reader for {game!r}; readers exist for {', '.join(READERS)}"
        ) from None
    cls = getattr(import_module(module_name), class_name)
    return cls(geometry if geometry is not None else load_geometry(game), **options)


__all__ = ["READERS", "Reader", "reader_for"]
