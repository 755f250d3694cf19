"""Blokus (two-player 12x12 edition) and Blokus Duo, judged from whole-board observations.

Rule cases follow the sections of ``shared/rules/blokus-2p.fr.txt`` (DÉROULEMENT D'UNE MANCHE,
FIN DE PARTIE / GAGNANT, Technique avancée de comptage des points) and the Blokus section of
``shared/rules/README.md``; its figures are missing, so the positions are built from the text.
Observations are the JSON objects of ``shared/spec/observation.md``, fed to the referee as
``referee replay`` would feed them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import AMBIGUOUS, DRAW, EVENT, ILLEGAL, MOVE, NO_CHANGE, Event, FormatError, Referee
from engine.blokus import Blokus, BlokusDuo, Placement
from engine.core import IllegalMoveError
from engine.referee import Outcome

DATA = Path(__file__).parents[2] / "engine" / "data"
EDITIONS = ("blokus", "blokus-duo")
FILES = "abcdefghijklmnopqrstuvwxyz"
COLOURS = ("orange", "violet")
# Technique avancée de comptage des points: +15 with all pieces placed, +5 more for the monomino
ALL_PLACED, MONOMINO_LAST, MONOMINO = 15, 5, "I1"


def data_of(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def square(x: int, y: int) -> str:
    return f"{FILES[x]}{y + 1}"


def coords(name: str) -> tuple[int, int]:
    return FILES.index(name[0]), int(name[1:]) - 1


def all_squares(size: int) -> list[str]:
    return [square(x, y) for y in range(size) for x in range(size)]


def observation(game: str, size: int, board: dict[str, str]) -> dict:
    """The camera's JSON for a board given as square -> colour (other squares empty)."""
    return {"game": game, "cells": {sq: board.get(sq) for sq in all_squares(size)}}


class Table:
    """A referee fed with whole-board observations, and the board as the players left it."""

    def __init__(self, game: str = "blokus", **options: object) -> None:
        self.name = game
        self.referee = Referee(game, **options)
        self.size = self.referee.game.edition.size
        self.board: dict[str, str] = {}

    def show(self, board: dict[str, str]) -> Outcome:
        return self.referee.feed(observation(self.name, self.size, board))

    def place(self, colour: str, squares: str | tuple[str, ...]) -> Outcome:
        """Put new squares of ``colour`` down; the board keeps them only if accepted."""
        names = squares.split() if isinstance(squares, str) else squares
        trial = {**self.board, **dict.fromkeys(names, colour)}
        out = self.show(trial)
        if out.verdict.kind == MOVE:
            self.board = trial
        return out

    def event(self, name: str, **data: object) -> Outcome:
        return self.referee.feed({"event": name, **data})


def opening(table: Table) -> None:
    """Four legal moves on the 12x12 board, checked by hand against the rules:
    orange T5 on d9; violet V3 on i4; orange I1 at f6 (corner of e7); violet O4 on g6-h7
    (corner of i5, and along the edge of the orange f6: colours may touch)."""
    for colour, squares in [
        ("orange", "d9 e9 f9 e8 e7"),
        ("violet", "i4 j4 i5"),
        ("orange", "f6"),
        ("violet", "g6 h6 g7 h7"),
    ]:
        out = table.place(colour, squares)
        assert out.verdict.kind == MOVE, out.verdict.reason


# ----------------------------------------------------------------- an independent rule model
def turned_and_flipped(squares: list[list[int]]) -> set[frozenset[tuple[int, int]]]:
    """Four quarter turns of the shape and of its mirror image, moved next to the origin."""
    shapes = set()
    points = [(x, y) for x, y in squares]
    for _ in range(2):
        for _ in range(4):
            points = [(y, -x) for x, y in points]
            left, bottom = min(p[0] for p in points), min(p[1] for p in points)
            shapes.add(frozenset((x - left, y - bottom) for x, y in points))
        points = [(-x, y) for x, y in points]
    return shapes


