"""Which cells changed since the last accepted position: judge changes, not whole boards.

After every accepted position the reader keeps that frame's patches (:class:`Memory`). In a new
settled frame, a target whose patch is still the same keeps its accepted content, so an
unchanged cell can never be misread; only the others go to the model. Patches are compared in
the mat's reflectance (the light measured on the mat in each frame), after one gain per colour
channel over the whole board (what is left of a global change of light: a lamp switched on, a
cloud, the camera's exposure), by the 90th percentile of the per-pixel difference (a small new
piece covers a tenth of a Gobblet patch), over the whole patch or, where the model's fit found
it tells changes better, over the middle that is the target's own cell (:func:`own_window`: a
square patch also shows the cells round it, and a piece put beside a cell is no change of it).
The difference may first be averaged over a small box of pixels (:func:`box_mean`): a camera
films every frame with fresh noise, pixel by pixel, and a piece changes a region. A target has
changed when its score reaches the model's ``change_threshold``; threshold, window and box are
fitted on rendered pairs filmed with fresh noise by ``vision.train.change`` (the model file's
``change_window`` and ``change_box``; a file without them compares whole patches pixel by
pixel).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .geometry import BoardGeometry
from .sampling import PatchSpec

#: The per-pixel difference quantile that scores a patch's change.
QUANTILE = 0.9


@dataclass(frozen=True, eq=False)
class Memory:
    """The patches of the last accepted frame and the class of every target there (the
    accepted content of its cell, as the model names it)."""

    patches: np.ndarray
    classes: np.ndarray


def global_gain(now: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Per colour channel, the median ratio of ``now`` to ``before`` over every patch pixel
    (views of one plane share the gain): the global change of light (1 x C x 1 x 1)."""
    c = now.shape[1]
    a = np.maximum(now, 1e-3).transpose(1, 0, 2, 3).reshape(c, -1)
    b = np.maximum(before, 1e-3).transpose(1, 0, 2, 3).reshape(c, -1)
    ratio = np.median(a / b, axis=1)
    per_colour = ratio.reshape(-1, 3).mean(axis=0)
    return np.tile(per_colour, c // 3).reshape(1, c, 1, 1)


def own_window(geometry: BoardGeometry, spec: PatchSpec) -> float:
    """The share of a patch's side that is its target's own cell: for a square patch the
    side of a square of the cell's area over the patch's (the neighbours round it left out),
    at most 1; 1 for an edge patch (a Spectrangle edge's patch is its cell's) and for a polar
    one (the middle of its side is not the middle of the board it shows)."""
    if spec.kind != "square":
        return 1.0
    areas = [cv2.contourArea(np.asarray(c.polygon, np.float32)) for c in geometry.cells]
    return min(1.0, float(np.sqrt(np.median(areas))) / spec.size_mm)


def box_mean(planes: np.ndarray, box: int) -> np.ndarray:
    """Each ``px x px`` plane of ``planes`` (... x px x px) averaged over a ``box x box``
    square round every pixel (odd ``box``; the plane mirrored at its edges, as OpenCV's
    default border); ``box`` 1 leaves them as they are."""
    if box == 1:
        return planes
    if box < 1 or box % 2 == 0:
        raise ValueError(f"a box of {box} pixels has no middle")
    r = box // 2
    x = np.pad(planes, [(0, 0)] * (planes.ndim - 2) + [(r, r), (r, r)], mode="reflect")
    n0, n1 = planes.shape[-2:]
    rows = sum(x[..., k : k + n0, :] for k in range(box))
    total = sum(rows[..., k : k + n1] for k in range(box))
    return total / (box * box)


def change_scores(
    now: np.ndarray, before: np.ndarray, window: float = 1.0, box: int = 1
) -> np.ndarray:
    """Per target, how much its patch changed between ``before`` and ``now`` (N x C x px x px
    reflectance each): the :data:`QUANTILE` of the per-pixel sum over channels of the absolute
    difference, after :func:`global_gain` (of the whole patches) and averaged over ``box``
    pixels square (:func:`box_mean`), over the middle ``window`` share of each patch's side."""
    if now.shape != before.shape:
        raise ValueError(f"patches of {now.shape} and {before.shape} do not compare")
    diff = np.abs(box_mean(now - global_gain(now, before) * before, box)).sum(axis=1)
    px = diff.shape[-1]
    margin = min(round(px * (1.0 - window) / 2), (px - 1) // 2)
    diff = diff[:, margin : px - margin, margin : px - margin]
    flat = diff.reshape(len(diff), -1)
    k = round(QUANTILE * (flat.shape[1] - 1))
    return np.partition(flat, k, axis=1)[:, k]
