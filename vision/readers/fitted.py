"""Readers made of a fitted model: sample every cell's patch, predict, turn classes into cells.

The game-specific part is small: which patches (the model file's
:class:`~vision.sampling.PatchSpec`) and what a class means (:meth:`FittedReader.label` from a
cell's observation JSON, used to train; :meth:`FittedReader.cell_probabilities` back to the
engine's contents, used to read). A cell whose patch the model calls *foreign* with at least the
model's fitted threshold is hidden: left out of the observation, which is then ``occluded``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import permutations
from typing import Any, ClassVar

import numpy as np

from engine import Observation, data, new_game
from engine.core import Content

from ..geometry import BoardGeometry
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
        self.sampler = PatchSampler(geometry, self.model.spec)
        self.net = self.model.network()
        self.codec = new_game(geometry.game)
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
    def predict(self, frame: np.ndarray, pose: BoardPose) -> np.ndarray:
        """Class probabilities of every target of ``frame`` (targets x classes)."""
        return self.model.predict_proba(self.sampler.sample(frame, pose), self.net)

    def read(self, frame: np.ndarray, pose: BoardPose) -> Observation:
        names, contents, probs, foreign = self.cell_probabilities(self.predict(frame, pose))
        hidden = [
            n for n, f in zip(names, foreign, strict=True) if f >= self.model.foreign_threshold
        ]
        return observation(self.game, names, contents, probs, hidden)

    def calibrate(self, frame: np.ndarray, pose: BoardPose, known: Mapping[str, Content]) -> None:
        """Nothing to learn yet: the model is fitted offline."""


class GobbletReader(FittedReader):
    """Gobblet: the visible top piece of each square, classes ``white-1`` .. ``black-4``."""

    games = ("gobblet",)

    @classmethod
    def label(cls, value: Any, part: str) -> str:
        return EMPTY if value is None else f"{value['color']}-{value['size']}"

    def content(self, label: str) -> Content:
        color, size = label.split("-")
        return self.codec.cell_from_json({"color": color, "size": int(size)})


class SpectrangleReader(FittedReader):
    """Spectrangle: one patch per edge of each cell, classed by colour; a cell's probability of
    each way of laying each real piece is the product of its three edges'."""

    games = ("spectrangle",)
    COLOURS: ClassVar[dict[str, str]] = {
        "R": "red",
        "G": "green",
        "B": "blue",
        "Y": "yellow",
        "P": "purple",
        "W": "white",
    }

    def labels_known(self) -> Sequence[str]:
        return tuple(self.COLOURS.values())

    @classmethod
    def label(cls, value: Any, part: str) -> str:
        return EMPTY if value is None else str(value[part])

    def cell_probabilities(
        self, probs: np.ndarray
    ) -> tuple[list[str], list[Content], np.ndarray, np.ndarray]:
        classes = self.model.classes
        cells = list(dict.fromkeys(self.sampler.cells))
        edges = probs.reshape(len(cells), len(EDGES), len(classes))
        pieces = data.load("spectrangle")["pieces"]
        layings = list(dict.fromkeys(p for code in pieces for p in permutations(code)))
        column = np.array([[classes.index(self.COLOURS[c]) for c in lay] for lay in layings])
        logp = np.log(np.maximum(edges, 1e-9))
        # cells x layings: the sum over the three edges of each laying's colour
        ll = sum(logp[:, i, column[:, i]] for i in range(len(EDGES)))
        empty = logp[:, :, classes.index(EMPTY)].sum(axis=1)
        ll = np.column_stack([empty, ll])
        ll -= ll.max(axis=1, keepdims=True)
        p = np.exp(ll)
        p /= p.sum(axis=1, keepdims=True)
        contents: list[Content] = [None]
        contents += [
            self.codec.cell_from_json(
                {side: self.COLOURS[c] for side, c in zip(EDGES, lay, strict=True)}
            )
            for lay in layings
        ]
        foreign = edges[:, :, self.model.foreign].max(axis=1)
        return cells, contents, p, foreign
