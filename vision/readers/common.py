"""Helpers the readers share: sampling through a pose, the mat's white and black references,
and the observation of per-cell probabilities.

Readers never warp the whole frame: they sample the points they need through the pose with one
``cv2.remap`` call (:func:`sample_image`, :class:`Region`). Colours are made independent of the
light with :class:`MatReference`: the mat's white paper around every marker and the markers'
black borders are known references in every frame, so ``Reference.normalise`` turns camera BGR
into reflectance (0 = marker black, 1 = paper white) with the white balance and the light's
fall-off across the board removed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from engine import Observation
from engine.core import Content

from ..geometry import BoardGeometry
from ..locate import BoardPose
from ..view_cache import LastView

#: Probability floor and ceiling of a reader's answers: a camera is never absolutely sure.
MIN_PROBABILITY = 1e-4

Point = tuple[float, float]
#: Points per row of the maps :func:`sample_image` hands to ``cv2.remap``.
REMAP_WIDTH = 4096


# --------------------------------------------------------------------------- sampling
@lru_cache(maxsize=16)
def plane_pose(pose: BoardPose, height_mm: float) -> BoardPose:
    """``pose`` for the plane ``height_mm`` above the markers' plane (itself when 0); cached,
    as every reader samples the same few planes of each frame's pose."""
    return pose.lifted(height_mm) if height_mm else pose


def sample_image(frame: np.ndarray, image_px: np.ndarray) -> np.ndarray:
    """Bilinear colours (Nx3 float32, or N for a grey frame) of ``frame`` at image points
    (Nx2 px); points outside the frame take the nearest border pixel."""
    pts = np.asarray(image_px, dtype=np.float32).reshape(-1, 2)
    if len(pts) == 0:
        return np.zeros((0, *frame.shape[2:]), dtype=np.float32)
    return _remap(frame, _remap_map(pts), len(pts))


