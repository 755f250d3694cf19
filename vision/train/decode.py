"""Fit a model's ``decode.close_margin`` (:mod:`vision.decode`) on whole games of the training
domain.

Each sample game is filmed and read as at a table (:func:`vision.bench_table.filmed_game`, the
model's reader calibrated on every accepted board, its adaptation on). For every move the
decoder runs once with no margin, which gives its verdict and how far the second-best
explanation is behind (``Decoded.margin``); a margin ``m`` then asks the players to confirm
every move whose gap is below ``m`` and leaves the others' verdicts as they were. The margin of
least cost is kept: :data:`~vision.decode.WRONG_COST` per move accepted wrongly, 1 per move
refused (asked, called illegal or no change) or missed; ties go to the smaller margin.
"""

from __future__ import annotations

import math
import zlib
from pathlib import Path
from typing import Any

import cv2

from engine import MOVE

from ..bench_table import filmed_game
from ..decode import WRONG_COST, decode
from ..geometry import load_geometry
from ..model import CellModel
from .dataset import reader_class, training_domain
from .pool import parallel_map

#: The margins (nats) the fit chooses from: ln 1 (never ask) .. ln 64.
MARGINS = tuple(round(math.log(x), 4) for x in (1, 2, 3, 4, 6, 8, 12, 16, 32, 64))
#: Verdicts of a move when nobody is asked.
RIGHT, WRONG, REFUSED = "right", "wrong", "refused"


def judged_moves(
    model: CellModel, recipe: dict[str, Any], index: int, seed: int
) -> list[tuple[str, float]]:
    """Per move of sample game ``index``: its verdict when nobody is asked, and the gap (nats)
    between the decoder's best and second-best explanations."""
    games = recipe["games"]
    game = games[index % len(games)]
    key = zlib.crc32(f"decode/{seed}/{index}".encode())
    reader = reader_class(recipe["reader"])(load_geometry(game), model=model)
    out: list[tuple[str, float]] = []
    for shot in filmed_game(game, key, training_domain(recipe)):
        if shot.pose is None:
            if shot.played is not None:
                out.append((REFUSED, math.inf))
            continue
        obs = reader.read(shot.image, shot.pose)
        if shot.played is not None:
            decoded = decode(shot.referee, obs, close_within=0.0)
            verdict = shot.referee.infer(decoded.observation)
            if verdict.kind != MOVE:
                outcome = REFUSED
            else:
                outcome = RIGHT if verdict.move == shot.played else WRONG
            out.append((outcome, decoded.margin))
        reader.calibrate(shot.image, shot.pose, shot.truth)
    return out


def choose_margin(moves: list[tuple[str, float]]) -> tuple[float, dict[str, int]]:
    """The margin of :data:`MARGINS` of least cost on ``moves`` and its counts (right, wrong,
    refused)."""
    best: tuple[float, float, dict[str, int]] | None = None
    for margin in MARGINS:
        counts = {RIGHT: 0, WRONG: 0, REFUSED: 0}
        for outcome, gap in moves:
            counts[REFUSED if gap < margin else outcome] += 1
        cost = WRONG_COST * counts[WRONG] + counts[REFUSED]
        if best is None or cost < best[0]:
            best = (cost, margin, counts)
    assert best is not None
    return best[1], best[2]


def _job(args: tuple[Path, dict[str, Any], int, int]) -> list[tuple[str, float]]:
    cv2.setNumThreads(1)
    path, recipe, index, seed = args
    return judged_moves(CellModel.load(path), recipe, index, seed)


def fit_close_margin(
    model_path: Path, recipe: dict[str, Any], games: int, seed: int, workers: int | None = None
) -> tuple[float, dict[str, Any]]:
    """The close margin of the model at ``model_path`` fitted on ``games`` sample games, and
    the figures of the fit (moves right, wrong and refused with it, and with the default)."""
    jobs = [(model_path, recipe, i, seed) for i in range(games)]
    results = parallel_map(_job, jobs, workers)
    moves = [m for r in results for m in r]
    margin, counts = choose_margin(moves)
    figures = {
        "decode_games": games,
        "decode_moves": len(moves),
        **{f"decode_{k}": v for k, v in counts.items()},
    }
    return margin, figures