def brute_force(data: dict, board: dict[str, str], colour: str, used: set[str]) -> set:
    """Every legal (piece, squares) for ``colour``, straight from the rulebook's sentences."""
    size = data["board"]["size"]
    taken = {coords(sq): c for sq, c in board.items()}
    own = {xy for xy, c in taken.items() if c == colour}
    sides = {(x + dx, y + dy) for x, y in own for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))}
    corners = {(x + dx, y + dy) for x, y in own for dx, dy in ((1, 1), (-1, 1), (1, -1), (-1, -1))}
    starts = {coords(sq) for sq in data["board"]["start_points"]}
    found = set()
    for piece in data["pieces"]:
        if piece["name"] in used:
            continue
        for shape in turned_and_flipped(piece["squares"]):
            width, height = max(x for x, _ in shape) + 1, max(y for _, y in shape) + 1
            for dx in range(size - width + 1):
                for dy in range(size - height + 1):
                    cells = {(x + dx, y + dy) for x, y in shape}
                    if cells & taken.keys():
                        continue
                    if own:
                        legal = not cells & sides and bool(cells & corners)
                    else:
                        legal = bool(cells & (starts - taken.keys()))
                    if legal:
                        found.add((piece["name"], frozenset(square(x, y) for x, y in cells)))
    return found


def play_random(
    table: Table, seed: int, stop: int | None = None
) -> Iterator[tuple[str, Placement]]:
    """Play seeded random legal moves as observations (``stop`` moves, or to the end); yields
    (mover, move) after checking that the referee read each one as the move played."""
    rng = random.Random(seed)
    game = table.referee.game
    while not game.is_over and (stop is None or len(game.history) < stop):
        mover, move = game.to_move, game.random_move(rng)
        out = table.place(mover, move.cells())
        assert out.verdict.kind == MOVE and out.verdict.move == move, out.verdict.reason
        yield mover, move


# ----------------------------------------------------------------- data files
def test_data_12x12_holds_the_rulebook_set():
    """CONTENU: 16 pieces a colour, all different: 1 of 1, 2 and 3 squares, 5 of 4, 8 of 5."""
    data = data_of("blokus")
    sizes = sorted(len(p["squares"]) for p in data["pieces"])
    assert sizes == [1, 2, 3] + [4] * 5 + [5] * 8
    shapes = [min(turned_and_flipped(p["squares"]), key=sorted) for p in data["pieces"]]
    assert len(set(shapes)) == 16
    assert data["board"] == {"size": 12, "start_points": ["d9", "i4"]}


def test_data_duo_holds_every_free_polyomino_up_to_five():
    """Blokus Duo: the 21 standard pieces are the 1 + 1 + 2 + 5 + 12 free polyominoes."""
    data = data_of("blokus-duo")
    shapes = {min(turned_and_flipped(p["squares"]), key=sorted) for p in data["pieces"]}
    by_size = sorted(len(shape) for shape in shapes)
    assert by_size == [1, 2, 3, 3] + [4] * 5 + [5] * 12
    assert data["board"] == {"size": 14, "start_points": ["e10", "j5"]}


# ----------------------------------------------------------------- DÉROULEMENT 1/: start points
def test_first_piece_on_a_start_point_is_read_as_that_move():
    table = Table()
    out = table.place("orange", "e7 d9 e8 f9 e9")
    assert out.verdict.kind == MOVE
    assert str(out.verdict.move) == "T5@d9,e9,f9,e8,e7"
    assert out.to_move == "violet"


def test_first_player_may_take_either_start_point_the_second_the_other():
    table = Table()
    assert table.place("orange", "i4 i5").verdict.kind == MOVE
    out = table.place("violet", "h4 h5 h6 h7")
    assert out.verdict.kind == ILLEGAL
    assert out.verdict.reason == "violet's first piece must cover d9"
    assert table.place("violet", "d9 d8 d7 d6").verdict.kind == MOVE


