"""Wait until the board is still and nobody's hand is over it, then hand over one frame to read.

:class:`Settler` takes one rectified board image per frame and answers a :class:`SettleState`:

- ``moving``: the image changed since the still period began, the board itself moved, or the
  board has not yet been still for ``settle_time`` (``reason`` says which);
- ``occluded``: markers seen steadily are hidden (a hand over the mat), or no board is found;
- ``settled``: the board has been still and clear for ``settle_time`` and differs from the last
  settled board, or something moved over it since then: ``frame`` is the image to read.
  Reported once per change and once after every visit of a hand, however small the change it left (a
  small light piece on a light board may change too few pixels to tell; the reader and the
  rules decide, and answer "no change" when the hand left the board as it was);
- ``unchanged``: still and clear, no hand since the last settled board, and nothing changed.

Occlusion is judged here only from geometry: markers that the locator saw steadily are missing
(:class:`Hints`; the pipeline excuses those a piece on the board could stand in front of,
:mod:`vision.hiding`). What is *over* the board is judged by the reader's model, which has a
*foreign* class for hands, sleeves and objects (``docs/vision/models.md``): one occlusion model
for the whole pipeline. A hand held perfectly still settles here, is read, is found foreign and
sends the pipeline back to waiting (:class:`vision.pipeline.VisionPipeline`).

The image is a small (``work_width`` px wide), lightly blurred copy whose colour planes are each
scaled to keep the median they had in the first frame, so a global lighting change (flicker, a
cloud) does not count as a change.

Stillness: the image is compared with the first frame of the current still period (so a slow
creep adds up); more than ``min_area`` of the pixels changed by more than ``level`` (on a 0-255
scale) starts a new period. The same measure against the last settled board decides between
``settled`` and ``unchanged``. Areas are fractions of the image.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import cv2
import numpy as np

from .locate import BoardPose

MOVING = "moving"
OCCLUDED = "occluded"
SETTLED = "settled"
UNCHANGED = "unchanged"

#: ``SettleState.reason`` values.
NO_BOARD = "board not found"
MARKERS_HIDDEN = "markers hidden"
BOARD_MOVED = "board moved"
MOTION = "motion"
SETTLING = "settling"

_KERNEL = np.ones((3, 3), np.uint8)


@dataclass(frozen=True)
class Hints:
    """What the locator knows about the frame: markers seen steadily that are now missing, and
    how far the board moved in the image since the previous frame (px)."""

    markers_missing: int = 0
    pose_shift_px: float = 0.0

    @classmethod
    def from_pose(
        cls,
        pose: BoardPose,
        previous: BoardPose | None = None,
        excused: Collection[int] = (),
    ) -> Hints:
        """Hints from this frame's pose and the previous frame's (if any); the missing markers
        ``excused`` (a piece on the board may stand in front of them) do not count."""
        shift = 0.0
        if previous is not None and previous.game == pose.game:
            shift = pose.shift(previous)
        return cls(len(set(pose.markers_missing) - set(excused)), shift)


@dataclass(frozen=True, eq=False)
class SettleState:
    """The answer to one frame: ``kind`` (``moving``, ``occluded``, ``settled``, ``unchanged``),
    why (``reason``), the frame to read when ``settled``, how long the board has been still,
    the fraction of the image that changed since the still period began (the previous frame,
    while moving: ``motion``) and, when the board was judged, the fraction that differs from
    the last settled board (``change``)."""

    kind: str
    t: float
    reason: str = ""
    frame: np.ndarray | None = None
    still_for: float = 0.0
    motion: float = 0.0
    change: float = 0.0


@dataclass(frozen=True, eq=False)
class _Work:
    """A frame, small: its gain-normalised planes."""

    planes: tuple[np.ndarray, ...]


def _median(plane: np.ndarray) -> float:
    """The median of a uint8 image (from its histogram)."""
    counts = np.cumsum(cv2.calcHist([plane], [0], None, [256], [0, 256]).ravel())
    return float(np.searchsorted(counts, counts[-1] / 2.0))


class Settler:
    """The settle filter; feed it every frame with :meth:`push`."""

    def __init__(
        self,
        settle_time: float = 0.4,
        *,
        work_width: int = 160,
        level: float = 30.0,
        min_area: float = 0.001,
        max_shift_px: float = 1.5,
    ) -> None:
        self.settle_time = settle_time
        self.work_width = work_width
        self.level = level
        self.min_area = min_area
        self.max_shift_px = max_shift_px
        self.reset()

    def reset(self) -> None:
        """Forget everything (a new game, another board)."""
        self._shape: tuple[int, ...] = ()
        self._levels: tuple[float, ...] | None = None  # plane medians of the first frame
        self._anchor: _Work | None = None
        self._anchor_t = 0.0
        self._reference: _Work | None = None
        self._still = False
        self._judged = False
        self._visited = False  # something moved over the board since the last settled board

    def push(
        self, t: float, rectified: np.ndarray | None, hints: Hints | None = None
    ) -> SettleState:
        """Judge the frame captured at ``t`` s: its rectified board image (grey or BGR; ``None``
        when the board was not found) and what the locator says (:class:`Hints`)."""
        hints = hints or Hints()
        if rectified is None:
            self._anchor = None
            return SettleState(OCCLUDED, t, NO_BOARD)
        if rectified.shape != self._shape:
            self.reset()  # another board, or another resolution
            self._shape = rectified.shape
        work = self._prepare(rectified)
        anchor = self._anchor
        motion = 1.0 if anchor is None else float(self._changed(work, anchor).mean())
        hard = MARKERS_HIDDEN if hints.markers_missing > 0 else ""
        moved = hints.pose_shift_px > self.max_shift_px
        if hard and not moved and anchor is not None and motion <= self.min_area:
            # markers unread in a still picture: how long it has stayed still (a hand held
            # still, or a marker the detector no longer reads) lets the players be asked
            self._visited, self._still = True, False
            return SettleState(OCCLUDED, t, hard, still_for=t - self._anchor_t, motion=motion)
        if hard or moved or motion > self.min_area:
            # a hand that leaves no visible change must still be read once after it left (a
            # board moved in the image is followed by the pose: no visit)
            self._visited |= bool(hard) or (anchor is not None and motion > self.min_area)
            self._anchor, self._anchor_t, self._still = work, t, False
            if hard:
                return SettleState(OCCLUDED, t, hard, motion=motion)
            return SettleState(MOVING, t, BOARD_MOVED if moved else MOTION, motion=motion)
        if not self._still:
            self._still, self._judged = True, False
        still_for = t - self._anchor_t
        if not self.still_enough(still_for):
            return SettleState(MOVING, t, SETTLING, still_for=still_for, motion=motion)
        if self._judged:
            return SettleState(UNCHANGED, t, still_for=still_for, motion=motion)
        self._judged = True
        reference, self._reference = self._reference, work
        change = 1.0 if reference is None else float(self._changed(work, reference).mean())
        kind = SETTLED if change > self.min_area or self._visited else UNCHANGED
        self._visited = False
        frame = rectified if kind == SETTLED else None
        return SettleState(kind, t, frame=frame, still_for=still_for, motion=motion, change=change)

    def still_enough(self, still_for: float) -> bool:
        """Whether a picture still for ``still_for`` s has been still for the settle time."""
        return still_for >= self.settle_time - 1e-9

    # ----------------------------------------------------------------- image measures
    def _prepare(self, rectified: np.ndarray) -> _Work:
        h, w = rectified.shape[:2]
        size = (self.work_width, max(1, round(h * self.work_width / w)))
        # bilinear is 10x cheaper than INTER_AREA; the blur then averages the camera noise
        small = cv2.resize(rectified, size, interpolation=cv2.INTER_LINEAR)
        if small.ndim == 3 and small.shape[2] == 4:
            small = cv2.cvtColor(small, cv2.COLOR_BGRA2BGR)
        small = cv2.GaussianBlur(small, (3, 3), 0)
        planes = cv2.split(small)
        medians = [max(_median(p), 8.0) for p in planes]
        if self._levels is None:
            self._levels = tuple(medians)
        planes = [
            cv2.multiply(p, level / m, dtype=cv2.CV_8U)
            for p, level, m in zip(planes, self._levels, medians, strict=True)
        ]
        return _Work(tuple(planes))

    def _changed(self, a: _Work, b: _Work) -> np.ndarray:
        """Pixels (0/1) that differ by more than ``level`` in some colour plane, specks removed."""
        diff = cv2.absdiff(a.planes[0], b.planes[0])
        for pa, pb in zip(a.planes[1:], b.planes[1:], strict=True):
            diff = cv2.max(diff, cv2.absdiff(pa, pb))
        _, mask = cv2.threshold(diff, self.level, 1, cv2.THRESH_BINARY)
        return cv2.morphologyEx(mask, cv2.MORPH_OPEN, _KERNEL)
