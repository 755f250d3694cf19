"""Fit a model's ``adapt`` (:mod:`vision.adapt`) on rendered games of the training domain.

Each sample game is one table: a random legal game (:func:`vision.synth.random_game`) filmed
move by move with one camera, light and box, the board laid a little off its outline, every
board with sensor noise of its own. The model's reader reads each board after the previous one
was accepted with its truth, as the running referee does
(:meth:`~vision.readers.fitted.FittedReader.calibrate`); for every target it sends to the model
the logits, the embedding and the truth are kept, and so are the embeddings of the targets whose
class each accepted board changed. The bank is then replayed on those records for every
(``weight``, ``reach``) of a grid, taught as ``calibrate`` teaches it: by the changed targets,
and, for ``misreads`` (the grid's second half), also by the targets sent to the model that it
read wrongly with the bank's help. The adaptation that reads most targets sent to the model
right is kept (ties: the smaller bound, then no ``misreads``; ``weight`` 0, no adaptation, is on
the grid).
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
    #: of the targets sent to the model, those whose class changed (taught whatever is read)
    changed: np.ndarray
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
    for shot in filmed_game(game, key, domain, MOVES, render_key=render_seed, fresh_noise=True):
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
        changed = np.isin(todo, new)
        table.steps.append(Step(logits, embedding, truth[todo], changed, taught, truth[new]))
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
            read_right = np.argmax(logits, axis=1) == step.truth
            right += int(np.sum(read_right))
            total += len(step.truth)
            if adaptation.bound > 0:
                bank.add(step.taught, step.taught_classes)
                if adaptation.misreads:
                    misread = ~read_right & ~step.changed
                    bank.add(step.embedding[misread], step.truth[misread])
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
    classes = len(CellModel.load(model_path).classes)
    best, right, without, total, other = choose_adaptation(tables, classes)
    figures = {
        "adapt_games": games,
        "adapt_boards": sum(len(t.steps) for t in tables),
        "adapt_changed_targets": total,
        "adapt_right_without": round(without / max(total, 1), 6),
        "adapt_right_with": round(right / max(total, 1), 6),
        "adapt_right_other_misreads": round(other / max(total, 1), 6),
    }
    return best, figures


def choose_adaptation(tables: list[Table], classes: int) -> tuple[Adaptation, int, int, int, int]:
    """The grid's adaptation that reads most targets sent to the model in ``tables`` right
    (ties: the smaller bound, then not taught ``misreads``), with how many it reads right, how
    many are read right without adapting, how many there are, and how many the best
    adaptation of the other ``misreads`` reads right."""
    scored = []
    for misreads in (False, True):
        for weight in WEIGHTS:
            for reach in REACHES if weight else (0.0,):
                a = Adaptation(weight, reach, CAPACITY, MIN_EXAMPLES, misreads and weight > 0)
                right, total = replay(tables, classes, a)
                scored.append((right, -a.bound, not a.misreads, a, total))
    right, _, _, best, total = max(scored, key=lambda s: s[:3])
    without = next(s[0] for s in scored if s[3].weight == 0)
    other = max(s[0] for s in scored if s[3].misreads != best.misreads or s[3].weight == 0)
    return best, right, without, total, other
