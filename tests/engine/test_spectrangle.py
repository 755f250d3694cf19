"""Spectrangle, judged from the board only, as ``referee replay`` would get it.

Rule tests quote the rulebook (``shared/rules/spectrangle.fr.txt``) and the facts of
``shared/rules/README.md``. The board geometry, piece values, bonus cells and legality used to
check the engine are rebuilt here independently (from the triangles' corners and the README's
tables), never taken from the engine.
"""

from __future__ import annotations

import json
import random
import re
from math import isqrt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import AMBIGUOUS, DRAW, EVENT, ILLEGAL, MOVE, NO_CHANGE, FormatError, Referee
from engine.core import Event, Observation
from engine.spectrangle import Place, Spectrangle, triangle

# ------------------------------------------------------------------ facts, restated for the test
COLOUR = {"R": "red", "G": "green", "B": "blue", "Y": "yellow", "P": "purple", "W": "white"}
README_VALUES = {
    6: "RRR BBB GGG YYY PPP",
    5: "RRY RRP BBR BBP GGR GGB YYG YYB PPY PPG",
    4: "RRB RRG BBG BBY GGY GGP YYR YYP PPR PPB",
    3: "YBP RGY BGP GRB",
    2: "BRP YPR YPG",
    1: "GRP BYG RYB WWW",
}
VALUE = {"".join(sorted(code)): v for v, codes in README_VALUES.items() for code in codes.split()}
BONUS = {10: 2, 14: 2, 30: 2, 2: 3, 26: 3, 34: 3, 11: 4, 13: 4, 20: 4}
CELLS = 36
HAND = 4
SIDE_NAMES = ("left", "right", "base")


def corners(cell: int) -> dict[str, frozenset[tuple[int, int]]]:
    """The three sides of a cell as pairs of lattice points (line, position on the line)."""
    row = isqrt(cell)
    k = cell - row * row
    m = k // 2
    if k % 2 == 0:  # points up: apex on top, base below
        apex, low_left, low_right = (row, m), (row + 1, m), (row + 1, m + 1)
        return {
            "left": frozenset((apex, low_left)),
            "right": frozenset((apex, low_right)),
            "base": frozenset((low_left, low_right)),
        }
    top_left, top_right, apex = (row, m), (row, m + 1), (row + 1, m + 1)
    return {
        "left": frozenset((top_left, apex)),
        "right": frozenset((top_right, apex)),
        "base": frozenset((top_left, top_right)),
    }


def shared_sides() -> dict[int, list[tuple[int, int, int]]]:
    """cell -> [(side index, neighbour, neighbour's side index)] from corners shared."""
    by_segment: dict[frozenset, list[tuple[int, int]]] = {}
    for cell in range(CELLS):
        for i, side in enumerate(SIDE_NAMES):
            by_segment.setdefault(corners(cell)[side], []).append((cell, i))
    out: dict[int, list[tuple[int, int, int]]] = {cell: [] for cell in range(CELLS)}
    for owners in by_segment.values():
        if len(owners) == 2:
            (a, sa), (b, sb) = owners
            out[a].append((sa, b, sb))
            out[b].append((sb, a, sa))
    return out


SHARED = shared_sides()
Board = dict[int, str]  # cell -> edge letters (left, right, base)


def touching(board: Board, cell: int) -> int:
    return sum(other in board for _, other, _ in SHARED[cell])


def fits(board: Board, cell: int, letters: str) -> bool:
    """The rulebook's placement rules, written independently of the engine."""
    key = "".join(sorted(letters))
    if cell in board or key not in VALUE:
        return False
    if any("".join(sorted(e)) == key for e in board.values()):
        return False
    if not board:
        return cell not in BONUS
    return touching(board, cell) > 0 and edges_match(board, cell, letters)


def edges_match(board: Board, cell: int, letters: str) -> bool:
    """Every edge shared with a piece has its colour, white matching any colour."""
    return all(
        letters[side] == board[other][theirs] or "W" in (letters[side], board[other][theirs])
        for side, other, theirs in SHARED[cell]
        if other in board
    )


def points(board: Board, cell: int, letters: str) -> int:
    return VALUE["".join(sorted(letters))] * max(1, touching(board, cell)) * BONUS.get(cell, 1)


def cell_json(letters: str | None) -> dict[str, str] | None:
    if letters is None:
        return None
    return {side: COLOUR[c] for side, c in zip(SIDE_NAMES, letters, strict=True)}