def test_first_piece_away_from_the_start_points_is_illegal():
    out = Table().place("orange", "a1 b1")
    assert out.verdict.kind == ILLEGAL
    assert out.verdict.reason == "orange's first piece must cover d9 or i4"
    assert out.verdict.cells == ("a1", "b1")


def test_second_player_must_cover_the_other_start_point():
    table = Table()
    table.place("orange", "d9 e9 f9 e8 e7")
    out = table.place("violet", "h4 h5")
    assert out.verdict.kind == ILLEGAL
    assert out.verdict.reason == "violet's first piece must cover i4"
    assert table.place("violet", "i4 j4 i5").verdict.kind == MOVE


def test_first_option_lets_violet_begin():
    table = Table(first="violet")
    assert table.referee.game.to_move == "violet"
    assert table.place("orange", "d9").verdict.reason == "it is violet's turn"
    assert table.place("violet", "d9").verdict.kind == MOVE


def test_start_event_sets_first_player_and_scoring():
    table = Table()
    out = table.event("start", player="violet", scoring="basic")
    assert out.verdict.kind == EVENT and out.to_move == "violet"
    assert out.scores == {"violet": 66, "orange": 66}


# ----------------------------------------------------------------- DÉROULEMENT 2/ and 3/
def test_players_take_turns_and_a_piece_of_the_wrong_colour_is_illegal():
    out = Table(first="orange").place("violet", "d9 e9 f9 e8 e7")
    assert out.verdict.kind == ILLEGAL
    assert out.verdict.reason == "it is orange's turn"
    assert set(out.verdict.cells) == {"d9", "e9", "f9", "e8", "e7"}
    table = Table()
    table.place("orange", "d9 e9 f9 e8 e7")
    out = table.place("orange", "i4")
    assert out.verdict.kind == ILLEGAL and out.verdict.reason == "it is violet's turn"


@pytest.mark.parametrize("name", EDITIONS)
@pytest.mark.parametrize("opener", COLOURS)
def test_either_colour_may_open_when_no_first_player_is_named(name, opener):
    """'Le joueur le plus jeune débute': the rulebook names no colour, so the first piece placed
    decides who starts; the other colour follows, and the record keeps who it was."""
    table = Table(name)
    other = COLOURS[1 - COLOURS.index(opener)]
    start_a, start_b = table.referee.game.edition.names(table.referee.game.edition.start)
    out = table.place(opener, start_a)
    assert out.verdict.kind == MOVE and out.mover == opener and out.to_move == other
    assert table.referee.game.players == (opener, other)
    assert table.place(opener, start_b).verdict.reason == f"it is {other}'s turn"
    assert table.place(other, start_b).verdict.kind == MOVE
    record = table.referee.game.to_record()
    assert record["options"]["first"] == opener
    again = type(table.referee.game).from_record(record)
    assert again.view() == table.referee.game.view()


def test_undoing_the_opening_piece_lets_either_colour_open_again():
    table = Table()
    assert table.place("violet", "d9").verdict.kind == MOVE
    assert table.referee.game.players == ("violet", "orange")
    assert table.referee.event(Event("undo")).verdict.kind == EVENT
    game = table.referee.game
    assert game.first_is_open and not game.history and "first" not in game.options
    out = table.place("orange", "d9")
    assert out.verdict.kind == MOVE and out.mover == "orange"
    assert table.referee.game.players == ("orange", "violet")


def test_an_illegal_opening_by_either_colour_is_refused_for_that_colour():
    table = Table()
    out = table.place("violet", "a1")
    assert out.verdict.kind == ILLEGAL
    assert out.verdict.reason == "violet's first piece must cover d9 or i4"
    assert table.referee.game.first_is_open  # nothing decided: orange may still open
    assert table.place("orange", "d9").verdict.kind == MOVE


def test_new_piece_touching_its_colour_at_a_corner_is_legal():
    table = Table()
    table.place("orange", "d9 e9 f9 e8 e7")
    table.place("violet", "i4 j4 i5")
    out = table.place("orange", "f6")
    assert out.verdict.kind == MOVE and str(out.verdict.move) == "I1@f6"