def _remap_map(pts: np.ndarray) -> np.ndarray:
    """Points (Nx2 float32) laid out as a ``cv2.remap`` map: maps of fewer than 32767 columns,
    so many points go in rows of :data:`REMAP_WIDTH` (the last row padded)."""
    n = len(pts)
    width = min(n, REMAP_WIDTH)
    rows = -(-n // width)
    grid = np.zeros((rows * width, 2), dtype=np.float32)
    grid[:n] = pts
    return grid.reshape(rows, width, 2)


def _remap(image: np.ndarray, grid: np.ndarray, n: int) -> np.ndarray:
    """The first ``n`` bilinear colours (float32) of ``image`` at the map ``grid``."""
    out = cv2.remap(image, grid, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out.reshape((-1, *image.shape[2:]))[:n].astype(np.float32)


@dataclass(frozen=True, eq=False)
class Region:
    """Where a set of frame points is sampled from: a crop of the frame (``box``: x0, y0, x1,
    y1 px) shrunk by an integer ``factor`` (each pixel the mean of a ``factor`` x ``factor``
    block: less sensor noise, cheap to sample), and the points laid out in the shrunk crop as a
    ``cv2.remap`` map. Worked out once for a view of the board, it samples every frame of that
    view."""

    box: tuple[int, int, int, int]
    factor: int
    grid: np.ndarray
    points: int

    @classmethod
    def around(
        cls,
        frame_shape: Sequence[int],
        image_px: np.ndarray,
        factor: int = 2,
        margin: int = 4,
    ) -> Region:
        """The smallest crop (grown by ``margin`` px, within a frame of ``frame_shape``)
        holding ``image_px`` (Nx2 px, N >= 1)."""
        h, w = frame_shape[:2]
        pts = np.asarray(image_px)
        # per column: numpy reduces an N x 2 array along axis 0 some 15 times slower
        lo = np.floor([pts[:, 0].min(), pts[:, 1].min()]) - margin
        hi = np.ceil([pts[:, 0].max(), pts[:, 1].max()]) + margin
        x0, y0 = (int(v) for v in np.clip(lo, 0, (w - 1, h - 1)))
        x1, y1 = (int(v) for v in np.clip(hi, (x0 + factor, y0 + factor), (w, h)))
        x1 -= (x1 - x0) % factor
        y1 -= (y1 - y0) % factor
        local = (np.asarray(pts, dtype=np.float64) - (x0, y0) + 0.5) / factor - 0.5
        grid = _remap_map(local.astype(np.float32).reshape(-1, 2))
        return cls((x0, y0, x1, y1), factor, grid, len(local))

    def sample(self, frame: np.ndarray) -> np.ndarray:
        """Colours (Nx3 float32) of ``frame`` at the region's points."""
        x0, y0, x1, y1 = self.box
        crop = frame[y0:y1, x0:x1]
        if self.factor > 1:
            size = ((x1 - x0) // self.factor, (y1 - y0) // self.factor)
            crop = cv2.resize(crop, size, interpolation=cv2.INTER_AREA)
        return _remap(crop, self.grid, self.points)


def in_frame(image_px: np.ndarray, frame_shape: Sequence[int], margin: float = 1.0) -> np.ndarray:
    """Which image points (Nx2 px) lie inside the frame, ``margin`` px from its edges."""
    h, w = frame_shape[:2]
    x, y = image_px[:, 0], image_px[:, 1]
    return (x >= margin) & (y >= margin) & (x <= w - 1 - margin) & (y <= h - 1 - margin)


@dataclass(frozen=True, eq=False)
class PointSet:
    """Board points (``points`` Nx2 mm) at ``height_mm`` above the markers' plane, in groups:
    point ``i`` belongs to group ``owner[i]``; group ``g`` is ``points[starts[g]:starts[g+1]]``."""

    points: np.ndarray
    owner: np.ndarray
    starts: np.ndarray
    height_mm: float = 0.0

    @classmethod
    def from_groups(cls, groups: Sequence[np.ndarray], height_mm: float = 0.0) -> PointSet:
        """One group per array of points (each Kx2 mm, K >= 1)."""
        sizes = np.array([len(g) for g in groups], dtype=np.int64)
        if np.any(sizes == 0):
            raise ValueError("every group needs at least one point")
        starts = np.concatenate([[0], np.cumsum(sizes)])
        points = np.concatenate([np.asarray(g, dtype=np.float64).reshape(-1, 2) for g in groups])
        owner = np.repeat(np.arange(len(groups)), sizes)
        return cls(points, owner, starts, float(height_mm))

    @property
    def groups(self) -> int:
        """How many groups."""
        return len(self.starts) - 1

    def image_points(self, pose: BoardPose) -> np.ndarray:
        """Where the points are in the image (Nx2 px)."""
        return plane_pose(pose, self.height_mm).to_image(self.points)

    def sample(self, frame: np.ndarray, pose: BoardPose) -> np.ndarray:
        """Colours of ``frame`` at every point (Nx3 float32, BGR)."""
        return sample_image(frame, self.image_points(pose))

    def group_reduce(self, values: np.ndarray, ufunc: np.ufunc = np.add) -> np.ndarray:
        """``ufunc.reduceat`` of per-point values over each group (G x ...)."""
        return ufunc.reduceat(values, self.starts[:-1], axis=0)

    def group_median(self, values: np.ndarray) -> np.ndarray:
        """Median of per-point values over each group (G x ...)."""
        sizes = np.diff(self.starts)
        if np.all(sizes == sizes[0]):
            shaped = np.asarray(values).reshape((self.groups, int(sizes[0]), *np.shape(values)[1:]))
            return np.median(shaped, axis=1)
        return np.stack(
            [
                np.median(values[a:b], axis=0)
                for a, b in zip(self.starts[:-1], self.starts[1:], strict=True)
            ]
        )


def ring(centre: Point, half_side: float, step_mm: float) -> np.ndarray:
    """Points (Kx2 mm) every ~``step_mm`` along the axis-aligned square of half side
    ``half_side`` around ``centre``."""
    n = max(1, round(2 * half_side / step_mm))
    t = (np.arange(n) + 0.5) / n * 2 * half_side - half_side
    h = np.full(n, half_side)
    side = np.concatenate(
        [
            np.column_stack([t, -h]),
            np.column_stack([h, t]),
            np.column_stack([-t, h]),
            np.column_stack([-h, -t]),
        ]
    )
    return side + np.asarray(centre, dtype=np.float64)


# --------------------------------------------------------------------------- references
@dataclass(frozen=True)
class Reference:
    """The light of one frame, measured on the mat.

    ``white``/``black``: BGR of the paper and of the markers' print (medians over the markers
    that were usable, ``markers``). ``noise``: the camera's pixel noise in reflectance units
    (robust spread of the paper's pixels). ``field``: per channel, the coefficients of
    ``log(white) = a + b x + c y`` over the board (mm), so that :meth:`white_at` follows the
    light's fall-off from one side of the board to the other.
    """

    white: np.ndarray
    black: np.ndarray
    field: np.ndarray
    markers: tuple[int, ...]
    noise: float = 0.01

    def white_at(self, points_mm: np.ndarray) -> np.ndarray:
        """The paper's BGR the light would give at board points (Nx2 mm)."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        design = np.column_stack([np.ones(len(pts)), pts])
        return np.exp(design @ self.field)

    def normalise(
        self,
        colours: np.ndarray,
        points_mm: np.ndarray | None = None,
        owner: np.ndarray | None = None,
    ) -> np.ndarray:
        """Camera BGR (Nx3) -> reflectance, 0 at the markers' black and 1 at the paper's white
        (per channel: white balance and exposure removed; with ``points_mm``, the local white
        of :meth:`white_at`, so uneven light is removed too). With ``owner``, ``points_mm``
        are fewer points (e.g. cell centres) and colour ``i`` takes the white of
        ``points_mm[owner[i]]``: the light varies slowly, so this is as good and cheaper."""
        black, span = self.levels(points_mm)
        if owner is not None and points_mm is not None:
            black, span = black[owner], span[owner]
        return (np.asarray(colours, dtype=np.float64) - black) / span

    def levels(self, points_mm: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The camera BGR of reflectance 0 and the span up to reflectance 1: for the whole
        frame (3 each), or where the light falls on board points (Nx2 mm; N x 3 each)."""
        white = self.white if points_mm is None else self.white_at(points_mm)
        black = np.minimum(self.black, 0.5 * white)
        return black, np.maximum(white - black, 1.0)


class MatReference:
    """Measures a frame's :class:`Reference` on the white quiet zones around the markers (paper)
    and on the markers' black outer border (print)."""

    #: A marker is usable when its white ring is at least this much brighter than its border.
    MIN_CONTRAST = 2.0

    def __init__(self, geometry: BoardGeometry, step_mm: float = 1.5) -> None:
        quiet = float(geometry.extra.get("print", {}).get("quiet_zone", 4.0))
        self.geometry = geometry
        self.ids = tuple(m.id for m in geometry.markers)
        whites, blacks = [], []
        for m in geometry.markers:
            module = m.size / 6.0  # 4x4 data bits + a one-module black border
            rot = np.radians(m.rotation_deg)
            turn = np.array([[np.cos(rot), -np.sin(rot)], [np.sin(rot), np.cos(rot)]])
            centre = np.asarray(m.center)
            white = ring((0.0, 0.0), m.size / 2 + min(quiet / 2, 2.0), step_mm)
            black = ring((0.0, 0.0), m.size / 2 - module / 2, step_mm)
            whites.append(white @ turn.T + centre)
            blacks.append(black @ turn.T + centre)
        self.white_points = PointSet.from_groups(whites)
        self.black_points = PointSet.from_groups(blacks)
        self.centres = np.array([m.center for m in geometry.markers], dtype=np.float64)
        #: the last view's rings in the image: (white px, black px)
        self._view_rings: LastView[tuple[np.ndarray, np.ndarray]] = LastView()

    def _rings_in(self, pose: BoardPose) -> tuple[np.ndarray, np.ndarray]:
        """The white and the black rings' image points at ``pose``; the last pose's are kept
        while a still board keeps its homography (the locator's deadband)."""
        return self._view_rings.get(
            pose.view_key(),
            lambda: (self.white_points.image_points(pose), self.black_points.image_points(pose)),
        )

    def measure(self, frame: np.ndarray, pose: BoardPose) -> Reference:
        """The frame's references, from the markers detected in it (all of them when the pose
        is a tracked one with none detected) whose rings have paper-vs-print contrast."""
        ipx_w, ipx_b = self._rings_in(pose)
        paper = sample_image(frame, ipx_w)
        w = self.white_points.group_median(paper)
        b = self.black_points.group_median(sample_image(frame, ipx_b))
        seen = set(pose.markers_seen) or set(self.ids)
        inside = self.white_points.group_reduce(
            in_frame(ipx_w, frame.shape).astype(np.int64), np.minimum
        ).astype(bool)
        contrast = w.mean(axis=1) / np.maximum(b.mean(axis=1), 1.0)
        ok = (
            np.array([i in seen for i in self.ids], dtype=bool)
            & inside
            & (contrast >= self.MIN_CONTRAST)
        )
        if not ok.any():  # no usable marker: assume the brightest ring is paper
            ok = w.mean(axis=1) >= w.mean(axis=1).max()
        white = np.median(w[ok], axis=0)
        black = np.median(b[ok], axis=0)
        field = _light_field(self.centres[ok], np.maximum(w[ok], 1.0))
        used = tuple(i for i, k in zip(self.ids, ok, strict=True) if k)
        return Reference(white, black, field, used, self._noise(paper, ok, white - black))

    def _noise(self, paper: np.ndarray, ok: np.ndarray, span: np.ndarray) -> float:
        """Median absolute deviation of the usable white rings' pixels (x 1.48: a Gaussian's
        sigma), in reflectance units."""
        pts = self.white_points
        keep = ok[pts.owner]
        dev = np.abs(paper - pts.group_median(paper)[pts.owner]) / np.maximum(span, 1.0)
        return float(1.48 * np.median(dev[keep])) if keep.any() else 0.01


def _light_field(centres: np.ndarray, whites: np.ndarray) -> np.ndarray:
    """Least-squares ``log(white) = a + b x + c y`` per channel (3x3); flat when the markers
    do not span the board (fewer than 3 or collinear)."""
    logs = np.log(whites)
    flat = np.zeros((3, 3))
    flat[0] = np.median(logs, axis=0)
    if len(centres) < 3:
        return flat
    design = np.column_stack([np.ones(len(centres)), centres])
    if np.linalg.matrix_rank(design) < 3:
        return flat
    coef, *_ = np.linalg.lstsq(design, logs, rcond=None)
    return coef


# --------------------------------------------------------------------------- probabilities
def bounded(probs: np.ndarray, floor: float = MIN_PROBABILITY) -> np.ndarray:
    """Probabilities (N x K) with every entry at least ``floor``, rows summing to 1."""
    p = np.maximum(np.asarray(probs, dtype=np.float64), floor)
    return p / p.sum(axis=-1, keepdims=True)


def observation(
    game: str,
    names: Sequence[str],
    classes: Sequence[Content],
    probs: np.ndarray,
    hidden: Iterable[str] = (),
    *,
    occluded: bool = False,
    best: Sequence[int] | None = None,
) -> Observation:
    """The :class:`Observation` of per-cell class probabilities (``probs`` N x K, rows in
    ``names`` order, columns in ``classes`` order): each visible cell's most likely class (or
    the column ``best`` gives it), its probabilities and confidence; ``hidden`` cells are left
    out (``partial``)."""
    hidden = set(hidden)
    p = bounded(probs)
    rows = p.tolist()
    best = p.argmax(axis=1).tolist() if best is None else [int(k) for k in best]
    cells: dict[str, Content] = {}
    confidence: dict[str, float] = {}
    probabilities: dict[str, Mapping[Content, float]] = {}
    for name, row, k in zip(names, rows, best, strict=True):
        if name in hidden:
            continue
        cells[name] = classes[k]
        confidence[name] = row[k]
        probabilities[name] = dict(zip(classes, row, strict=True))
    return Observation(
        game=game,
        cells=cells,
        partial=bool(hidden),
        occluded=occluded or bool(hidden),
        confidence=confidence,
        probabilities=probabilities,
    )