def observation(board: Board) -> dict:
    """The JSON a camera reports for ``board`` (shared/spec/observation.md)."""
    return {"game": "spectrangle", "cells": {str(c): cell_json(board.get(c)) for c in range(36)}}


ALL_CONTENTS = ["".join((a, b, c)) for a in COLOUR for b in COLOUR for c in COLOUR]


class Table:
    """The players' table: the board as they left it, shown to a referee after each change."""

    def __init__(self, **start: object) -> None:
        self.referee = Referee("spectrangle")
        self.board: Board = {}
        if start:
            assert self.referee.feed({"event": "start", **start}).verdict.kind == EVENT

    @property
    def game(self) -> Spectrangle:
        return self.referee.game  # type: ignore[return-value]

    def show(self, board: Board):
        return self.referee.feed(observation(board))

    def place(self, cell: int, letters: str):
        """Lay a piece; the table keeps it only if the referee accepts the move."""
        outcome = self.show({**self.board, cell: letters})
        if outcome.verdict.kind == MOVE:
            self.board[cell] = letters
        return outcome

    def press(self, name: str, **data: object):
        return self.referee.feed({"event": name, **data})


#: A chain of placements around cell 5 (two players, p1 first). Each piece touches one piece
#: until 5, which touches 4, 6 and 1. Expected points by the rulebook's formula, worked by hand.
CHAIN = [
    (6, "BBR", 5),  # first piece: its value (BBR = 5)
    (7, "BGB", 4),  # left blue meets 6's right blue; BBG = 4, one side
    (3, "PBB", 5),  # base blue meets 7's base blue; BBP = 5
    (2, "YPP", 15),  # right purple meets 3's left purple; PPY = 5, x3 bonus cell
    (1, "YYP", 4),  # right yellow meets 2's left yellow; YYP = 4
    (12, "RRR", 6),  # base red meets 6's base red; RRR = 6
    (11, "YRR", 20),  # right red meets 12's left red; RRY = 5, x4 bonus cell
    (10, "RYY", 8),  # right yellow meets 11's left yellow; YYR = 4, x2 bonus cell
    (4, "YYY", 6),  # base yellow meets 10's base yellow; YYY = 6
]


def play_chain(table: Table, steps: list[tuple[int, str, int]]) -> None:
    for cell, letters, gained in steps:
        mover = table.game.to_move
        outcome = table.place(cell, letters)
        assert outcome.verdict.kind == MOVE, outcome.verdict.reason
        assert outcome.score_change[mover] == gained


# ------------------------------------------------------------------ the equipment
def test_board_edges_follow_the_triangles_corners():
    """README: index row^2 + k; left meets right of index-1, base meets the cell above/below."""
    engine_sides = triangle(6)
    assert len(engine_sides) == CELLS
    for cell in range(CELLS):
        assert sorted(engine_sides[cell]) == sorted(SHARED[cell]), cell
    assert sorted(SHARED[5]) == [(0, 4, 1), (1, 6, 0), (2, 1, 2)]


def test_data_file_holds_the_readme_pieces_and_bonus_cells():
    raw = json.loads(Path("engine/data/spectrangle.json").read_text(encoding="utf-8"))
    assert {"".join(sorted(c)): v for c, v in raw["pieces"].items()} == VALUE
    assert len(raw["pieces"]) == 36
    assert {int(c): b for c, b in raw["bonus"].items()} == BONUS
    assert raw["hand"] == HAND and raw["rows"] == 6


def test_cell_codec_round_trips_every_colour_triple():
    game = Spectrangle()
    for letters in ALL_CONTENTS:
        content = game.cell_from_json(cell_json(letters))
        assert game.cell_to_json(content) == cell_json(letters)
        assert content == tuple(letters)
    assert game.cell_from_json(None) is None
    assert game.cell_from_json(cell_json("RRY")) != game.cell_from_json(cell_json("RYR"))


