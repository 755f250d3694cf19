"""Blokus Duo records in Pentobi's SGF dialect: written, read back, and Pentobi's own files read."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from engine import FormatError
from engine.grid import parse_square
from firmware.sgf import from_sgf, parse, to_sgf
from tests.firmware.games import random_game

BOOK = Path(__file__).parent / "data" / "pentobi-duo-book.blksgf"


def _turned(square: str) -> str:
    col, row = parse_square(square)
    return f"{'abcdefghijklmn'[13 - col]}{14 - row}"


@pytest.mark.parametrize("seed,first", [(0, "orange"), (1, "violet"), (2, "orange"), (5, "violet")])
def test_a_finished_game_reads_back_square_for_square(seed, first):
    game = random_game("blokus-duo", seed, first=first)
    text = to_sgf(game)
    back = from_sgf(text)
    assert back.players == game.players
    assert back.scores == game.scores and back.winner == game.winner
    turned = "GC[" in text
    view = game.view()
    expected = {(_turned(s) if turned else s): c for s, c in view.items()}
    assert back.view() == expected
    pieces = [str(m).split("@")[0] for m in game.history]
    assert [str(m).split("@")[0] for m in back.history] == pieces


def test_the_first_colour_starts_on_e10_as_pentobi_wants():
    for seed in range(6):
        sgf = parse(to_sgf(random_game("blokus-duo", seed, actions=2)))
        colour, squares = sgf.moves[0]
        assert colour == "B" and "e10" in squares
        assert sgf.root["GM"] == ["Blokus Duo"]


def test_moves_are_written_in_pentobis_square_order():
    for _, squares in parse(to_sgf(random_game("blokus-duo", 3))).moves:
        keys = [(parse_square(s)[1], parse_square(s)[0]) for s in squares]
        assert keys == sorted(keys)


def test_pentobis_own_opening_book_reads_along_its_main_line():
    game = from_sgf(BOOK.read_text(encoding="utf-8"))
    assert [str(m) for m in game.history] == [
        "X5@f11,e10,f10,g10,f9",
        "X5@i6,h5,i5,j5,i4",
        "F5@h9,i9,g8,h8,h7",
        "F5@e7,e6,f6,g6,f5",
    ]


@pytest.mark.parametrize(
    "text,reason",
    [
        ("(;GM[Blokus]PB[x];B[a1])", "not a Blokus Duo SGF"),
        ("(;GM[Blokus Duo];B[e10,e11,e13])", "no Blokus Duo piece"),
        ("(;GM[Blokus Duo];B[z99])", "not a Blokus Duo square"),
        ("(;GM[Blokus Duo];W[j5])", "orange was to move"),
        ("(;GM[Blokus Duo];B[a1])", "first piece must cover"),
        ("(;GM[Blokus Duo];B[e10", "not closed"),
        ("GM[Blokus Duo]", "before the first node"),
    ],
)
def test_bad_sgf_is_refused_with_the_reason(text, reason):
    with pytest.raises(FormatError, match=reason):
        from_sgf(text)


def test_other_games_have_no_sgf():
    with pytest.raises(FormatError, match="txt or jsonl"):
        to_sgf(random_game("blokus", 1, actions=2))


PENTOBI = shutil.which("pentobi-thumbnailer") or "/usr/games/pentobi-thumbnailer"
#: Pentobi's Blokus Duo colours: the first (B) purple, the second (W) orange; grey empty.
PENTOBI_COLOURS = {"B": (161, 44, 207), "W": (240, 150, 0), None: (174, 167, 172)}


def _nearest(pixel) -> str | None:
    def distance(rgb):
        return sum((a - b) ** 2 for a, b in zip(pixel, rgb, strict=True))

    return min(PENTOBI_COLOURS, key=lambda k: distance(PENTOBI_COLOURS[k]))


@pytest.mark.parametrize("seed,first", [(0, "orange"), (1, "violet")])
def test_pentobi_itself_draws_the_exported_position(tmp_path, seed, first):
    """Pentobi's own thumbnailer (Debian's ``pentobi``) opens the file and draws the final
    position; every square's colour is the engine's."""
    if not os.path.exists(PENTOBI):
        if os.environ.get("REFEREE_REQUIRE_PENTOBI") == "1":
            pytest.fail("REFEREE_REQUIRE_PENTOBI=1 but pentobi is not installed")
        pytest.skip("pentobi is not installed (apt-get install pentobi)")
    game = random_game("blokus-duo", seed, first=first)
    text = to_sgf(game)
    path, picture = tmp_path / "game.blksgf", tmp_path / "game.png"
    path.write_text(text, encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    run = subprocess.run(
        [PENTOBI, "-s", "280", str(path), str(picture)], env=env, capture_output=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    turned = "GC[" in text
    colour = {game.players[0]: "B", game.players[1]: "W", None: None}
    with Image.open(picture) as image:
        rgb = image.convert("RGB")
        for square, owner in game.view().items():
            col, row = parse_square(_turned(square) if turned else square)
            pixel = rgb.getpixel((10 + 20 * col, 10 + 20 * (13 - row)))
            assert _nearest(pixel) == colour[owner], square
