"""Fit a model's ``adapt`` (:mod:`vision.adapt`) on rendered games of the training domain.

Each sample game is one table: a random legal game (:func:`vision.synth.random_game`) filmed
move by move with one camera, light and box, the board laid a little off its outline, every
board with sensor noise of its own. The model's reader reads each board after the previous one
was accepted with its truth, as the running referee does
(:meth:`~vision.readers.fitted.FittedReader.calibrate`); for every target it sends to the model
the logits, the embedding and the truth are kept, and so are the embeddings of the targets whose
class each accepted board changed. The bank is then replayed on those records for every
(``weight``, ``reach``, ``lend``) of a grid, taught as ``calibrate`` teaches it: by the changed
targets, and, for ``misreads`` (the grid's second half), also by the targets sent to the model
that it read wrongly with the bank's help. For ``lend`` above 0 the classes a table has not shown
are looked for about their prototypes, each class's mean embedding over the targets the *other*
sample games taught (so that no game is read with what it taught itself; the model file keeps
the means over all of them). The adaptation whose log-odds give the targets sent to the model
the least log-loss (the mean negative log-probability of their true class) is kept (ties: the
smaller bound, then the smaller ``lend``, then no ``misreads``; ``weight`` 0, no adaptation, is
on the grid): a proper scoring rule, so that a raise which makes a confident misread costs
more than one it corrects gains, as the decoder, which weighs the log-probabilities, would pay
for it. With that bank, the
table's temperature (:class:`~vision.adapt.TableTemperature`) is replayed for every ``temper``
of :data:`TEMPERS`, observing the changed targets of every board after the first as the reader
does, and kept by the same log-loss (ties: no temperature, then the larger ``temper``).

A recipe's ``"adapt_temper": "one_se"`` then frees the temperature by the one-standard-error rule
(:mod:`vision.train.one_se`): to the smallest ``temper`` (the weakest prior; no temperature
counts as the strongest) whose log-loss over the sample games exceeds the least by no more than
one standard error of the per-game difference. The sample games are of the training domain,
where a network is about as sure as it is right and a temperature buys little; at a table that
looks otherwise, the temperature is what makes a network that misreads its pieces less sure, and
a table temperature only ever softens. Among the choices the games cannot tell apart, the one
that softens most readily.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..adapt import Adaptation, TableBank, TableTemperature, tempered_log_probs
from ..bench_table import filmed_game
from ..geometry import load_geometry
from ..model import CellModel
from .dataset import reader_class, training_domain
from .one_se import check_rule, within_one_se
from .pool import parallel_map

#: The grid the bounds are chosen from.
WEIGHTS = (0.0, 0.5, 1.0, 2.0, 3.0, 5.0)
REACHES = (1.0, 2.0, 4.0, 8.0)
#: The weights, relative to the weight, of a class the table has not shown (``lend``).
LENDS = (0.0, 0.5, 1.0)
#: The weights of the prior that holds a table's temperature at 1 it is chosen from (and none).
TEMPERS = (0.0, 1.0, 3.0, 10.0, 30.0, 100.0)
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


@dataclass(frozen=True)
class Replayed:
    """What an adaptation does to the targets sent to the model in the sample games."""

    right: int
    total: int
    #: summed negative log-probability of the targets' true classes (nats)
    loss: float
    #: the same, sample game by sample game
    table_losses: tuple[float, ...] = ()

    @property
    def mean_loss(self) -> float:
        """The log-loss per target (nats)."""
        return self.loss / max(self.total, 1)


def replay(
    tables: list[Table],
    classes: int,
    adaptation: Adaptation,
    foreign: int | None = None,
    prototypes: list[Prototypes] | None = None,
) -> Replayed:
    """The targets sent to the model read with ``adaptation`` (its temperature needs the
    ``foreign`` class's column; ``prototypes``, one per table, in place of its own): how many
    right, of how many, and their log-loss."""
    right = total = 0
    losses = []
    tempered = adaptation.temper is not None
    if tempered and foreign is None:
        raise ValueError("a table's temperature needs the foreign class's column")
    for i, table in enumerate(tables):
        loss = 0.0
        own = adaptation if prototypes is None else replace(adaptation, prototypes=prototypes[i])
        bank = TableBank(classes, own)
        # without a temperature (read at 1), the foreign column is never used
        temperature = TableTemperature(foreign or 0, adaptation.temper)
        for k, step in enumerate(table.steps):
            logits = step.logits
            if bank.active and len(logits):
                logits = logits + bank.offsets(step.embedding)
            total += len(step.truth)
            if not len(logits):
                continue
            log_p = tempered_log_probs(logits, temperature.foreign, temperature.value)
            read_right = np.argmax(log_p, axis=1) == step.truth
            right += int(np.sum(read_right))
            loss -= float(np.sum(log_p[np.arange(len(log_p)), step.truth]))
            if k and tempered:
                temperature.observe(logits[step.changed], step.truth[step.changed])
            if adaptation.bound > 0:
                bank.add(step.taught, step.taught_classes)
                if adaptation.misreads:
                    misread = ~read_right & ~step.changed
                    bank.add(step.embedding[misread], step.truth[misread])
        losses.append(loss)
    return Replayed(right, total, sum(losses), tuple(losses))


#: Per class, a mean embedding (empty: none).
Prototypes = tuple[tuple[float, ...], ...]


def _taught_sums(table: Table, classes: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Per class, the sum of the embeddings a sample game's accepted boards taught, and how many
    (``classes`` x ``dim``, ``classes``)."""
    sums, counts = np.zeros((classes, dim)), np.zeros(classes)
    for step in table.steps:
        np.add.at(sums, step.taught_classes, np.asarray(step.taught, np.float64))
        np.add.at(counts, step.taught_classes, 1)
    return sums, counts


def _means(sums: np.ndarray, counts: np.ndarray) -> Prototypes:
    """Per class, ``sums / counts`` to 6 decimals, as the model file keeps them (empty where
    nothing was taught)."""
    return tuple(
        tuple(round(float(v), 6) for v in s / n) if n else ()
        for s, n in zip(sums, counts, strict=True)
    )


def prototypes(tables: list[Table], classes: int) -> tuple[Prototypes, list[Prototypes]]:
    """Each class's mean embedding over the targets the ``tables``' accepted boards taught, and,
    per table, the same over the other tables."""
    dim = next((s.taught.shape[1] for t in tables for s in t.steps if len(s.taught)), None)
    if dim is None:
        return (), [() for _ in tables]
    sums = [_taught_sums(t, classes, dim) for t in tables]
    total = sum(s for s, _ in sums), sum(n for _, n in sums)
    return _means(*total), [_means(total[0] - s, total[1] - n) for s, n in sums]


def _job(args: tuple[Path, dict[str, Any], int, int]) -> Table:
    cv2.setNumThreads(1)
    path, recipe, index, seed = args
    return play_table(CellModel.load(path), recipe, index, seed)


def fit_adaptation(
    model_path: Path, recipe: dict[str, Any], games: int, seed: int, workers: int | None = None
) -> tuple[Adaptation, dict[str, Any]]:
    """The adaptation of the model at ``model_path`` fitted on ``games`` sample games (its
    temperature by the recipe's ``adapt_temper``, :data:`.one_se.RULES`), and the figures of
    the fit."""
    temper_rule = recipe.get("adapt_temper", "least")
    check_rule("adapt_temper", temper_rule)  # before the games are filmed
    jobs = [(model_path, recipe, i, seed) for i in range(games)]
    tables = parallel_map(_job, jobs, workers)
    model = CellModel.load(model_path)
    choice = choose_adaptation(tables, len(model.classes), model.foreign, temper_rule)
    total = max(choice.chosen.total, 1)
    figures = {
        "adapt_games": games,
        "adapt_boards": sum(len(t.steps) for t in tables),
        "adapt_changed_targets": choice.chosen.total,
        "adapt_right_without": round(choice.without.right / total, 6),
        "adapt_right_with": round(choice.chosen.right / total, 6),
        "adapt_loss_without": round(choice.without.mean_loss, 6),
        "adapt_loss_with": round(choice.chosen.mean_loss, 6),
        "adapt_loss_untempered": round(choice.untempered.mean_loss, 6),
        "adapt_loss_other_misreads": round(choice.other.mean_loss, 6),
    }
    if temper_rule != "least":
        figures["adapt_temper_rule"] = temper_rule
        figures["adapt_temper_least"] = choice.least_temper
    return choice.adaptation, figures


@dataclass(frozen=True)
class Choice:
    """The fit's choice and what it is measured against."""

    adaptation: Adaptation
    chosen: Replayed
    #: no adaptation
    without: Replayed
    #: the best adaptation taught the other way (``misreads`` or not; no adaptation included)
    other: Replayed
    #: the chosen bank without a temperature
    untempered: Replayed
    #: the temperature's prior of least log-loss (before ``temper_rule``; None: none)
    least_temper: float | None = None


def choose_adaptation(
    tables: list[Table], classes: int, foreign: int | None = None, temper_rule: str = "least"
) -> Choice:
    """The grid's adaptation that gives the targets sent to the model in ``tables`` the least
    log-loss (ties: the smaller bound, then not taught ``misreads``), then, given the
    ``foreign`` class's column, the :data:`TEMPERS` of least log-loss with it (ties: none, then
    the larger), freed by ``temper_rule`` (:data:`~vision.train.one_se.RULES`)."""
    check_rule("adapt_temper", temper_rule)
    every, others = prototypes(tables, classes)
    scored = []
    for misreads in (False, True):
        for weight in WEIGHTS:
            for reach in REACHES if weight else (0.0,):
                for lend in LENDS if weight else (0.0,):
                    taught = misreads and weight > 0
                    a = Adaptation(weight, reach, CAPACITY, MIN_EXAMPLES, taught, lend=lend)
                    scored.append((replay(tables, classes, a, prototypes=others), a))

    def cost(s: tuple[Replayed, Adaptation]) -> tuple[float, float, float, bool]:
        return (s[0].loss, s[1].bound, s[1].lend, s[1].misreads)

    chosen, best = min(scored, key=cost)
    without = next(r for r, a in scored if a.weight == 0)
    other = min(
        (s for s in scored if s[1].misreads != best.misreads or s[1].weight == 0), key=cost
    )[0]
    untempered = chosen
    least_temper = None
    if foreign is not None:
        # (replayed, adaptation, rank): on equal loss, no temperature, then the larger prior
        options = [(chosen, best, -math.inf)]
        for t in TEMPERS:
            tempered = replace(best, temper=t)
            options.append((replay(tables, classes, tempered, foreign, others), tempered, -t))
        least = min(options, key=lambda s: (s[0].loss, s[2]))
        chosen, best, _ = least
        least_temper = best.temper
        if temper_rule == "one_se":  # the weakest prior the games cannot tell from the least
            chosen, best, _ = max(
                (o for o in options if within_one_se(o[0].table_losses, least[0].table_losses)),
                key=lambda s: s[2],
            )
    if best.lend > 0:  # the table's bank looks for an unshown class about every game's mean
        best = replace(best, prototypes=every)
    return Choice(best, chosen, without, other, untempered, least_temper)