# ------------------------------------------------------------------ the rules, by the rulebook
def test_first_piece_not_on_a_bonus_cell():
    """Rulebook: "n'importe quelle case, à l'exception d'une case bonus" ... "Il gagne
    alors le nombre de points marqués sur la pièce"."""
    table = Table()
    outcome = table.place(11, "BBR")
    assert outcome.verdict.kind == ILLEGAL
    assert outcome.verdict.reason == "cell 11 is a bonus cell: the first piece may not go there"
    assert outcome.verdict.cells == ("11",)
    assert outcome.to_move == "p1" and outcome.scores == {"p1": 0, "p2": 0}
    assert table.show({}).verdict.kind == NO_CHANGE  # the players take it back
    outcome = table.place(6, "BBR")
    assert outcome.verdict.kind == MOVE and str(outcome.verdict.move) == "BBR@6"
    assert outcome.score_change == {"p1": 5} and outcome.to_move == "p2"


def test_later_piece_must_touch_a_piece():
    """Rulebook: "Chacun à son tour pose une nouvelle pièce qui doit en toucher au moins une
    déjà posée"."""
    table = Table()
    table.place(6, "BBR")
    outcome = table.place(30, "GGY")
    assert outcome.verdict.kind == ILLEGAL
    assert outcome.verdict.reason == "piece at 30 touches no other piece"
    assert outcome.verdict.cells == ("30",)
    assert outcome.to_move == "p2" and table.game.view()["30"] is None


def test_touching_edges_must_match_in_colour():
    """Rulebook: "... et coïncider avec sa couleur": 7's left edge meets 6's right (blue)."""
    table = Table()
    table.place(6, "BBR")
    outcome = table.place(7, "GGY")
    assert outcome.verdict.kind == ILLEGAL
    assert outcome.verdict.reason == "edge green/blue mismatch with the piece at 6"
    assert outcome.verdict.cells == ("7", "6")
    assert outcome.scores == {"p1": 5, "p2": 0} and outcome.to_move == "p2"


def test_every_mismatching_edge_is_named():
    table = Table()
    play_chain(table, CHAIN)
    outcome = table.place(5, "YPB")  # left ok; right purple vs 6's blue; base blue vs 1's purple
    assert outcome.verdict.kind == ILLEGAL
    assert "edge purple/blue mismatch with the piece at 6" in outcome.verdict.reason
    assert "edge blue/purple mismatch with the piece at 1" in outcome.verdict.reason
    assert set(outcome.verdict.cells) == {"5", "6", "1"}


def test_white_joker_matches_any_colour_both_ways():
    """Rulebook: "Le joker (blanc) remplace n'importe quelle couleur. Lorsqu'il est posé sur
    le plateau, toutes les autres pièces peuvent venir s'y juxtaposer"."""
    table = Table()
    table.place(6, "BBR")
    joker = table.place(7, "WWW")  # white meets blue
    assert joker.verdict.kind == MOVE and joker.score_change == {"p2": 1}
    beside = table.place(8, "GGY")  # green meets the joker's white
    assert beside.verdict.kind == MOVE and beside.score_change == {"p1": 4}


@pytest.mark.parametrize("letters", ["RGY", "RYG", "GRY", "GYR", "YRG", "YGR"])
def test_any_orientation_of_a_piece_is_that_piece(letters):
    """README: the pieces are double-sided, so every order of the three colours is allowed."""
    outcome = Table().place(6, letters)
    assert outcome.verdict.kind == MOVE and outcome.score_change == {"p1": 3}
    assert str(outcome.verdict.move) == f"{letters}@6"


def test_score_one_two_and_three_sides():
    """Rulebook: "Compter les points" 1 and 2: value x the number of sides touched."""
    table = Table()
    play_chain(table, CHAIN)
    outcome = table.place(5, "YBP")  # touches 4 (yellow), 6 (blue), 1 (purple)
    assert outcome.verdict.kind == MOVE and outcome.score_change == {"p2": 3 * 3}
    assert outcome.scores == {"p1": 5 + 5 + 4 + 20 + 6, "p2": 4 + 15 + 6 + 8 + 9}


def test_score_two_sides_around_a_corner():
    table = Table()
    play_chain(table, CHAIN[:5])
    outcome = table.place(5, "YBP")  # 4 is still empty: touches 6 and 1
    assert outcome.verdict.kind == MOVE and outcome.score_change == {"p2": 3 * 2}


def test_score_value_times_sides_times_bonus():
    """Rulebook: "Résumé: la valeur de la pièce posée, multipliée par le nombre de côtés touchés,
    multiplié par le bonus éventuel": cell 2 (x3) touching 1 and 3."""
    table = Table()
    play_chain(table, [(6, "BBR", 5), (7, "BGB", 4), (3, "PBB", 5), (5, "YBP", 3), (1, "YYP", 4)])
    outcome = table.place(2, "YPP")  # left yellow = 1's right; right purple = 3's left
    assert outcome.verdict.kind == MOVE and outcome.score_change == {"p2": 5 * 2 * 3}


