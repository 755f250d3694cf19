"""Whether a marker the detector did not read is still in place and uncovered, by its look.

At the edge of what the detector reads (small, noisy or blurred markers) a marker may go unread
for many frames with nothing over it. The still run (:class:`~vision.locate.BoardLocator`)
keeps a grey crop of every marker from when it was last read. A marker unread now is judged by
how *unlike* its crop then its pixels are now, inside its outline: one less the correlation of
the two (0: the same look up to exposure; about 1: something else lies there, a hand or a card).
Fresh sensor noise makes every marker a little unlike its crop, by an amount that depends on the
light, the camera and the markers' size; the markers read in the same frame measure it (the
*yardstick*: the median unlikeness of theirs). A logistic model over the logarithms of both,
fitted on rendered scenes with and without hands (:mod:`vision.train.still_look`, ``referee
train still-look``), says whether the unread marker is covered; its parameters are data in
``still_look.json`` beside the readers' models.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .models import ModelFileError, load_model_file, models_dir

#: The file of the fitted model in its folder (:func:`~vision.models.models_dir`).
STILL_LOOK_FILE = "still_look.json"
FORMAT = 1
#: Added to an unlikeness before its logarithm: the unlikeness of two crops that differ by
#: 8-bit rounding alone is about this small, so identical crops do not give minus infinity.
FLOOR = 1e-5


def outline_mask(shape: tuple[int, ...], corners: np.ndarray) -> np.ndarray:
    """The pixels (bool, ``shape``) inside a marker's ``corners`` (4x2, px of the crop)."""
    mask = np.zeros(shape[:2], np.uint8)
    points = np.round(np.asarray(corners).reshape(-1, 2) * 16).astype(np.int32)
    cv2.fillConvexPoly(mask, points, 1, cv2.LINE_8, 4)
    return mask.astype(bool)


def unlikeness(before: np.ndarray, now: np.ndarray, mask: np.ndarray) -> float:
    """One less the correlation of two grey crops' pixels inside ``mask`` (0 when they differ
    only by a gain and an offset; 1 when either is flat)."""
    x = before[mask].astype(np.float64)
    y = now[mask].astype(np.float64)
    x -= x.mean()
    y -= y.mean()
    scale = float(np.sqrt((x * x).sum() * (y * y).sum()))
    return 1.0 - float((x * y).sum()) / scale if scale > 0 else 1.0


def features(unlike: float | np.ndarray, yardstick: float | np.ndarray) -> np.ndarray:
    """The model's inputs: the logarithms of a marker's unlikeness and of the yardstick."""
    return np.column_stack(
        [np.log(np.asarray(unlike, float) + FLOOR), np.log(np.asarray(yardstick, float) + FLOOR)]
    )


@dataclass(frozen=True)
class StillLook:
    """A fitted logistic model: ``covered`` when ``weights . features + bias > 0``."""

    weights: tuple[float, float]
    bias: float
    trained: dict[str, Any] = field(default_factory=dict)

    def covered_odds(self, unlike: float, yardstick: float) -> float:
        """The log-odds that a marker this ``unlike`` its crop, in a frame whose read markers
        are ``yardstick`` unlike theirs, is covered."""
        return float(features(unlike, yardstick)[0] @ np.asarray(self.weights) + self.bias)

    def in_place(self, unlike: float, yardstick: float) -> bool:
        """True if the marker is likelier in place and uncovered than covered."""
        return self.covered_odds(unlike, yardstick) <= 0.0

    def to_json(self) -> dict[str, Any]:
        """The model file's contents."""
        return {
            "format": FORMAT,
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "trained": self.trained,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StillLook:
        """The model of a file's contents; raises ValueError for another format."""
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, not {FORMAT}")
        w0, w1 = (float(w) for w in data["weights"])
        return cls((w0, w1), float(data["bias"]), dict(data.get("trained", {})))

    def save(self, path: Path) -> None:
        """Write the model to ``path``."""
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")


class StillLookError(ModelFileError):
    """The still-look model file is missing or unreadable."""


def still_look(directory: str | None = None) -> StillLook:
    """The fitted model (``still_look.json`` of :func:`~vision.models.models_dir` unless
    ``directory`` is given)."""
    return _still_look_in(str(models_dir(directory)))


@cache
def _still_look_in(directory: str) -> StillLook:
    return load_model_file(
        directory, STILL_LOOK_FILE, "still-look", StillLook.from_json, StillLookError
    )
