"""Fit a model's ``adapt`` (:mod:`vision.adapt`) on rendered games of the training domain.

Each sample game is one table: a random legal game (:func:`vision.synth.random_game`) filmed
move by move with one camera, light and box, the board laid a little off its outline. The
model's reader reads each board after the previous one was accepted with its truth, as the
running referee does (:meth:`~vision.readers.fitted.FittedReader.calibrate`); for every target it
sends to the model the logits, the embedding and the truth are kept, and so are the embeddings
of the targets each accepted board taught. The bank is then replayed on those records for every
(``weight``, ``reach``) of a grid, and the pair that reads most changed targets right is kept
(ties: the smaller bound; ``weight`` 0, no adaptation, is on the grid).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..adapt import Adaptation, TableBank
from ..bench_table import filmed_game
from ..geometry import load_geometry
from ..model import CellModel
from .dataset import reader_class, training_domain
from .pool import parallel_map

#: The grid the pair is chosen from.
WEIGHTS = (0.0, 0.5, 1.0, 2.0, 3.0, 5.0)
REACHES = (1.0, 2.0, 4.0, 8.0)
#: Bounds that are not fitted: examples kept per class, and needed before a class counts.
CAPACITY = 32
MIN_EXAMPLES = 2
#: Boards read per sample game at most (a long Blokus game is cut; its start is what matters).
MOVES = 30


@dataclass
class Step:
    """One board of a sample game: what the model said of the targets it was sent, and what
    accepting the board taught."""

    logits: np.ndarray
    embedding: np.ndarray
    truth: np.ndarray
    taught: np.ndarray
    taught_classes: np.ndarray


@dataclass
class Table:
    """One sample game's steps."""

    game: str
    steps: list[Step] = field(default_factory=list)


def play_table(model: CellModel, recipe: dict[str, Any], index: int, seed: int) -> Table:
    """Film and read sample game ``index`` (the model's adaptation off while reading)."""
    games = recipe["games"]
    game = games[index % len(games)]
    reader = reader_class(recipe["reader"])(
        load_geometry(game), model=replace(model, adaptation=Adaptation())
    )
    render_seed = seed * 1_000_003 + 30_000_000 + index
    key = zlib.crc32(f"{seed}/{index}".encode())
    table = Table(game)
    domain = training_domain(recipe)
    for shot in filmed_game(game, key, domain, MOVES, render_key=render_seed):
        if shot.pose is None:
            break
        patches = reader.sampler.sample(shot.image, shot.pose)
        truth = reader.target_classes(shot.truth)
        todo = reader._changed(patches)
        context = model.frame_context(patches)
        logits, embedding = model.forward(patches[todo], reader.net, context)
        before = reader.memory.classes if reader.memory is not None else None
        new = np.arange(len(truth)) if before is None else np.flatnonzero(truth != before)
        taught = model.forward(patches[new], reader.net, context)[1]
        table.steps.append(Step(logits, embedding, truth[todo], taught, truth[new]))
        reader.calibrate(shot.image, shot.pose, shot.truth)
    return table


def replay(tables: list[Table], classes: int, adaptation: Adaptation) -> tuple[int, int]:
    """Changed targets read right with ``adaptation``, and how many there were."""
    right = total = 0
    for table in tables:
        bank = TableBank(classes, adaptation)
        for step in table.steps:
            logits = step.logits
            if bank.active and len(logits):
                logits = logits + bank.offsets(step.embedding)
            right += int(np.sum(np.argmax(logits, axis=1) == step.truth)) if len(logits) else 0
            total += len(step.truth)
            if adaptation.bound > 0 and len(step.taught_classes):
                bank.add(step.taught, step.taught_classes)
    return right, total


def _job(args: tuple[Path, dict[str, Any], int, int]) -> Table:
    cv2.setNumThreads(1)
    path, recipe, index, seed = args
    return play_table(CellModel.load(path), recipe, index, seed)


def fit_adaptation(
    model_path: Path, recipe: dict[str, Any], games: int, seed: int, workers: int | None = None
) -> tuple[Adaptation, dict[str, Any]]:
    """The adaptation of the model at ``model_path`` fitted on ``games`` sample games, and the
    figures of the fit."""
    jobs = [(model_path, recipe, i, seed) for i in range(games)]
    tables = parallel_map(_job, jobs, workers)
    best, right, without, total = choose_adaptation(tables, len(CellModel.load(model_path).classes))
    figures = {
        "adapt_games": games,
        "adapt_boards": sum(len(t.steps) for t in tables),
        "adapt_changed_targets": total,
        "adapt_right_without": round(without / max(total, 1), 6),
        "adapt_right_with": round(right / max(total, 1), 6),
    }
    return best, figures


def choose_adaptation(tables: list[Table], classes: int) -> tuple[Adaptation, int, int, int]:
    """The grid's adaptation that reads most changed targets of ``tables`` right (ties: the
    smaller bound), with how many it reads right, how many are read right without adapting,
    and how many there are."""
    scored = []
    for weight in WEIGHTS:
        for reach in REACHES if weight else (0.0,):
            a = Adaptation(weight, reach, CAPACITY, MIN_EXAMPLES)
            right, total = replay(tables, classes, a)
            scored.append((right, -a.bound, a, total))
    right, _, best, total = max(scored, key=lambda s: (s[0], s[1]))
    without = next(s[0] for s in scored if s[2].weight == 0)
    return best, right, without, total