def test_new_piece_along_an_edge_of_its_colour_is_illegal():
    """'Les bords des pièces de même couleur ne doivent pas être en contact.'"""
    table = Table()
    table.place("orange", "d9 e9 f9 e8 e7")
    table.place("violet", "i4 j4 i5")
    out = table.place("orange", "f6 f7")
    assert out.verdict.kind == ILLEGAL
    assert out.verdict.reason == "orange piece touches orange by an edge at f7"
    assert out.verdict.cells == ("f7",)
    out = table.place("orange", "e6")
    assert out.verdict.reason == "orange piece touches orange by an edge at e6"


def test_new_piece_that_touches_no_piece_of_its_colour_is_illegal():
    """'Chaque nouvelle pièce doit toucher au moins l'une des autres pièces de même couleur.'"""
    table = Table()
    table.place("orange", "d9 e9 f9 e8 e7")
    table.place("violet", "i4 j4 i5")
    out = table.place("orange", "a1")
    assert out.verdict.kind == ILLEGAL
    assert out.verdict.reason == "orange piece touches no orange piece at a corner"
    assert out.verdict.cells == ("a1",)


def test_pieces_of_different_colours_may_touch_in_any_way():
    table = Table()
    opening(table)  # violet's O4 at g6 shares an edge with orange's f6
    assert table.board["g6"] == "violet" and table.board["f6"] == "orange"
    assert table.referee.game.to_move == "orange"


def test_a_piece_already_played_is_illegal():
    """CONTENU: each set holds each shape once."""
    table = Table()
    opening(table)
    out = table.place("orange", "g5")
    assert out.verdict.kind == ILLEGAL
    assert out.verdict.reason == "orange has already played the I1"
    assert out.verdict.cells == ("g5",)


def test_a_rejected_placement_leaves_the_state_for_the_players_to_correct():
    table = Table()
    opening(table)
    before = table.referee.game.to_record()
    table.place("orange", "g5")
    assert table.referee.game.to_record() == before
    assert table.show(table.board).verdict.kind == NO_CHANGE
    assert table.place("orange", "g5 g4").verdict.kind == MOVE


# ----------------------------------------------------------------- not one placement: ambiguous
@pytest.mark.parametrize(
    ("board", "why"),
    [
        ({"d9": "orange", "a1": "orange"}, "2 separate groups"),
        ({"d9": "orange", "i4": "violet"}, "both colours"),
        (dict.fromkeys(["d9", "e9", "f9", "d8", "e8", "f8"], "orange"), "no piece of the set"),
        (dict.fromkeys(["c9", "d9", "e9"], "orange"), "no piece of the set"),  # I3: not in 12x12
        (dict.fromkeys(["d10", "c9", "d9", "e9", "d8"], "orange"), "no piece of the set"),  # X5
    ],
)
def test_a_change_that_is_not_one_piece_is_ambiguous(board, why):
    out = Table().show(board)
    assert out.verdict.kind == AMBIGUOUS
    assert why in out.verdict.reason
    assert set(out.verdict.cells) == set(board)


def test_a_square_that_vanished_or_changed_colour_is_ambiguous():
    """'Une fois qu'une pièce du jeu est posée sur le plateau, elle ne peut plus être déplacée.'"""
    table = Table()
    table.place("orange", "d9 e9 f9 e8 e7")
    for changed in (
        {**table.board, "e7": "violet"},
        {k: v for k, v in table.board.items() if k != "e7"},
    ):
        out = table.show(changed)
        assert out.verdict.kind == AMBIGUOUS
        assert out.verdict.cells == ("e7",)
        assert "changed colour or vanished" in out.verdict.reason


def test_a_change_on_a_partly_hidden_board_waits():
    table = Table()
    obj = observation("blokus", 12, {"d9": "orange"})
    del obj["cells"]["a1"]
    obj["partial"] = True
    out = table.referee.feed(obj)
    assert out.verdict.kind == AMBIGUOUS and out.verdict.candidates == (Placement("I1", ("d9",)),)


