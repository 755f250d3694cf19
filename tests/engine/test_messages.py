"""What the players read (a verdict's reason, the replay's line) never shows a Python value:
no ``None``, ``True``, ``{'...'}`` or ``Piece(...)``, whatever the input and whenever it comes."""

import re

import pytest

from engine import Referee
from engine.games import GAMES
from engine.referee import describe

PYTHON = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|\{'|\['|\w+\(\w+=")

#: JSON lines a careless user or a confused reader may send (each parsed already).
ODD_ITEMS = [
    None,
    True,
    [1, 2],
    "text",
    {},
    {"event": None},
    {"event": "pass", "player": None},
    {"event": "pass", "player": 3},
    {"event": "pass", "player": "nobody"},
    {"event": "exchange", "player": "nobody"},
    {"event": "resign", "player": "nobody"},
    {"event": "start", "players": None},
    {"event": "start", "players": True},
    {"event": "start", "first": "nobody"},
    {"cells": None},
    {"cells": {"nowhere": None}},
    {"cells": [None]},
    {"cells": {}, "partial": None},
    {"cells": {}, "partial": True, "confidence": [1]},
]


def _reasons(referee: Referee, item: object) -> str:
    outcome = referee.feed(item)
    return f"{outcome.verdict.reason} | {describe(outcome)}"


def _events(referee: Referee) -> list[dict]:
    players = [*referee.game.players, "nobody", None]
    return [
        {"event": name, **({"player": p} if p is not None else {})}
        for name in ("pass", "exchange", "end", "resign", "undo")
        for p in players
    ]


@pytest.mark.parametrize("name", list(GAMES))
def test_no_python_value_in_any_message_before_or_after_the_end(name):
    referee = Referee(name)
    for item in [*ODD_ITEMS, *_events(referee)]:
        referee = Referee(name)
        assert not PYTHON.search(text := _reasons(referee, item)), (item, text)
    for item in _events(referee):
        over = Referee(name)
        over.feed({"event": "end"})
        assert over.game.is_over
        assert not PYTHON.search(text := _reasons(over, item)), (item, text)


@pytest.mark.parametrize("name", list(GAMES))
def test_a_cell_of_another_kind_is_named_as_json(name):
    referee = Referee(name)
    cell = referee.game.cell_names[0]
    for value in (True, {"color": None}, [1], {"colour": "red"}, 3.5):
        board = {n: None for n in referee.game.cell_names}
        board[cell] = value
        text = _reasons(referee, {"game": name, "cells": board})
        assert not PYTHON.search(text), (value, text)
