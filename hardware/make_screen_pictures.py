"""Draw every OLED screen with realistic content into ``hardware/images/`` (for ``setup.md``).

Run ``python hardware/make_screen_pictures.py`` from the repository root after changing
``firmware/screens.py`` and commit the PNGs. The content comes from the real engine (seeded
games), the locator's hints and the camera's status line; each 128x64 screen is scaled up 4x
with nearest-neighbour so that its pixels stay crisp.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from engine.attempts import illegal_attempt
from engine.core import Event, Game
from engine.games import new_game
from firmware import screens
from firmware.actions import Menu
from firmware.camera import LOST, CameraStatus
from vision.locate import HINTS, NO_MARKERS

SCALE = 4
OUT = Path(__file__).resolve().parent / "images"


@dataclass(frozen=True)
class Played:
    """A game after some random plies, with its last move: who played it, and its points."""

    game: Game
    mover: str | None = None
    move: str = ""
    change: dict[str, int] = field(default_factory=dict)


def played(name: str, plies: int, seed: int, **options: object) -> Played:
    """A ``name`` game after ``plies`` seeded random plies (fewer if it ends first)."""
    game = new_game(name, **options)
    rng = random.Random(seed)
    result = Played(game)
    for _ in range(plies):
        if game.is_over:
            break
        mover, choice = game.to_move, game.random_move(rng)
        if isinstance(choice, Event):
            game.handle(choice)
        else:
            result = Played(game, mover, str(choice), game.play(choice))
    return result


def close_call(game: Game) -> tuple[str, str]:
    """Two legal moves that end on the same cell: what the referee asks the players to pick."""
    by_cell: dict[tuple[str, ...], list[str]] = {}
    for move in game.legal_moves():
        by_cell.setdefault(move.cells()[-1:], []).append(str(move))
    first, second = next(moves for moves in by_cell.values() if len(moves) > 1)[:2]
    return first, second


def misplaced(game: Game, seed: int) -> screens.Screen:
    """A piece put down off a legal place, with the legal move most like it offered (as the
    referee offers the likeliest legal move, should vision have misread the board)."""
    found = illegal_attempt(game, random.Random(seed))
    assert found is not None
    view, reason = found
    before = game.view()
    cells = [n for n in view if view[n] != before[n]]
    nearest = max(game.legal_moves(), key=lambda m: len(set(m.cells()) & set(cells)))
    return screens.illegal(reason, cells, offer=f"OK if it was {nearest}")


def doubted(game: Game, seed: int) -> screens.Screen:
    """An illegal placement vision doubts (a Gobblet piece from the reserve put over one it may
    not cover), against no move: what the referee asks the players."""
    found = illegal_attempt(game, random.Random(seed))
    assert found is not None
    view, _ = found
    before = game.view()
    return screens.doubt("no move", [n for n in view if view[n] != before[n]])


def pictures() -> dict[str, screens.Screen]:
    """Every screen, by file name (without ``.png``)."""
    blokus = played("blokus", 6, seed=3)
    first_piece = new_game("blokus")  # a first piece off both start points
    verdict = first_piece.check(first_piece.parse_move("I5@a1,b1,c1,d1,e1"))
    assert verdict is not None
    spectrangle = played("spectrangle", 12, seed=5, players=4).game
    final = played("spectrangle", 200, seed=1, players=2).game
    menu = Menu.main()
    lost = CameraStatus(LOST, "camera 0 not available, reconnecting (attempt 3)", 2).line
    board = blokus.game
    return {
        "scoreboard": screens.scoreboard(board.scores, board.to_move),
        "scoreboard-4-players": screens.scoreboard(spectrangle.scores, spectrangle.to_move),
        "last-move": screens.last_move(blokus.mover, blokus.move, blokus.change),
        "illegal": screens.illegal(verdict.reason, verdict.cells),
        "illegal-offer": misplaced(board, seed=1),
        "confirm": screens.confirm(*close_call(played("gobblet", 5, seed=2).game), more=True),
        "confirm-illegal": doubted(played("gobblet", 6, seed=3).game, seed=1),
        "hand-over-board": screens.hand_over_board(),
        "hand-over-board-still": screens.hand_over_board(still=True),
        "check-board": screens.check_board(verdict.reason, verdict.cells),
        "looking-again": screens.looking_again(),
        "no-move-seen": screens.no_move_seen(),
        "board-not-found": screens.board_not_found(HINTS[NO_MARKERS]),
        "menu": screens.menu(menu.title, menu.choices, 0),
        "game-over": screens.game_over(final.winner, final.scores),
        "camera-lost": screens.scoreboard(board.scores, board.to_move, status=lost),
        "phone-page": screens.phone_page("http://192.168.1.20:8080/"),
        "shutdown": screens.shutdown(),
    }


def save(out: Path, scale: int = SCALE) -> list[Path]:
    """Write every screen to ``out/NAME.png``, scaled ``scale`` times; return the paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, screen in pictures().items():
        size = (screen.image.width * scale, screen.image.height * scale)
        path = out / f"{name}.png"
        screen.image.resize(size, Image.Resampling.NEAREST).save(path, optimize=True)
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python hardware/make_screen_pictures.py [--out DIR]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder (default {OUT})")
    args = parser.parse_args(argv)
    for path in save(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