# ----------------------------------------------------------------- passing and the end
def tiny_data(tmp_path: Path, pieces: dict[str, list[list[int]]]) -> str:
    """A 4x4 board with start points a1 and d4 and a small piece set (the ``data`` option)."""
    path = tmp_path / "tiny.json"
    path.write_text(
        json.dumps(
            {
                "board": {"size": 4, "start_points": ["a1", "d4"]},
                "pieces": [{"name": name, "squares": sq} for name, sq in pieces.items()],
                "scoring": {"all_placed_bonus": 15, "last_piece": "I1", "last_piece_bonus": 5},
            }
        ),
        encoding="utf-8",
    )
    return str(path)


MONO, DOMINO, SQUARE = [[0, 0]], [[0, 0], [1, 0]], [[0, 0], [1, 0], [0, 1], [1, 1]]


def test_a_blocked_player_is_passed_and_the_game_ends_when_nobody_can_place(tmp_path):
    """DÉROULEMENT 4/ and FIN DE PARTIE 1/, 2/ on a 4x4 board: once orange's I2 covers c3,
    violet's only corner, violet passes; orange then places its last piece and the game ends."""
    table = Table("blokus", data=tiny_data(tmp_path, {"I1": MONO, "I2": DOMINO, "O4": SQUARE}))
    assert table.place("orange", "a1 b1 a2 b2").verdict.kind == MOVE
    assert table.place("violet", "d4").verdict.kind == MOVE
    out = table.place("orange", "c3 c4")
    assert out.verdict.kind == MOVE and out.to_move == "orange"
    out = table.event("pass")
    assert out.verdict.kind == ILLEGAL and out.verdict.reason == "orange can still place a piece"
    # violet, who cannot move, presses pass anyway: acknowledged, nothing changes
    out = table.event("pass", player="violet")
    assert out.verdict.kind == EVENT and out.to_move == "orange"
    assert table.event("pass", player="orange").verdict.kind == ILLEGAL
    out = table.place("orange", "d2")
    assert out.over and out.to_move is None
    # all 7 orange squares placed, the monomino last: 15 + 5; violet keeps I2 and O4: -6
    assert out.scores == {"orange": 20, "violet": -6}
    assert out.winner == "orange"
    assert table.referee.game.squares_left == {"orange": 0, "violet": 6}
    assert table.place("violet", "a4").verdict.reason == "the game is over: no more moves"


@pytest.mark.parametrize(
    ("moves", "scoring", "scores", "winner"),
    [
        # both place everything, the monomino last: +20 each
        (["a1 b1", "c4 d4", "c2", "b3"], "advanced", {"orange": 20, "violet": 20}, DRAW),
        (["a1 b1", "c4 d4", "c2", "b3"], "basic", {"orange": 0, "violet": 0}, DRAW),
        # violet's last piece is the domino: +15 only
        (["a1 b1", "d4", "c2", "c3 b3"], "advanced", {"orange": 20, "violet": 15}, "orange"),
    ],
)
def test_advanced_scoring_bonuses(tmp_path, moves, scoring, scores, winner):
    """Technique avancée: +15 when all pieces are placed, +5 more if the last was the monomino."""
    table = Table("blokus", data=tiny_data(tmp_path, {"I1": MONO, "I2": DOMINO}), scoring=scoring)
    for colour, squares in zip(COLOURS * 2, moves, strict=True):
        out = table.place(colour, squares)
        assert out.verdict.kind == MOVE, out.verdict.reason
    assert out.over and out.scores == scores and out.winner == winner


def test_end_event_ends_the_game_and_fewest_squares_left_wins():
    """FIN DE PARTIE 3/: orange placed 5 squares, violet 3, so orange has fewer left."""
    for scoring, scores in [("advanced", (-61, -63)), ("basic", (61, 63))]:
        table = Table(scoring=scoring)
        table.place("orange", "d9 e9 f9 e8 e7")
        table.place("violet", "i4 j4 i5")
        out = table.event("end")
        assert out.verdict.kind == EVENT and out.over and out.winner == "orange"
        assert out.scores == dict(zip(COLOURS, scores, strict=True))


