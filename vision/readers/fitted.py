"""Readers made of a fitted model: sample every cell's patch, predict, turn classes into cells.

After :meth:`FittedReader.calibrate` (the opening, then every accepted position) the reader
judges changes, not whole boards (:mod:`vision.change`): a cell whose patches are as they were in
the last accepted frame keeps its accepted content; only changed cells go to the model, whose
verdict this table's accepted pieces may confirm, within the model file's bounds
(:mod:`vision.adapt`).

The game-specific part is small: which patches (the model file's
:class:`~vision.sampling.PatchSpec`) and what a class means (:meth:`FittedReader.label` from a
cell's observation JSON, used to train; :meth:`FittedReader.cell_probabilities` back to the
engine's contents, used to read). A frame in which the model calls any cell's patch *foreign*
with at least the model's fitted ``foreign_threshold`` is ``occluded``; its cells from the
model's ``hide_threshold`` on are hidden: left out of the observation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from itertools import permutations
from typing import Any

import numpy as np

from engine import Observation, data, new_game
from engine.core import Content
from engine.spectrangle import COLOURS

from ..adapt import TableBank, TableTemperature, tempered_log_probs
from ..assign import best_assignment, best_within
from ..change import Memory, change_scores
from ..geometry import BoardGeometry
from ..hiding import Standing, standing_sizes
from ..locate import BoardPose
from ..model import EMPTY, FOREIGN, CellModel, model_for
from ..sampling import EDGES, PatchSampler
from . import Reader
from .common import observation


class FittedReader(Reader):
    """A reader whose every decision comes from a :class:`~vision.model.CellModel`.

    Options: ``model`` (a loaded model, default the game's in ``vision/models/``).
    """

    def __init__(self, geometry: BoardGeometry, **options: Any) -> None:
        super().__init__(geometry, **options)
        self.model: CellModel = options.get("model") or model_for(geometry.game)
        if geometry.game not in self.model.games:
            raise ValueError(f"model {self.model.name} reads {', '.join(self.model.games)}")
        self.sampler = PatchSampler(geometry, self.model.spec)
        self.net = self.model.network()
        self.codec = new_game(geometry.game)
        self.memory: Memory | None = None
        #: this table's accepted pieces, as the model's embeddings (:mod:`vision.adapt`)
        self.bank = TableBank(len(self.model.classes), self.model.adaptation)
        #: how surely this table's reads may be taken (:mod:`vision.adapt`)
        self.temperature = TableTemperature(self.model.foreign, self.model.adaptation.temper)
        missing = set(self.model.classes) - {EMPTY, FOREIGN} - set(self.labels_known())
        if missing:
            raise ValueError(f"model {self.model.name} has classes {sorted(missing)} unknown here")

    # ------------------------------------------------------------------ game-specific part
    def labels_known(self) -> Sequence[str]:
        """Every class name of a piece this reader understands."""
        return self.model.classes

    @classmethod
    def label(cls, value: Any, part: str) -> str:
        """The class of a target from its cell's observation JSON (``None`` empty)."""
        return EMPTY if value is None else str(value)

    def cell_probabilities(
        self, probs: np.ndarray
    ) -> tuple[list[str], list[Content], np.ndarray, np.ndarray]:
        """From per-target class probabilities: the cells, their possible contents, each cell's
        probabilities over them (cells x contents) and each cell's foreign probability."""
        classes = self.model.classes
        keep = [k for k, c in enumerate(classes) if c != FOREIGN]
        contents = [None if classes[k] == EMPTY else self.content(classes[k]) for k in keep]
        p = probs[:, keep]
        p = p / np.maximum(p.sum(axis=1, keepdims=True), 1e-12)
        return list(self.sampler.cells), contents, p, probs[:, self.model.foreign]

    def content(self, label: str) -> Content:
        """The engine's content of a piece class."""
        return self.codec.cell_from_json(label)

    # ------------------------------------------------------------------ shared part
    def predict(self, frame: np.ndarray, pose: BoardPose, afresh: bool = False) -> np.ndarray:
        """Class probabilities of every target of ``frame`` (targets x classes): the model's
        for the cells that changed since the last accepted frame (all of them before the first,
        or ``afresh``), a certain accepted class for the others. The changed ones' logits get
        the table bank's offsets (:meth:`~vision.adapt.TableBank.offsets`) and are read at the
        table's temperature (:class:`~vision.adapt.TableTemperature`). The frame context, if
        the model takes one, is always the whole frame's."""
        patches = self.sampler.sample(frame, pose)
        probs = np.zeros((len(patches), len(self.model.classes)))
        todo = np.arange(len(patches)) if afresh else self._changed(patches)
        if self.memory is not None and len(todo) < len(patches):
            kept = np.setdiff1d(np.arange(len(patches)), todo)
            probs[kept, self.memory.classes[kept]] = 1.0
        if len(todo):
            logits = self._forward(patches, todo)[0]
            t = self.temperature.value
            probs[todo] = np.exp(tempered_log_probs(logits, self.model.foreign, t))
        return probs

    def _forward(self, patches: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The logits and embeddings of the targets ``rows`` of ``patches`` (the frame context,
        if the model takes one, the whole frame's), the logits with the table bank's offsets
        when the bank has examples to give."""
        context = self.model.frame_context(patches)
        logits, embedding = self.model.forward(patches[rows], self.net, context)
        if self.bank.active:
            logits = logits + self.bank.offsets(embedding)
        return logits, embedding

    def _changed(self, patches: np.ndarray) -> np.ndarray:
        """Indices of the targets whose cell changed since the last accepted frame (every
        target of a cell with a changed target; every target without a memory)."""
        memory, threshold = self.memory, self.model.change_threshold
        if memory is None or threshold is None:
            return np.arange(len(patches))
        model = self.model
        scores = change_scores(patches, memory.patches, model.change_window, model.change_box)
        moved = scores >= threshold
        cells = self.sampler.cells
        changed = {c for c, m in zip(cells, moved, strict=True) if m}
        return np.array([i for i, c in enumerate(cells) if c in changed], dtype=int)

    def read(
        self, frame: np.ndarray, pose: BoardPose, *, clear: bool = False, afresh: bool = False
    ) -> Observation:
        """Every cell's likeliest content other than *foreign*; a frame with a cell whose
        foreign probability reaches the model's flag is ``occluded``, its cells from the hide
        threshold on left out, unless ``clear`` (the players say nothing is over the board);
        ``afresh``: every cell goes to the model (:meth:`predict`)."""
        probabilities = self.predict(frame, pose, afresh)
        names, contents, probs, foreign = self.cell_probabilities(probabilities)
        hidden: list[str] = []
        occluded = not clear and foreign.max(initial=0.0) >= self.model.foreign_threshold
        if occluded:
            hide = self.model.hide_threshold
            hidden = [n for n, f in zip(names, foreign, strict=True) if f >= hide]
        shown = ~np.isin(names, hidden)
        best = self.best_contents(probs, shown)
        return observation(
            self.game, names, contents, probs, hidden, occluded=bool(occluded), best=best
        )

    def best_contents(self, probs: np.ndarray, shown: np.ndarray) -> np.ndarray:
        """The column of each cell's reported content in ``probs`` (cells x contents; ``shown``:
        the cells reported): the likeliest of each, unless they show more of a content than
        the box holds (:meth:`capacity`): then the reported cells are given contents together,
        none more often than the box has it, as likely as can be
        (:func:`~vision.assign.best_within`; a cell may turn empty). A game whose rules put a
        piece on the board at most once chooses them its own way (:class:`SpectrangleReader`)."""
        best = probs.argmax(axis=1)
        rows = np.flatnonzero(shown)
        if all(c is None for c in self._capacities) or not len(rows):
            return best
        best[rows] = best_within(np.log(np.maximum(probs[rows], 1e-12)), self._capacities)
        return best

    @cached_property
    def _capacities(self) -> list[int | None]:
        """:meth:`capacity` of each content column of :meth:`cell_probabilities`."""
        _, contents, _, _ = self.cell_probabilities(np.eye(len(self.model.classes))[:1])
        return [self.capacity(c) for c in contents]

    def capacity(self, content: Content) -> int | None:
        """How many cells can show ``content`` at once with the pieces of one box (``None``:
        any number, as for an empty cell)."""
        return None

    def calibrate(
        self,
        frame: np.ndarray,
        pose: BoardPose,
        known: Mapping[str, Content],
        *,
        unchanged: bool = False,
    ) -> None:
        """Remember ``frame``'s patches and the accepted contents ``known`` (every cell): the
        next frames are judged against them, and the targets whose class changed (all of them
        the first time), and those the model misread where its adaptation says so, are
        examples of this table's pieces for the bank (:meth:`_learn`); the changed ones, as
        they were read, tell the table's temperature how sure its reads may be.

        ``unchanged`` (the referee judged the board unchanged: nothing was played, or the
        rules and the reader's doubt said so): only the targets whose patches did not change
        take ``frame``'s look (a light that drifted); a changed one keeps the look it had
        when its accepted content was, so that a piece the reader missed, or the rules
        overruled, is judged again at the next board instead of taken for the accepted
        content, and nothing is taught."""
        if not set(known) >= set(self.geometry.cell_names):
            return
        classes = self.target_classes(known)
        patches = self.sampler.sample(frame, pose)
        memory = self.memory
        if unchanged and memory is not None:
            kept = np.intersect1d(self._changed(patches), np.flatnonzero(classes == memory.classes))
            patches[kept] = memory.patches[kept]
        else:
            self._learn(patches, classes)
        self.memory = Memory(patches, classes)

    @property
    def reads_contradicted(self) -> bool:
        """Whether the accepted boards contradict this table's reads beyond chance
        (:attr:`~vision.adapt.TableTemperature.contradicted`)."""
        return self.temperature.contradicted

    def _learn(self, patches: np.ndarray, classes: np.ndarray) -> None:
        """What an accepted frame teaches (``classes``: every target's accepted class; the
        memory still the last accepted frame's), from one change test and one pass of the
        network with the bank as it was at the read:

        - the table's temperature sees the targets whose accepted class changed, among those
          the read sent to the model again, with the log-odds it gave them;
        - the bank, if the model adapts, gets examples of this table's pieces: the targets
          whose class changed (all of them the first time) and, where the adaptation takes
          ``misreads``, the targets sent to the model again that it (with the bank) read as
          something else: a misread at this table (an empty square beside a new piece that
          looked foreign in this light)."""
        memory = self.memory
        everything = np.arange(len(classes))
        if memory is None:
            observed, taught, misreads = everything[:0], everything, False
        else:
            changed = self._changed(patches)
            new = np.flatnonzero(classes != memory.classes)
            misreads = self.model.adaptation.misreads
            observed = np.intersect1d(changed, new)
            taught = np.union1d(new, changed) if misreads else new
        if self.model.adaptation.bound <= 0:
            taught = taught[:0]
        rows = np.union1d(observed, taught)
        if not len(rows):
            return
        logits, embedding = self._forward(patches, rows)
        if len(observed):
            at = np.searchsorted(rows, observed)
            self.temperature.observe(logits[at], classes[observed])
        if not len(taught):
            return
        at = np.searchsorted(rows, taught)
        logits, embedding, labels = logits[at], embedding[at], classes[taught]
        if misreads:
            assert memory is not None
            teach = (labels != memory.classes[taught]) | (logits.argmax(axis=1) != labels)
            embedding, labels = embedding[teach], labels[teach]
        self.bank.add(embedding, labels)

    def target_classes(self, known: Mapping[str, Content]) -> np.ndarray:
        """The model's class index of every target for the contents ``known`` (every cell)."""
        return np.array(
            [
                self.model.classes.index(self.label(self.codec.cell_to_json(known[t.cell]), t.part))
                for t in self.sampler.targets
            ],
            dtype=int,
        )

    def forget(self) -> None:
        """Forget the last accepted frame and this table's examples (a new game is set up)."""
        self.memory = None
        self.bank.clear()
        self.temperature.clear()


class GobbletReader(FittedReader):
    """Gobblet: the visible top piece of each square, classes ``white-1`` .. ``black-4``."""

    games = ("gobblet",)

    @classmethod
    def label(cls, value: Any, part: str) -> str:
        return EMPTY if value is None else f"{value['color']}-{value['size']}"

    def content(self, label: str) -> Content:
        color, size = label.split("-")
        return self.codec.cell_from_json({"color": color, "size": int(size)})

    def capacity(self, content: Content) -> int | None:
        """A box holds ``stacks`` pieces of each colour and size (the engine's layout, from
        ``engine/data/gobblet.json``), so no more of one can top the squares."""
        return None if content is None else self.codec.layout.stacks

    def standing(self, content: Content) -> Standing | None:
        """The top piece's size as the geometry file gives it (``pieces.sizes``)."""
        return None if content is None else self._sizes.get(content.size)

    @cached_property
    def _sizes(self) -> dict[int, Standing]:
        return standing_sizes(self.geometry)


class BlokusReader(FittedReader):
    """Blokus and Blokus Duo: classes ``orange`` and ``violet``; a colour's pieces cover at
    most their squares (``engine/data/blokus.json``, ``blokus-duo.json``)."""

    games = ("blokus", "blokus-duo")

    def capacity(self, content: Content) -> int | None:
        return None if content is None else self.codec.edition.total_squares


class SpectrangleReader(FittedReader):
    """Spectrangle: one patch per edge of each cell, classed by colour; a cell's probability of
    each way of laying each real piece is the product of its three edges'."""

    games = ("spectrangle",)

    def __init__(self, geometry: BoardGeometry, **options: Any) -> None:
        super().__init__(geometry, **options)
        pieces = data.load("spectrangle")["pieces"]
        # every way of laying every real piece: each order of its colours (double-sided)
        layings = list(dict.fromkeys(p for code in pieces for p in permutations(code)))
        classes = self.model.classes
        #: per laying, the class column of each edge's colour (layings x edges)
        self._columns = np.array([[classes.index(COLOURS[c]) for c in lay] for lay in layings])
        sizes = [len(set(permutations(code))) for code in pieces]  # a piece's layings
        #: the first content column of each piece's layings (they follow each other)
        self._starts = 1 + np.cumsum([0, *sizes[:-1]])
        #: the piece of each content column (-1: empty)
        self._piece = np.concatenate([[-1], np.repeat(np.arange(len(pieces)), sizes)])
        #: the contents a cell may hold: empty, then every laying
        self._contents: list[Content] = [None] + [
            self.codec.cell_from_json(
                {side: COLOURS[c] for side, c in zip(EDGES, lay, strict=True)}
            )
            for lay in layings
        ]

    def labels_known(self) -> Sequence[str]:
        return tuple(COLOURS.values())

    def best_contents(self, probs: np.ndarray, shown: np.ndarray) -> np.ndarray:
        """Each tile is in the box once: when the likeliest contents of the reported cells
        show a tile twice, the cells that show tiles are given them together, no tile twice,
        as likely as can be (:func:`~vision.assign.best_assignment`; a cell may turn empty)."""
        best = probs.argmax(axis=1)
        piece = self._piece[best]
        rows = np.flatnonzero(shown & (piece >= 0))
        if len(np.unique(piece[rows])) == len(rows):
            return best
        logp = np.log(np.maximum(probs[rows], 1e-12))
        per_piece = np.maximum.reduceat(logp, self._starts, axis=1)
        empty = np.repeat(logp[:, :1], len(rows), axis=1)
        chosen = best_assignment(np.hstack([per_piece, empty]))
        for row, col in zip(rows, chosen, strict=True):
            if col >= len(self._starts):
                best[row] = 0
            else:
                start = self._starts[col]
                end = self._starts[col + 1] if col + 1 < len(self._starts) else probs.shape[1]
                best[row] = start + int(np.argmax(probs[row, start:end]))
        return best

    @classmethod
    def label(cls, value: Any, part: str) -> str:
        return EMPTY if value is None else str(value[part])

    def cell_probabilities(
        self, probs: np.ndarray
    ) -> tuple[list[str], list[Content], np.ndarray, np.ndarray]:
        classes = self.model.classes
        cells = list(dict.fromkeys(self.sampler.cells))
        edges = probs.reshape(len(cells), len(EDGES), len(classes))
        logp = np.log(np.maximum(edges, 1e-9))
        # cells x layings: the sum over the three edges of each laying's colour
        ll = sum(logp[:, i, self._columns[:, i]] for i in range(len(EDGES)))
        empty = logp[:, :, classes.index(EMPTY)].sum(axis=1)
        ll = np.column_stack([empty, ll])
        ll -= ll.max(axis=1, keepdims=True)
        p = np.exp(ll)
        p /= p.sum(axis=1, keepdims=True)
        foreign = edges[:, :, self.model.foreign].max(axis=1)
        return cells, self._contents, p, foreign
