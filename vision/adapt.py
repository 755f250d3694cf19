"""Calibrate to this table: what the pieces look like here, learnt from the accepted positions.

Every accepted position is labelled by the engine: each cell holds what the referee accepted.
The reader keeps the model's *embedding* (the network's last hidden layer,
:meth:`~vision.model.CellModel.forward`) of the targets whose accepted class changed (and,
where the model file's ``misreads`` says so, of those it sent to the model again that came back
misread: what a table gets wrong), in a :class:`TableBank` per game; the class means there are
the pieces (and the empty cells) as they look under this light, with this camera, in this set.
A changed target close to a class's mean gets that class's log-odds raised, by at most
the model file's fitted bound; a target far from every mean (a hand, a piece never seen here)
is left to the model alone, so the bank can only confirm what the table has shown before.

A piece not yet put down at this table would still be left to the model while a class that looks
like it (the next size of the same colour) is raised: the bank would make a misread of the first
piece of a class surer. So where the model file's ``lend`` says so, a class the bank holds too
few examples of is looked for where the training domain put it: at its *prototype* (its mean
embedding over the sample games the adaptation was fitted on, the model file's ``prototypes``)
moved by this table's shift (the mean, over the classes the bank can use, of their mean here less
their prototype), and raised as a held class is, at ``lend`` times the weight. The foreign class
has no prototype (a hand is never accepted), so a hand is still left to the model.

Bounds, all in the model file's ``adapt`` (fitted by ``referee train NAME --adapt-only`` on
rendered games of the training domain, ``vision.train.adapt``):

- ``capacity`` examples per class, the latest (older ones are forgotten: a lamp switched on in
  the middle of a game is learnt again within a few moves);
- a class counts from ``min_examples`` on;
- the raise is ``weight * max(0, reach - d)``, ``d`` the target's squared distance to the class
  mean in units of the bank's mean squared spread within a class: never above
  ``weight * reach`` nats, never a lowering;
- ``weight`` 0 turns the adaptation off (the model file's choice when it did not help);
- ``misreads``: whether the targets misread at this table teach the bank too (fitted with the
  bounds; absent: no);
- ``lend``: the weight, relative to ``weight``, of the raise of a class the bank cannot use yet,
  about its prototype moved by the table's shift (fitted with the bounds; absent: 0, such a class
  is left to the model), and ``prototypes``, per class, that mean embedding (empty: none).

A table can also show that the model is surer than it should be here (a light that washes the
pieces' colours out): :class:`TableTemperature` divides the log-odds among the pieces (and the
empty cell) by a temperature ``T >= 1`` fitted on what the accepted positions showed, the targets
whose class they changed as they were read, so that a table whose reads the accepted moves keep
contradicting is read less surely, and the referee asks where it would have guessed. ``temper``
(the model file's, fitted; absent: off) is the weight of the prior that holds ``T`` at 1: the
fit is ``argmin_T NLL(T) + temper (ln T)^2`` over :data:`TEMPERATURES`. It never makes a read
surer than the model's, and it leaves the *foreign* class's probability as the model gives it,
so a hand is flagged as before. Whatever ``temper`` says, the table's reads count as
*contradicted* (:attr:`TableTemperature.contradicted`, the status line :data:`READS_UNSURE`)
once the best temperature explains the accepted boards better than 1 by more than chance would
at the 0.1 % level: the players are told that this light makes the pieces hard to read.

A new game (:meth:`TableBank.clear`) starts from nothing: the opening's empty board is the first
example.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Adaptation:
    """The fitted, bounded parameters of a :class:`TableBank` (a model file's ``adapt``)."""

    #: nats of log-odds per unit of closeness (0: no adaptation)
    weight: float = 0.0
    #: normalised squared distance to a class mean within which that class is raised
    reach: float = 0.0
    #: examples kept per class (the latest)
    capacity: int = 32
    #: examples a class needs before it is used
    min_examples: int = 2
    #: whether the targets the model misread at this table (sent to it again, read as another
    #: class with the bank's help) are examples too, beside those whose class changed
    misreads: bool = False
    #: weight of the prior that holds the table's temperature at 1 (None: no temperature)
    temper: float | None = None
    #: the weight, relative to ``weight``, of a class the bank cannot use yet, raised about its
    #: prototype moved by the table's shift (0: such a class is left to the model)
    lend: float = 0.0
    #: per class, its mean embedding over the sample games the adaptation was fitted on (empty:
    #: none, as for the foreign class)
    prototypes: tuple[tuple[float, ...], ...] = ()

    @property
    def bound(self) -> float:
        """The most a class's log-odds may be raised (nats)."""
        return self.weight * self.reach

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Adaptation:
        """From a model file's ``adapt`` (absent: off)."""
        if not data:
            return cls()
        return cls(
            weight=float(data["weight"]),
            reach=float(data["reach"]),
            capacity=int(data["capacity"]),
            min_examples=int(data["min_examples"]),
            misreads=bool(data.get("misreads", False)),
            temper=None if data.get("temper") is None else float(data["temper"]),
            lend=float(data.get("lend", 0.0)),
            prototypes=tuple(tuple(map(float, p)) for p in data.get("prototypes", ())),
        )

    def to_json(self) -> dict[str, Any]:
        """The model file's ``adapt``."""
        return {
            "weight": self.weight,
            "reach": self.reach,
            "capacity": self.capacity,
            "min_examples": self.min_examples,
            "misreads": self.misreads,
            "temper": self.temper,
            "lend": self.lend,
            "prototypes": [list(p) for p in self.prototypes],
        }


class TableBank:
    """Embeddings of accepted targets, per class, and the log-odds they add to new targets."""

    def __init__(self, classes: int, adaptation: Adaptation) -> None:
        self.classes = classes
        self.adaptation = adaptation
        self._examples: list[deque[np.ndarray]] = [
            deque(maxlen=max(1, adaptation.capacity)) for _ in range(classes)
        ]
        #: the classes that have a prototype, and it
        self._prototypes = {c: np.array(p) for c, p in enumerate(adaptation.prototypes) if p}

    @property
    def active(self) -> bool:
        """True when the bank can change a prediction (adaptation on, some class usable)."""
        return self.adaptation.bound > 0 and bool(self._usable())

    def counts(self) -> list[int]:
        """Examples held per class."""
        return [len(e) for e in self._examples]

    def add(self, embeddings: np.ndarray, classes: np.ndarray) -> None:
        """Remember accepted targets: ``embeddings`` (N x D) of class indices ``classes``. When
        one call brings more of a class than the bank keeps (the opening's empty board), evenly
        spaced ones are kept, so that they span the board."""
        f, classes = np.asarray(embeddings, np.float64), np.asarray(classes, dtype=int)
        for c in np.unique(classes):
            rows = np.flatnonzero(classes == c)
            keep = self._examples[int(c)].maxlen or len(rows)
            if len(rows) > keep:
                rows = rows[np.linspace(0, len(rows) - 1, keep).round().astype(int)]
            self._examples[int(c)].extend(f[rows])

    def clear(self) -> None:
        """Forget every example (a new game)."""
        for e in self._examples:
            e.clear()

    def _usable(self) -> list[int]:
        need = self.adaptation.min_examples
        return [c for c, e in enumerate(self._examples) if len(e) >= need]

    def offsets(self, embeddings: np.ndarray) -> np.ndarray:
        """Log-odds to add to the model's logits of targets with ``embeddings`` (N x D): for
        each usable class, ``weight * max(0, reach - d)``; for each other class with a
        prototype, ``lend`` times that about the prototype moved by the table's shift, where
        ``lend`` is on and some usable class has a prototype; 0 elsewhere (N x classes)."""
        out = np.zeros((len(embeddings), self.classes))
        usable = self._usable()
        if not usable or self.adaptation.bound <= 0 or len(embeddings) == 0:
            return out
        banks = [np.array(self._examples[c]) for c in usable]
        means = np.array([b.mean(axis=0) for b in banks])
        spread = float(
            np.mean(
                np.concatenate(
                    [((b - m) ** 2).sum(axis=1) for b, m in zip(banks, means, strict=True)]
                )
            )
        )
        a = self.adaptation
        weights = np.full(len(usable), a.weight)
        lent = self._lent(usable, means)
        if lent:
            usable = usable + list(lent)
            means = np.vstack([means, np.array(list(lent.values()))])
            weights = np.append(weights, np.full(len(lent), a.lend * a.weight))
        f = np.asarray(embeddings, np.float64)
        d = ((f[:, None, :] - means[None, :, :]) ** 2).sum(axis=2) / max(spread, 1e-9)
        out[:, usable] = weights * np.maximum(0.0, a.reach - d)
        return out

    def _lent(self, usable: list[int], means: np.ndarray) -> dict[int, np.ndarray]:
        """Where the classes with a prototype that the bank cannot use yet are looked for: their
        prototypes moved by the table's shift, the mean over the ``usable`` classes with a
        prototype of their ``means`` here less it (none while ``lend`` is off or no usable class
        has a prototype)."""
        if self.adaptation.lend <= 0:
            return {}
        shown = [
            (m, self._prototypes[c])
            for c, m in zip(usable, means, strict=True)
            if c in self._prototypes
        ]
        if not shown:
            return {}
        shift = np.mean([m - p for m, p in shown], axis=0)
        return {c: p + shift for c, p in self._prototypes.items() if c not in usable}


#: The temperatures a table may be read at: 1 (the model's own confidence) to 20, log-spaced.
TEMPERATURES = np.exp(np.linspace(0.0, np.log(20.0), 61))
#: Half the 0.1 % point of chi-squared with one degree of freedom (10.83 / 2): by more nats than
#: this the best temperature must explain the accepted boards than 1 does for the table's reads
#: to count as contradicted (a likelihood-ratio test at the 0.1 % level).
CONTRADICTED_NATS = 5.414
#: The status line of a table whose reads the accepted boards contradict.
READS_UNSURE = "reads unsure: light?"


def _log_softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise log-probabilities of the log-odds ``z`` (N x K)."""
    shifted = z - z.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def tempered_log_probs(logits: np.ndarray, foreign: int, temperature: float) -> np.ndarray:
    """Log-probabilities of ``logits`` (N x classes) read at ``temperature``: the ``foreign``
    column's as the model gives them, the others' shared out by the softmax of their log-odds
    divided by ``temperature``."""
    z = np.asarray(logits, np.float64)
    log_p = _log_softmax(z)
    if temperature == 1.0:
        return log_p
    others = _log_softmax(np.delete(z, foreign, axis=1) / temperature)
    rest = np.log1p(-np.minimum(np.exp(log_p[:, foreign]), 1.0 - 1e-12))
    return np.insert(others + rest[:, None], foreign, log_p[:, foreign], axis=1)


class TableTemperature:
    """How surely this table's reads may be taken: the temperature (>= 1) that best explains
    the accepted classes of the targets read so far, held at 1 by a prior of weight
    ``temper`` (None: always 1), and whether those classes contradict the reads beyond
    chance."""

    def __init__(self, foreign: int, temper: float | None) -> None:
        self.foreign = foreign
        self.temper = temper
        self._loss = np.zeros(len(TEMPERATURES))

    @property
    def value(self) -> float:
        """The temperature to read the next board at."""
        if self.temper is None or not self._loss.any():
            return 1.0
        cost = self._loss + self.temper * np.log(TEMPERATURES) ** 2
        return float(TEMPERATURES[int(np.argmin(cost))])

    @property
    def contradicted(self) -> bool:
        """Whether the accepted boards contradict this table's reads beyond chance: the best
        temperature explains them better than 1 by more than :data:`CONTRADICTED_NATS`."""
        return bool(self._loss[0] - self._loss.min() > CONTRADICTED_NATS)

    def observe(self, logits: np.ndarray, classes: np.ndarray) -> None:
        """Remember how targets read with ``logits`` (their table-adapted log-odds) turned out
        to be of ``classes`` (foreign ones say nothing of the pieces and are left out)."""
        keep = np.asarray(classes) != self.foreign
        z, y = np.asarray(logits, np.float64)[keep], np.asarray(classes)[keep]
        if not len(y):
            return
        z = np.delete(z, self.foreign, axis=1)
        y = y - (y > self.foreign)
        rows = np.arange(len(y))
        for k, t in enumerate(TEMPERATURES):
            self._loss[k] -= float(np.sum(_log_softmax(z / t)[rows, y]))

    def clear(self) -> None:
        """Forget what this table showed (a new game)."""
        self._loss[:] = 0.0