def test_a_placed_piece_never_moves():
    """Rulebook: "Une pièce posée ne peut plus être déplacée": moved, turned or lifted, it is
    not a move."""
    table = Table()
    table.place(6, "BBR")
    table.place(7, "BGB")
    for board, cells in [
        ({6: "BBR", 8: "BGB"}, ("7", "8")),  # slid from 7 to 8
        ({6: "BBR", 7: "BBG"}, ("7",)),  # turned on its cell: same piece, other content
        ({6: "BBR"}, ("7",)),  # lifted
    ]:
        outcome = table.show(board)
        assert outcome.verdict.kind == AMBIGUOUS, board
        assert "placed pieces never move" in outcome.verdict.reason
        assert set(outcome.verdict.cells) >= {"7"} and set(outcome.verdict.cells) <= set(cells)
        assert outcome.to_move == "p1" and outcome.scores == {"p1": 5, "p2": 4}


def test_not_one_placement_is_ambiguous():
    table = Table()
    table.place(6, "BBR")
    two = table.show({6: "BBR", 7: "BGB", 12: "RRR"})
    assert two.verdict.kind == AMBIGUOUS and set(two.verdict.cells) == {"7", "12"}
    again = table.show({6: "BBR", 7: "BRB"})  # BBR is already on the board
    assert again.verdict.kind == AMBIGUOUS
    assert again.verdict.reason == "7: the piece BBR is already on the board at 6"
    assert again.verdict.cells == ("7", "6")
    none = table.show({6: "BBR", 7: "BWW"})  # no such piece in the box
    assert none.verdict.kind == AMBIGUOUS and none.verdict.cells == ("7",)
    assert "no blue/white/white piece" in none.verdict.reason
    assert table.game.view()["7"] is None and table.game.to_move == "p2"


def test_partly_hidden_board_cannot_be_judged():
    table = Table()
    table.place(6, "BBR")
    seen = observation({6: "BBR", 7: "BGB"})
    del seen["cells"]["30"]
    seen["partial"] = True
    outcome = table.referee.feed(seen)
    assert outcome.verdict.kind == AMBIGUOUS and "hidden" in outcome.verdict.reason
    assert [str(m) for m in outcome.verdict.candidates] == ["BGB@7"]


# ------------------------------------------------------------------ passing, exchanging, the end
def test_pass_and_exchange_hand_the_turn_on():
    """Rulebook: "Si un joueur ne peut pas poser de pièce il a le choix entre: a. passer son
    tour. b. échanger une de ses pièces contre une autre du sac et passer son tour." The camera
    does not see the hands, so the referee cannot refuse a pass."""
    table = Table(players=3)
    table.place(6, "BBR")
    assert table.press("pass", player="p2").to_move == "p3"
    wrong = table.press("exchange", player="p2")
    assert wrong.verdict.kind == ILLEGAL and wrong.to_move == "p3"
    exchanged = table.press("exchange", player="p3")
    assert exchanged.verdict.kind == EVENT and exchanged.to_move == "p1"
    assert table.game.bag == 36 - 3 * HAND - 1


def test_end_deducts_the_pieces_left_in_hand():
    """Rulebook: "Si la partie est terminée et que des joueurs ont encore des pièces, la valeur de
    celles-ci sera déduite de leurs points."""
    table = Table()
    play_chain(table, CHAIN[:2])
    outcome = table.press("end", remaining={"p1": ["RRR", "YGG"], "p2": ["WWW"]})
    assert outcome.verdict.kind == EVENT
    assert outcome.score_change == {"p1": -(6 + 4), "p2": -1}
    assert outcome.over and outcome.to_move is None
    assert outcome.scores == {"p1": 5 - 10, "p2": 4 - 1} and outcome.winner == "p2"
    assert table.press("end").verdict.kind == ILLEGAL  # ended once