def test_resign_gives_the_game_to_the_opponent_and_end_keeps_it():
    table = Table()
    table.place("orange", "d9 e9 f9 e8 e7")
    out = table.event("resign", player="orange")
    assert out.verdict.kind == EVENT and out.over and out.winner == "violet"
    assert table.event("end").winner == "violet"
    assert table.event("pass").verdict.reason == "the game is over"


def test_resign_without_a_player_is_the_player_to_move():
    table = Table()
    assert table.event("resign").winner == "violet"
    assert Table().event("resign", player="green").verdict.kind == ILLEGAL


def test_blokus_has_no_exchange_event():
    out = Table().event("exchange")
    assert out.verdict.kind == ILLEGAL and 'no "exchange" event' in out.verdict.reason


def test_undo_takes_back_a_move_and_an_end():
    table = Table()
    table.place("orange", "d9 e9 f9 e8 e7")
    assert table.event("end").over
    out = table.event("undo")
    assert out.verdict.kind == EVENT and not out.over and out.to_move == "violet"
    out = table.event("undo")
    assert out.to_move == "orange" and out.scores["orange"] == -66
    assert table.show({}).verdict.kind == NO_CHANGE
    assert table.show(table.board).verdict.kind == MOVE


# ----------------------------------------------------------------- Blokus Duo
def test_duo_start_points_and_its_own_pieces():
    table = Table("blokus-duo")
    out = table.place("orange", "a14")
    assert out.verdict.reason == "orange's first piece must cover e10 or j5"
    out = table.place("orange", "c10 d10 e10")  # the I3 exists in the Duo set
    assert out.verdict.kind == MOVE and str(out.verdict.move) == "I3@c10,d10,e10"
    out = table.place("violet", "j6 i5 j5 k5 j4")  # X5
    assert out.verdict.kind == MOVE and out.verdict.move.piece == "X5"
    assert out.scores == {"orange": -86, "violet": -84}


# ----------------------------------------------------------------- options and bad input
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"players": 5}, "2 players"),
        ({"players": ["orange", "blue"]}, "2 players"),
        ({"first": "green"}, "first player"),
        ({"scoring": "best"}, "scoring"),
        ({"teams": [["orange", "violet"]]}, "no teams"),
        ({"colour": "orange"}, "unknown option"),
        ({"data": "/nonexistent/blokus.json"}, "cannot read"),
    ],
)
def test_invalid_options_are_format_errors(options, message):
    with pytest.raises(FormatError, match=message):
        Blokus(**options)


def test_none_options_are_ignored_and_players_may_list_the_turn_order():
    game = Blokus(players=None, first=None, scoring=None, teams=None, data=None)
    assert game.players == ("orange", "violet") and game.scoring == "advanced"
    assert Blokus(players=["violet", "orange"]).to_move == "violet"
    assert Blokus(players=2, first="violet").players == ("violet", "orange")


def test_start_event_with_five_players_is_refused():
    out = Table().event("start", players=5)
    assert out.verdict.kind == ILLEGAL and "cannot start" in out.verdict.reason


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("T5", "not a Blokus move"),
        ("Q5@a1", "unknown piece"),
        ("I3@a1,b1,c1", "unknown piece"),  # not in the 12x12 set
        ("I1@m13", "not a square"),
        ("I2@a1,a1", "twice"),
    ],
)
def test_bad_notation_is_a_format_error(text, problem):
    with pytest.raises(FormatError, match=problem):
        Blokus().parse_move(text)


def test_a_move_whose_squares_are_not_its_piece_is_illegal():
    game = Blokus()
    verdict = game.check(game.parse_move("T5@d9,e9,f9,g9,h9"))
    assert verdict is not None and "not the shape of the T5" in verdict.reason
    with pytest.raises(IllegalMoveError, match="no piece"):
        game.play(Placement("Q9", ("d9",)))


