"""Where a profile across a board's side crosses the board's edge: a small fitted classifier.

A *profile* is the colour along a short line across the outline printed for a board on its mat
(:mod:`vision.placement` samples it), from inside the board to the paper outside. Between every
two samples a *boundary* may be the board's edge; :class:`EdgeModel` scores each boundary from
the colours of a window around it (the profile scaled by its own contrast, so a dim frame and a
bright one look alike); the scores of a profile's boundaries and of *no edge here* (a
constant) make one probability distribution: where along the profile the edge is, if
anywhere. The scorer is a one-hidden-layer network fitted by ``referee train edges``
(:mod:`vision.train.edges`) on rendered boards laid off their outlines, whose true edges are
known. The model is data: ``vision/models/edges.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from .models import ModelFileError, load_model_file, models_dir

#: Version of ``edges.json``.
FORMAT = 1
#: The file of the fitted model in its folder (:func:`~vision.models.models_dir`).
EDGES_FILE = "edges.json"
#: Added to a profile's spread (grey levels) before it scales the profile: a flat profile
#: (paper only) stays flat instead of showing its noise as steps.
SPREAD_FLOOR = 4.0


class EdgeModelError(ModelFileError):
    """The edge model's file is missing or not of this version."""


def normalised(profiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Profiles (P x S x 3, BGR grey levels) centred on their median and divided by their spread
    (5th to 95th percentile of the grey, plus :data:`SPREAD_FLOOR`); and the log of that
    spread, per profile (how much contrast the profile has at all)."""
    grey = profiles.mean(axis=2)
    low, mid, high = np.percentile(grey, (5, 50, 95), axis=1)
    spread = high - low + SPREAD_FLOOR
    scaled = (profiles - mid[:, None, None]) / spread[:, None, None]
    return scaled.astype(np.float32), np.log(spread).astype(np.float32)


def windows(profiles: np.ndarray, half: int) -> np.ndarray:
    """Per profile and boundary ``j`` (between samples j-1 and j, for j in half..S-half), the
    features the model scores: the normalised colours of samples j-half .. j+half-1 and the
    profile's log spread (P x B x (6 half + 1))."""
    win, log_spread = _windows(profiles, half)
    spread = np.broadcast_to(log_spread[:, None, None], (*win.shape[:2], 1))
    return np.concatenate([win, spread], axis=2)


def _windows(profiles: np.ndarray, half: int) -> tuple[np.ndarray, np.ndarray]:
    """The colour part of :func:`windows` (P x B x 6 half) and the log spreads (P)."""
    scaled, log_spread = normalised(profiles)
    view = np.lib.stride_tricks.sliding_window_view(scaled, 2 * half, axis=1)
    p, b = view.shape[:2]
    return view.transpose(0, 1, 3, 2).reshape(p, b, -1), log_spread


@dataclass(frozen=True)
class EdgeModel:
    """A fitted boundary scorer: ``half`` samples each side of a boundary, a hidden layer,
    and the log-odds ``none`` of a profile without the edge."""

    half: int
    step_mm: float
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: float
    none: float
    trained: dict[str, Any]

    def logits(self, profiles: np.ndarray) -> np.ndarray:
        """Log-odds that each boundary of each profile is the board's edge (P x B)."""
        win, log_spread = _windows(np.asarray(profiles, dtype=np.float32), self.half)
        hidden = win @ self.w1[:-1] + (log_spread[:, None, None] * self.w1[-1] + self.b1)
        hidden = np.maximum(hidden, 0.0)
        return hidden @ self.w2 + self.b2

    def _probabilities(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """From the log-odds ``z`` (P x B), per profile the probability that the edge is at
        each boundary (P x B), and that it is at none of them (P)."""
        top = np.maximum(z.max(axis=1), self.none)
        e = np.exp(z - top[:, None])
        e_none = np.exp(self.none - top)
        total = e.sum(axis=1) + e_none
        return e / total[:, None], e_none / total

    def edges(self, profiles: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Per profile, the offset (mm, ``offsets`` being the samples') of its most likely
        edge, between boundaries by a parabola through the scores; NaN where the edge is not
        more likely than not within a boundary of that (a hand, no step to see)."""
        z = self.logits(profiles)
        p, _ = self._probabilities(z)
        rows = np.arange(len(z))
        best = z.argmax(axis=1)
        before = np.maximum(best - 1, 0)
        after = np.minimum(best + 1, z.shape[1] - 1)
        mass = p[rows, best] + p[rows, before] * (before < best) + p[rows, after] * (after > best)
        top, left, right = z[rows, best], z[rows, before], z[rows, after]
        bend = left - 2 * top + right
        part = np.where(bend < 0, 0.5 * (left - right) / np.where(bend < 0, bend, -1.0), 0.0)
        boundary = offsets[self.half - 1] + (best + 0.5 + np.clip(part, -0.5, 0.5)) * self.step_mm
        return np.where(mass >= 0.5, boundary, np.nan)

    def to_json(self) -> dict[str, Any]:
        """The file's content."""
        return {
            "format": FORMAT,
            "half": self.half,
            "step_mm": self.step_mm,
            "w1": np.round(self.w1, 6).tolist(),
            "b1": np.round(self.b1, 6).tolist(),
            "w2": np.round(self.w2, 6).tolist(),
            "b2": round(float(self.b2), 6),
            "none": round(float(self.none), 6),
            "trained": self.trained,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EdgeModel:
        """The model of a file's content."""
        if data.get("format") != FORMAT:
            raise EdgeModelError(f"edge model format {data.get('format')}, expected {FORMAT}")
        return cls(
            half=int(data["half"]),
            step_mm=float(data["step_mm"]),
            w1=np.asarray(data["w1"], dtype=np.float32),
            b1=np.asarray(data["b1"], dtype=np.float32),
            w2=np.asarray(data["w2"], dtype=np.float32),
            b2=float(data["b2"]),
            none=float(data["none"]),
            trained=dict(data.get("trained", {})),
        )

    def save(self, path: Path) -> None:
        """Write the model to ``path``."""
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")


def edge_model(directory: str | None = None) -> EdgeModel:
    """The fitted edge model (``edges.json`` of :func:`~vision.models.models_dir` unless
    ``directory`` is given)."""
    return _edge_model_in(str(models_dir(directory)))


@cache
def _edge_model_in(directory: str) -> EdgeModel:
    return load_model_file(directory, EDGES_FILE, "edges", EdgeModel.from_json, EdgeModelError)