@pytest.mark.parametrize(
    ("remaining", "words"),
    [
        ({"p1": ["BBR"]}, "on the board at 6"),
        ({"p1": ["RRR"], "p2": ["RRR"]}, "listed twice"),
        ({"p1": ["RGX"]}, "no such piece"),
        ({"p3": ["RRR"]}, "unknown player"),
        ({"p1": ["RRR", "GGG", "BBB", "YYY", "PPP"]}, "a hand holds 4"),
        (["RRR"], "must map players"),
        ({"p1": "RRR"}, "list of codes"),
    ],
)
def test_end_rejects_impossible_hands(remaining, words):
    table = Table()
    table.place(6, "BBR")
    outcome = table.press("end", remaining=remaining)
    assert outcome.verdict.kind == ILLEGAL and words in outcome.verdict.reason
    assert not outcome.over and outcome.scores == {"p1": 5, "p2": 0}


def small_box(tmp_path: Path, pieces: dict[str, int]) -> str:
    """An equipment file with fewer pieces (the ``data`` option), to reach the end quickly."""
    path = tmp_path / "box.json"
    raw = {"rows": 6, "hand": HAND, "bonus": {str(c): b for c, b in BONUS.items()}}
    path.write_text(json.dumps({**raw, "pieces": pieces}), encoding="utf-8")
    return str(path)


def test_game_over_when_the_bag_is_empty_and_no_piece_fits(tmp_path):
    """Rulebook: "La partie est terminée lorsque le sac est vide et que plus personne ne peut
    jouer"; the end event still deducts the hands afterwards."""
    box = small_box(tmp_path, {c: 6 for c in ("RRR", "GGG", "BBB", "YYY", "PPP")} | {"GGY": 4})
    table = Table()
    table.referee = Referee("spectrangle", data=box)
    outcome = table.place(6, "RRR")  # nothing left has a red edge
    assert outcome.over and outcome.winner == "p1" and outcome.to_move is None
    assert table.game.over_reason == "no piece left fits anywhere"
    assert table.place(7, "RGG").verdict.kind == ILLEGAL  # the game is over
    assert table.press("pass").verdict.kind == ILLEGAL
    ended = table.press("end", remaining={"p1": ["GGG", "BBB"], "p2": ["YYY"]})
    assert ended.verdict.kind == EVENT and ended.scores == {"p1": 6 - 12, "p2": -6}
    assert ended.winner == DRAW


def test_game_over_when_every_player_passed_with_an_empty_bag(tmp_path):
    box = small_box(tmp_path, {"RRR": 6, "RRY": 5, "RRP": 5, "GGG": 6, "BBB": 6})
    table = Table()
    table.referee = Referee("spectrangle", data=box)
    assert table.game.bag == 0
    table.place(6, "RRR")
    assert table.press("exchange").verdict.reason == "the bag is empty: nothing to exchange"
    assert not table.press("pass").over
    table.place(7, "RYR")  # a placement breaks the run of passes
    assert not table.press("pass").over
    outcome = table.press("pass")
    assert outcome.over and outcome.winner == "p1"
    assert table.game.over_reason == "the bag is empty and every player passed"


def test_passes_do_not_end_the_game_while_the_bag_holds_pieces():
    table = Table()
    for _ in range(5):
        outcome = table.press("pass")
    assert not outcome.over and outcome.to_move == "p2"


def test_game_over_when_every_piece_is_placed(tmp_path):
    table = Table()
    table.referee = Referee("spectrangle", data=small_box(tmp_path, {"RRR": 6, "RRY": 5}))
    table.place(6, "RRR")
    outcome = table.place(7, "RYR")
    assert outcome.over and outcome.scores == {"p1": 6, "p2": 5} and outcome.winner == "p1"
    assert table.game.over_reason == "every piece is on the board"


def test_level_scores_are_a_draw():
    table = Table()
    play_chain(table, [(6, "RRY", 5), (7, "RRP", 5)])
    outcome = table.press("end")
    assert outcome.over and outcome.winner == DRAW


def test_resign_hands_the_game_to_the_others():
    table = Table(players=3)
    play_chain(table, [(6, "BBR", 5), (7, "BGB", 4)])
    outcome = table.press("resign", player="p1")
    assert outcome.over and outcome.winner == "p2"  # p1 led, but resigned
    assert table.press("resign", player="p2").verdict.kind == ILLEGAL


def test_undo_restores_board_score_and_turn():
    table = Table()
    table.place(6, "BBR")
    table.place(7, "BGB")
    undone = table.press("undo")
    assert undone.verdict.kind == EVENT and undone.scores == {"p1": 5, "p2": 0}
    assert undone.to_move == "p2" and table.game.view()["7"] is None
    assert table.show({6: "BBR", 7: "BGB"}).verdict.kind == MOVE  # the board still shows it