@pytest.mark.parametrize(
    "item",
    [
        "d9",
        {"game": "gobblet", "cells": {}},
        {"game": "blokus", "cells": {"d9": "red"}},
        {"game": "blokus", "cells": {"d9": {"color": "orange"}}},
        {"game": "blokus", "cells": {"m13": "orange"}},
        {"game": "blokus"},
        {"event": "shuffle"},
    ],
)
def test_bad_input_is_ambiguous_with_a_reason(item):
    out = Referee("blokus").feed(item)
    assert out.verdict.kind == AMBIGUOUS and out.verdict.reason


def test_bad_data_files_are_format_errors(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(FormatError, match="cannot read"):
        Blokus(data=str(broken))
    twice = tiny_data(tmp_path, {"I1": MONO, "I2": DOMINO, "I2b": [[0, 0], [0, 1]]})
    with pytest.raises(FormatError, match="I2b is I2 again"):
        Blokus(data=twice)


# ----------------------------------------------------------------- notation and records
def test_notation_is_piece_at_squares_in_reading_order():
    game = Blokus()
    move = game.parse_move("T5@e7, e8,d9,f9,e9")
    assert str(move) == "T5@d9,e9,f9,e8,e7"
    assert move.cells() == ("d9", "e9", "f9", "e8", "e7")


@pytest.mark.parametrize("name", EDITIONS)
def test_notation_round_trips_for_every_first_move_and_a_whole_game(name):
    moves = list(Table(name).referee.game.legal_moves())
    moves += [move for _, move in play_random(Table(name), seed=7)]
    game = Table(name).referee.game
    assert all(game.parse_move(str(move)) == move for move in moves)


@pytest.mark.parametrize("name", EDITIONS)
@pytest.mark.parametrize("stop", [6, None])
def test_record_round_trip(name, stop):
    """A game stopped by a resignation, and a game played to its end."""
    table = Table(name, first="violet", scoring="basic")
    list(play_random(table, seed=11, stop=stop))
    if stop is not None:
        assert table.event("resign", player="orange").winner == "violet"
    game = table.referee.game
    record = json.loads(json.dumps(game.to_record()))
    again = type(game).from_record(record)
    assert [str(a) for a in again.history] == [str(a) for a in game.history]
    assert again.view() == game.view() and again.scores == game.scores
    assert again.is_over and again.winner == game.winner
    assert again.players == ("violet", "orange")


def test_a_record_with_an_illegal_move_is_refused():
    record = {"game": "blokus", "options": {}, "actions": ["I1@a1"]}
    with pytest.raises(FormatError, match="first piece must cover"):
        Blokus.from_record(record)
    with pytest.raises(FormatError, match="record is of"):
        BlokusDuo.from_record(record)


# ----------------------------------------------------------------- against the independent model
@pytest.mark.parametrize("name", EDITIONS)
def test_legal_moves_and_turns_match_the_rulebook_model(name):
    """legal_moves() is complete and exact, and the turn goes to the next player who can move
    (DÉROULEMENT 4/); at the end neither can (FIN DE PARTIE 1/)."""
    data = data_of(name)
    for seed in range(2):
        used: dict[str, set[str]] = {c: set() for c in COLOURS}
        table = Table(name)
        game = table.referee.game
        assert {(m.piece, frozenset(m.squares)) for m in game.legal_moves()} == brute_force(
            data, {}, "orange", set()
        )
        checked = 0
        for mover, move in play_random(table, seed):
            used[mover].add(move.piece)
            if len(game.history) % 3 == 0 or game.is_over or game.to_move == mover:
                checked += 1
                model = {c: brute_force(data, table.board, c, used[c]) for c in COLOURS}
                expected = {(m.piece, frozenset(m.squares)) for m in game.legal_moves()}
                if game.is_over:
                    assert model == {"orange": set(), "violet": set()}
                else:
                    assert expected == model[game.to_move]
                    other = "violet" if game.to_move == "orange" else "orange"
                    assert (game.to_move == mover) == (not model[other])
        assert game.is_over and checked > 3


# ----------------------------------------------------------------- properties
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@given(seed=SEEDS, name=st.sampled_from(EDITIONS))
@settings(derandomize=True, max_examples=40, deadline=None)
def test_random_games_seen_by_the_camera_are_read_as_the_moves_played(seed, name):
    table = Table(name)
    moves = [move for _, move in play_random(table, seed)]  # checks every verdict
    assert moves and table.referee.game.is_over
    assert [str(m) for m in table.referee.game.history] == [str(m) for m in moves]


@given(seed=SEEDS, name=st.sampled_from(EDITIONS), depth=st.integers(0, 14))
@settings(derandomize=True, max_examples=15, deadline=None)
def test_every_single_square_corruption_is_flagged_unless_it_is_another_legal_move(
    seed, name, depth
):
    used: dict[str, set[str]] = {c: set() for c in COLOURS}
    table = Table(name)
    for mover, move in play_random(table, seed, stop=depth):
        used[mover].add(move.piece)
    game = table.referee.game
    if game.is_over:
        return
    colour, before = game.to_move, dict(table.board)
    move = game.random_move(random.Random(seed))
    after = {**before, **dict.fromkeys(move.squares, colour)}
    legal = {sq for _, sq in brute_force(data_of(name), before, colour, used[colour])}
    state = (game.view(), game.to_move, game.history)
    for sq in all_squares(table.size):
        for content in {None, *COLOURS} - {after.get(sq)}:
            corrupted = {k: v for k, v in after.items() if k != sq}
            if content is not None:
                corrupted[sq] = content
            out = table.show(corrupted)
            new = {k: v for k, v in corrupted.items() if k not in before}
            unchanged = all(corrupted.get(k) == v for k, v in before.items())
            if unchanged and set(new.values()) == {colour} and frozenset(new) in legal:
                assert out.verdict.kind == MOVE and set(out.verdict.move.cells()) == set(new)
                table.event("undo")
            else:
                assert out.verdict.kind != MOVE, (sq, content, out.verdict.move)
                if corrupted == before:  # the corruption took the whole move back
                    assert out.verdict.kind == NO_CHANGE
                else:
                    assert out.verdict.kind in (ILLEGAL, AMBIGUOUS) and out.verdict.reason
            assert (game.view(), game.to_move, game.history) == state


@given(seed=SEEDS, name=st.sampled_from(EDITIONS), scoring=st.sampled_from(["advanced", "basic"]))
@settings(derandomize=True, max_examples=40, deadline=None)
def test_scores_equal_a_recount_of_the_final_board(seed, name, scoring):
    data = data_of(name)
    total, count = sum(len(p["squares"]) for p in data["pieces"]), len(data["pieces"])
    played: dict[str, list[str]] = {c: [] for c in COLOURS}
    table = Table(name, scoring=scoring)
    for mover, move in play_random(table, seed):
        played[mover].append(move.piece)
    out = table.show(table.board)
    assert out.over
    expected = {}
    for colour in COLOURS:
        left = total - sum(1 for c in table.board.values() if c == colour)
        if scoring == "basic":
            expected[colour] = left
        else:
            done = len(played[colour]) == count
            last = done and played[colour][-1] == MONOMINO
            expected[colour] = -left + ALL_PLACED * done + MONOMINO_LAST * last
    assert out.scores == expected
    best = (min if scoring == "basic" else max)(expected.values())
    leaders = [c for c in COLOURS if expected[c] == best]
    assert out.winner == (leaders[0] if len(leaders) == 1 else DRAW)


def test_a_players_list_names_no_first_player():
    """The spec's start event lists the players; only ``first`` says who begins."""
    table = Table(players=["orange", "violet"])
    assert table.place("violet", "d9").verdict.kind == MOVE
    assert table.referee.game.players == ("violet", "orange")
    assert Table(players=["orange", "violet"], first="orange").place(
        "violet", "d9"
    ).verdict.reason == ("it is orange's turn")
