"""Pure-Python rules engine: games, moves, scoring, move inference from observed boards.

No I/O, no OpenCV. See :mod:`engine.core` for the shared vocabulary.
"""

from .core import (
    AMBIGUOUS,
    DRAW,
    EVENT,
    ILLEGAL,
    MOVE,
    NO_CHANGE,
    Event,
    FormatError,
    Game,
    IllegalMoveError,
    Move,
    Observation,
    RefereeError,
    Verdict,
)
from .games import GAMES, game_class, new_game
from .referee import Outcome, Referee

__all__ = [
    "AMBIGUOUS",
    "DRAW",
    "EVENT",
    "GAMES",
    "ILLEGAL",
    "MOVE",
    "NO_CHANGE",
    "Event",
    "FormatError",
    "Game",
    "IllegalMoveError",
    "Move",
    "Observation",
    "Outcome",
    "Referee",
    "RefereeError",
    "Verdict",
    "game_class",
    "new_game",
]