# ------------------------------------------------------------------ options and teams
def test_team_variant_partners_share_one_score():
    """Rulebook: "Variante du jeu en équipe": partners sit opposite and share one marker colour."""
    table = Table(players=4, teams=True)
    play_chain(table, CHAIN[:4])
    assert table.game.scores == {"p1": 5 + 5, "p2": 4 + 15, "p3": 5 + 5, "p4": 4 + 15}
    outcome = table.press("end", remaining={"p1": ["WWW"], "p3": ["RRR"]})
    assert outcome.scores["p3"] == 10 - 7 and outcome.winner == "p2+p4"


def test_first_player_and_team_lists():
    table = Table(players=4, teams=[["p4", "p2"], ["p3", "p1"]], first="p3")
    assert table.game.to_move == "p3"
    outcome = table.place(6, "BBR")
    assert outcome.scores == {"p1": 5, "p2": 0, "p3": 5, "p4": 0} and outcome.to_move == "p4"


@pytest.mark.parametrize(
    "options",
    [
        {"players": 5},
        {"players": 1},
        {"players": "3"},
        {"players": True},
        {"players": 3, "teams": True},
        {"players": 4, "teams": [["p1", "p2"], ["p3", "p4"]]},
        {"players": 4, "teams": "yes"},
        {"first": "p3"},
        {"scoring": "advanced"},
    ],
)
def test_bad_start_options_are_refused_with_a_reason(options):
    with pytest.raises(FormatError):
        Spectrangle(**options)
    outcome = Table().press("start", **options)
    assert outcome.verdict.kind == ILLEGAL and outcome.verdict.reason.startswith("cannot start")


def test_bad_data_file_is_refused(tmp_path):
    with pytest.raises(FormatError, match="cannot read"):
        Spectrangle(data=str(tmp_path / "missing.json"))
    with pytest.raises(FormatError, match="two pieces have the colours"):
        Spectrangle(data=small_box(tmp_path, {"RRY": 5, "YRR": 4}))


def test_none_options_are_ignored_and_start_player_goes_first():
    game = Spectrangle(players=None, teams=None, first=None)
    assert game.players == ("p1", "p2") and game.to_move == "p1"
    assert Spectrangle(teams=True).players == ("p1", "p2", "p3", "p4")
    table = Table()
    assert table.press("start", player="p2", players=3).to_move == "p2"


# ------------------------------------------------------------------ bad input never raises
@pytest.mark.parametrize(
    "item",
    [
        {"game": "gobblet", "cells": {}},
        {"game": "spectrangle", "cells": {"6": {"left": "red", "right": "red"}}},
        {"game": "spectrangle", "cells": {"6": {"left": "red", "right": "red", "base": "pink"}}},
        {"game": "spectrangle", "cells": {"6": "RRY"}},
        {"game": "spectrangle", "cells": {"6": {"left": [], "right": "red", "base": "red"}}},
        {"game": "spectrangle", "cells": {"36": None}},
        {"game": "spectrangle"},
        "not an object",
        {"event": "shuffle"},
    ],
)
def test_bad_input_is_ambiguous_with_a_reason(item):
    outcome = Referee("spectrangle").feed(item)
    assert outcome.verdict.kind == AMBIGUOUS and outcome.verdict.reason


def test_notation_round_trips_and_rejects_junk():
    game = Spectrangle()
    moves = list(game.legal_moves())
    game.play(Place(("B", "B", "R"), 6))
    moves += list(game.legal_moves())
    assert all(game.parse_move(str(m)) == m for m in moves)
    assert game.parse_move("rgy@17") == Place(("R", "G", "Y"), 17)
    assert Place(("R", "G", "Y"), 17).cells() == ("17",)
    for junk in ["", "RG@1", "RGX@1", "RGY@", "RGY@36", "RGY17", "RGY@-1"]:
        with pytest.raises(FormatError):
            game.parse_move(junk)


def step(game: Spectrangle, action: Place | Event) -> None:
    if isinstance(action, Event):
        assert game.handle(action).kind == EVENT
    else:
        game.play(action)


def test_record_round_trip_and_tampered_record():
    rng = random.Random(5)
    game = Spectrangle(players=4, teams=True, first="p2")
    while not game.is_over:
        step(game, game.random_move(rng))
    game.handle(Event("end", data={"remaining": {"p1": []}}))
    record = json.loads(json.dumps(game.to_record()))
    again = Spectrangle.from_record(record)
    assert again.view() == game.view() and again.scores == game.scores
    assert again.history == game.history and again.winner == game.winner
    record["actions"][1] = record["actions"][0]
    with pytest.raises(FormatError, match="record action 2"):
        Spectrangle.from_record(record)


# ------------------------------------------------------------------ properties
def random_options(rng: random.Random) -> dict:
    players = rng.choice([2, 3, 4])
    options: dict = {"players": players, "first": f"p{rng.randint(1, players)}"}
    if players == 4 and rng.random() < 0.5:
        options["teams"] = True
    return options


def random_hands(rng: random.Random, board: Board, players: int) -> dict[str, list[str]]:
    on_board = {"".join(sorted(e)) for e in board.values()}
    left = [c for c in VALUE if c not in on_board]
    rng.shuffle(left)
    return {f"p{i + 1}": left[i * 3 : i * 3 + rng.randint(0, 3)] for i in range(players)}


@settings(derandomize=True, max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_replayed_from_the_camera_are_all_moves(seed):
    """(1) Every observed board of a random legal game is judged the move that was played; an
    undo pressed in between is an event, and the same board is then accepted again. The game
    ends exactly when the rulebook's end conditions, checked here, say so."""
    rng = random.Random(seed)
    options = random_options(rng)
    driver = Spectrangle(**options)
    table = Table(**options)
    passes = 0
    while not driver.is_over:
        action = driver.random_move(rng)
        if isinstance(action, Event):
            assert driver.handle(action).kind == EVENT
            outcome = table.press(action.name, player=action.player)
            assert outcome.verdict.kind == EVENT, outcome.verdict.reason
            passes += 1
        else:
            passes = 0
            text = str(action)
            driver.play(action)
            letters, cell = text.split("@")
            if rng.random() < 0.1:
                assert table.place(int(cell), letters).verdict.kind == MOVE
                assert table.press("undo").verdict.kind == EVENT
                del table.board[int(cell)]
            outcome = table.place(int(cell), letters)
            assert outcome.verdict.kind == MOVE, outcome.verdict.reason
            assert str(outcome.verdict.move) == text
        assert outcome.scores == driver.scores and outcome.to_move == driver.to_move
        assert outcome.over == game_should_end(table.board, passes, options["players"])
    assert table.game.is_over and table.game.winner == driver.winner


def game_should_end(board: Board, passes: int, players: int) -> bool:
    """Every piece placed, no unplaced piece fits, or an empty bag and a full round of passes."""
    bag = max(0, CELLS - HAND * players - len(board))
    on_board = {"".join(sorted(e)) for e in board.values()}
    unplaced = [x for x in ALL_CONTENTS if "".join(sorted(x)) in VALUE.keys() - on_board]
    open_cells = [c for c in range(CELLS) if c not in board and touching(board, c)]
    stuck = bool(board) and not any(edges_match(board, c, x) for c in open_cells for x in unplaced)
    return len(board) == CELLS or stuck or (bag == 0 and passes >= players)


def random_position(seed: int, moves: int) -> tuple[Spectrangle, Board]:
    """A game after up to ``moves`` random placements (passes in between), and its board."""
    rng = random.Random(seed)
    game = Spectrangle(**random_options(rng))
    board: Board = {}
    while not game.is_over and len(board) < moves:
        action = game.random_move(rng)
        if isinstance(action, Event):
            game.handle(action)
        else:
            game.play(action)
            board[action.cell] = "".join(action.edges)
    return game, board


def expected_kind(board: Board, after: Board) -> tuple[str, str | None]:
    """What the rules say about ``after`` seen while ``board`` is the accepted one."""
    changed = [c for c in range(CELLS) if board.get(c) != after.get(c)]
    if not changed:
        return NO_CHANGE, None
    if len(changed) > 1 or changed[0] in board:
        return AMBIGUOUS, None
    cell = changed[0]
    letters = after[cell]
    key = "".join(sorted(letters))
    if key not in VALUE or any("".join(sorted(e)) == key for e in board.values()):
        return AMBIGUOUS, None
    if fits(board, cell, letters):
        return MOVE, f"{letters}@{cell}"
    return ILLEGAL, None


def test_legal_moves_are_exactly_the_rulebook_placements():
    positions = [random_position(seed, moves=seed * 4) for seed in range(8)]
    joker = Spectrangle()
    for cell, letters in [(6, "BBR"), (7, "WWW")]:
        joker.play(joker.parse_move(f"{letters}@{cell}"))
    positions.append((joker, {6: "BBR", 7: "WWW"}))
    for game, board in positions:
        if game.is_over:
            continue
        expected = {
            f"{letters}@{cell}"
            for cell in range(CELLS)
            for letters in ALL_CONTENTS
            if fits(board, cell, letters)
        }
        assert {str(m) for m in game.legal_moves()} == expected


@settings(derandomize=True, max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    moves=st.integers(0, 30),
    cell=st.one_of(st.none(), st.integers(0, CELLS - 1)),
    content=st.sampled_from([None, *ALL_CONTENTS]),
)
def test_one_corrupted_cell_is_flagged_unless_it_shows_another_legal_move(
    seed, moves, cell, content
):
    """(2) A legal successor board with one cell changed (any colours, or emptied) is judged
    by the rules: a move only when it is exactly another legal placement; the state is kept.
    ``cell`` None corrupts the cell of the move itself (the likeliest misreading)."""
    game, board = random_position(seed, moves)
    if game.is_over:
        return
    rng = random.Random(seed)
    move = rng.choice(list(game.legal_moves()))
    after = {**board, move.cell: "".join(move.edges)}
    cell = move.cell if cell is None else cell
    if content is None:
        after.pop(cell, None)
    else:
        after[cell] = content
    table = Table()
    table.referee.game = game
    before = (game.view(), game.scores, game.to_move, len(game.history))
    outcome = table.show(after)
    kind, notation = expected_kind(board, after)
    assert outcome.verdict.kind == kind, (after, outcome.verdict)
    if kind == MOVE:
        assert str(outcome.verdict.move) == notation
    else:
        assert (game.view(), game.scores, game.to_move, len(game.history)) == before


def test_every_corruption_of_a_few_positions():
    """(2), exhaustively: all 36 x 217 single-cell changes of three successor boards."""
    for seed, moves in [(1, 0), (2, 9), (3, 20)]:
        game, board = random_position(seed, moves)
        move = random.Random(seed).choice(list(game.legal_moves()))
        successor = {**board, move.cell: "".join(move.edges)}
        view = game.view()
        for cell in range(CELLS):
            for content in [None, *ALL_CONTENTS]:
                after = dict(successor)
                if content is None:
                    after.pop(cell, None)
                else:
                    after[cell] = content
                seen = {str(c): tuple(after[c]) if c in after else None for c in range(CELLS)}
                verdict = game.infer(Observation("spectrangle", seen))
                kind, notation = expected_kind(board, after)
                assert verdict.kind == kind, (after, verdict)
                assert notation is None or str(verdict.move) == notation
        assert game.view() == view


@settings(derandomize=True, max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_scores_match_an_independent_recount(seed):
    """(3) Recount a random game from its move list: value x sides x bonus to the mover's side,
    minus the hands at the end."""
    rng = random.Random(seed)
    options = random_options(rng)
    game = Spectrangle(**options)
    while not game.is_over:
        step(game, game.random_move(rng))
    final = {int(c): "".join(e) for c, e in game.view().items() if e is not None}
    step(game, Event("end", data={"remaining": random_hands(rng, final, options["players"])}))

    board: Board = {}

    players = [f"p{i + 1}" for i in range(options["players"])]
    team = {"p1": "A", "p3": "A", "p2": "B", "p4": "B"} if options.get("teams") else {}
    side = {p: team.get(p, p) for p in players}
    total = dict.fromkeys(side.values(), 0)
    turn = players.index(options["first"])
    for action in game.history:
        text = action.to_json() if isinstance(action, Event) else str(action)
        if isinstance(text, dict):
            if text["event"] in ("pass", "exchange"):
                turn = (turn + 1) % len(players)
            for player, codes in text.get("remaining", {}).items():
                total[side[player]] -= sum(VALUE["".join(sorted(c))] for c in codes)
            continue
        found = re.fullmatch(r"([RGBYPW]{3})@(\d+)", text)
        assert found is not None
        letters, cell = found[1], int(found[2])
        total[side[players[turn]]] += points(board, cell, letters)
        board[cell] = letters
        turn = (turn + 1) % len(players)
    assert game.scores == {p: total[side[p]] for p in players}
