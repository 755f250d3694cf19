"""Where a model looks: fixed-size patches of every cell, rectified through the board's pose.

A :class:`PatchSpec` (stored in the model file, so sampling and model always agree) says how big
a patch is on the board, how it is laid out (a square grid, or rings round the cell's centre),
how many pixels it has and on which planes above the playing surface it is taken (one 3-channel
view per plane: the tops of tall pieces stand out of the board, and each plane's view is sharp
for what lies at its height). :class:`PatchSampler` turns a frame and a
:class:`~vision.locate.BoardPose` into an ``N x C x px x px`` float32 array of reflectances
(0 = the markers' black, 1 = the mat's white paper, local light removed), one row per *target*:
a cell, or for Spectrangle one edge of a cell, turned so that the edge is at the bottom.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from engine.spectrangle import SIDES

from ..geometry import BoardGeometry
from ..locate import IMPOSSIBLE_VIEW, BoardNotFound, BoardPose
from ..readers.common import MatReference, Reference, Region, plane_pose
from ..view_cache import LastView

#: Spectrangle edges, in the order of a cell's targets (the engine's sides).
EDGES = SIDES


@dataclass(frozen=True)
class PatchSpec:
    """How a model sees its targets: ``kind`` ``square`` (a square of ``size_mm`` around each
    cell's centre), ``polar`` (the disc of diameter ``size_mm`` round each cell's centre, row
    ``r`` the ring at ``(r + 0.5) / px`` of its radius, column ``a`` the angle ``a / px`` of a
    turn: twice a square's steps outwards for the same pixels, where a round piece's size lies)
    or ``edge`` (each edge of a triangular cell at the bottom of a square of ``size_mm`` times
    the cell's side); ``px`` pixels a side; ``heights_mm`` the planes above the playing
    surface, one view (3 channels) each."""

    kind: str
    size_mm: float
    px: int
    heights_mm: tuple[float, ...] = (0.0,)

    @property
    def channels(self) -> int:
        """Channels of one patch (3 per plane)."""
        return 3 * len(self.heights_mm)

    def views(self, patches: np.ndarray) -> list[np.ndarray]:
        """The other views of ``patches`` (N x C x px x px) that a network fitted on this spec
        reads alike, because its training turned and mirrored them (``vision.train.fit``): a
        square patch turned by 90, 180 and 270 degrees; a polar patch too (its columns rolled
        by a quarter, a half and three quarters of a turn); an edge patch mirrored left to right
        (its edge stays at the bottom)."""
        if self.kind == "square":
            return [np.ascontiguousarray(np.rot90(patches, k, axes=(2, 3))) for k in (1, 2, 3)]
        if self.kind == "polar":
            return [np.roll(patches, k * self.px // 4, axis=3) for k in (1, 2, 3)]
        return [np.ascontiguousarray(patches[..., ::-1])]

    def middle(self, patches: np.ndarray) -> np.ndarray:
        """The middle of ``patches`` (N x C x px x px), where a target's own cell is and its
        neighbours are not: a square or edge patch's central half a side; a polar patch's inner
        half of its rings (the disc of half its diameter)."""
        px = self.px
        if self.kind == "polar":
            return patches[:, :, : px // 2]
        lo, hi = px // 4, px - px // 4
        return patches[:, :, lo:hi, lo:hi]

    def to_json(self) -> dict[str, Any]:
        """The spec as stored in a model file."""
        return {
            "kind": self.kind,
            "size_mm": self.size_mm,
            "px": self.px,
            "heights_mm": list(self.heights_mm),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> PatchSpec:
        """The spec of a model file."""
        return cls(
            str(obj["kind"]),
            float(obj["size_mm"]),
            int(obj["px"]),
            tuple(float(h) for h in obj.get("heights_mm", (0.0,))),
        )


@dataclass(frozen=True)
class Target:
    """One patch: ``cell`` (and ``part``, the edge for ``edge`` patches) and ``affine``, the 2x3
    map from patch coordinates (0..1 across and down) to board mm."""

    cell: str
    part: str
    affine: np.ndarray


def _square_targets(geometry: BoardGeometry, size_mm: float) -> list[Target]:
    out = []
    for cell in geometry.cells:
        cx, cy = cell.center
        h = size_mm / 2
        affine = np.array([[size_mm, 0.0, cx - h], [0.0, size_mm, cy - h]])
        out.append(Target(cell.name, "", affine))
    return out


def triangle_edge(polygon: np.ndarray, side: str) -> tuple[np.ndarray, np.ndarray]:
    """The end points of a triangular cell's ``left``, ``right`` or ``base`` edge (the spec:
    the base is the horizontal edge, left and right the slanted ones by their middles' x)."""
    i, j = _edge_ends(polygon, side)
    return polygon[i], polygon[j]


def _edge_ends(polygon: np.ndarray, side: str) -> tuple[int, int]:
    """The indices of :func:`triangle_edge`'s end points in ``polygon``."""
    edges = [(i, (i + 1) % 3) for i in range(3)]
    base = min(edges, key=lambda e: abs(polygon[e[0]][1] - polygon[e[1]][1]))
    slanted = sorted(
        (e for e in edges if e != base), key=lambda e: polygon[e[0]][0] + polygon[e[1]][0]
    )
    return {"base": base, "left": slanted[0], "right": slanted[1]}[side]


def _edge_targets(geometry: BoardGeometry, scale: float) -> list[Target]:
    """Each edge of each triangle, at the bottom of its patch, the opposite corner at the top,
    the cell filling ``1 / scale`` of the patch."""
    side = 1.0 / scale
    top = 0.5 - side * math.sqrt(3) / 4
    bottom = 0.5 + side * math.sqrt(3) / 4
    canon = np.float32([[0.5 - side / 2, bottom], [0.5 + side / 2, bottom], [0.5, top]])
    out = []
    for cell in geometry.cells:
        poly = np.asarray(cell.polygon, dtype=np.float64)
        for part in EDGES:
            i, j = _edge_ends(poly, part)
            a, b, c = poly[i], poly[j], poly[3 - i - j]
            # keep the patch unmirrored: the corner opposite the edge is on the left of a -> b
            # as the patch's apex is on the left of its bottom edge drawn left to right
            if (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]) > 0:
                a, b = b, a
            affine = cv2.getAffineTransform(canon, np.float32([a, b, c])).astype(np.float64)
            out.append(Target(cell.name, part, affine))
    return out


class PatchSampler:
    """Cuts every target's patch out of a frame (see the module docstring)."""

    def __init__(self, geometry: BoardGeometry, spec: PatchSpec) -> None:
        if spec.kind in ("square", "polar"):
            self.targets = _square_targets(geometry, spec.size_mm)
        elif spec.kind == "edge":
            self.targets = _edge_targets(geometry, spec.size_mm)
        else:
            raise ValueError(f"unknown patch kind {spec.kind!r}")
        self.geometry = geometry
        self.spec = spec
        self.surface_mm = geometry.board_height
        self.reference = MatReference(geometry)
        #: every patch pixel's centre in patch coordinates (0..1 across and down), row by row
        self.unit = polar_unit(spec.px) if spec.kind == "polar" else square_unit(spec.px)
        square = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]])
        #: board mm of every patch's corners (T x 4 x 2): a patch is mapped to the image through
        #: its corners (a homography per patch: the lens bends a patch too little to matter)
        self.corners = np.array([square @ t.affine.T for t in self.targets])
        self.centres = np.array([t.affine @ [0.5, 0.5, 1.0] for t in self.targets])
        #: the last view's patch points, one region per plane (:meth:`_regions`)
        self._view_regions: LastView[list[Region]] = LastView()

    @property
    def cells(self) -> tuple[str, ...]:
        """The cell of every target, in order."""
        return tuple(t.cell for t in self.targets)

    def measure(self, frame: np.ndarray, pose: BoardPose) -> Reference:
        """The frame's light, measured on the mat (pass it to :meth:`sample` to reuse it)."""
        return self.reference.measure(frame, pose)

    def sample(
        self,
        frame: np.ndarray,
        pose: BoardPose,
        reference: Reference | None = None,
        targets: Sequence[int] | None = None,
    ) -> np.ndarray:
        """Patches (``N x C x px x px`` float32 reflectance) of every target (or of the
        indices ``targets``) in ``frame`` (BGR) with the board at ``pose``."""
        ref = reference if reference is not None else self.measure(frame, pose)
        n = self.spec.px * self.spec.px
        idx = np.arange(len(self.targets)) if targets is None else np.asarray(targets, dtype=int)
        black, span = (level.astype(np.float32) for level in ref.levels(self.centres[idx]))
        views = []
        for region in self._regions(frame.shape, pose, idx):
            colours = region.sample(frame).reshape(len(idx), n, 3)
            refl = (colours - black[:, None, :]) / span[:, None, :]
            views.append(refl.reshape(len(idx), self.spec.px, self.spec.px, 3))
        patches = np.concatenate(views, axis=3).transpose(0, 3, 1, 2)
        return np.clip(patches, -0.5, 2.0).astype(np.float32)

    def _regions(self, shape: Sequence[int], pose: BoardPose, idx: np.ndarray) -> list[Region]:
        """Per plane of the spec's heights, the region of a frame of ``shape`` that samples
        every pixel of the patches of the targets ``idx`` at ``pose``, shrunk by
        :func:`_shrink`. The last view's are kept: a still board keeps its homography (the
        locator's deadband), so they are worked out again only when it moves or other targets
        are asked for."""
        key = (tuple(shape[:2]), pose.view_key(), idx.tobytes())
        return self._view_regions.get(key, lambda: self._project(shape, pose, idx))

    def _project(self, shape: Sequence[int], pose: BoardPose, idx: np.ndarray) -> list[Region]:
        """:meth:`_regions` worked out afresh."""
        corners = self.corners[idx].reshape(-1, 2)
        regions = []
        for height in self.spec.heights_mm:
            try:
                plane = plane_pose(pose, self.surface_mm + height)
            except ValueError as exc:  # the markers put the camera below the pieces' tops
                raise BoardNotFound(IMPOSSIBLE_VIEW, str(exc)) from None
            quads = plane.to_image(corners).reshape(len(idx), 4, 2)
            image_px = square_to_quads(quads, self.unit).reshape(-1, 2)
            regions.append(Region.around(shape, image_px, _shrink(image_px, self.spec.px)))
        return regions


def square_unit(px: int) -> np.ndarray:
    """The centres of a ``px`` x ``px`` grid's pixels in the unit square (px*px x 2), row by row."""
    u = (np.arange(px) + 0.5) / px
    gu, gv = np.meshgrid(u, u)
    return np.column_stack([gu.ravel(), gv.ravel()])


def polar_unit(px: int) -> np.ndarray:
    """A polar patch's pixels in the unit square (px*px x 2): row ``r`` the ring of radius
    ``(r + 0.5) / (2 px)`` round the centre, column ``a`` at the angle ``a / px`` of a turn."""
    radius = (np.arange(px) + 0.5) / (2 * px)
    angle = 2 * np.pi * np.arange(px) / px
    r, a = np.meshgrid(radius, angle, indexing="ij")
    return np.column_stack([0.5 + (r * np.cos(a)).ravel(), 0.5 + (r * np.sin(a)).ravel()])


def square_to_quads(quads: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Points (Q x K x 2) of the unit square's points ``unit`` (K x 2, 0..1) under the
    homography that takes the square's corners (0,0), (1,0), (1,1), (0,1) to each of ``quads``
    (Q x 4 x 2): the projective square-to-quadrilateral map in closed form (Heckbert)."""
    quads = np.asarray(quads, dtype=np.float64)
    x, y = quads[..., 0], quads[..., 1]
    sx = x[:, 0] - x[:, 1] + x[:, 2] - x[:, 3]
    sy = y[:, 0] - y[:, 1] + y[:, 2] - y[:, 3]
    dx1, dx2 = x[:, 1] - x[:, 2], x[:, 3] - x[:, 2]
    dy1, dy2 = y[:, 1] - y[:, 2], y[:, 3] - y[:, 2]
    den = dx1 * dy2 - dx2 * dy1
    den = np.where(np.abs(den) < 1e-12, 1e-12, den)
    g = (sx * dy2 - dx2 * sy) / den
    h = (dx1 * sy - sx * dy1) / den
    a = x[:, 1] - x[:, 0] + g * x[:, 1]
    b = x[:, 3] - x[:, 0] + h * x[:, 3]
    d = y[:, 1] - y[:, 0] + g * y[:, 1]
    e = y[:, 3] - y[:, 0] + h * y[:, 3]
    # the K points of every quad in float32: a hundredth of a pixel is plenty, and it halves
    # the time of the biggest boards' patches
    f32 = np.float32
    u, v = unit[:, 0][None].astype(f32), unit[:, 1][None].astype(f32)
    w = g[:, None].astype(f32) * u + h[:, None].astype(f32) * v + f32(1.0)
    px = (a[:, None].astype(f32) * u + b[:, None].astype(f32) * v + x[:, :1].astype(f32)) / w
    py = (d[:, None].astype(f32) * u + e[:, None].astype(f32) * v + y[:, :1].astype(f32)) / w
    return np.stack([px, py], axis=2)


def _shrink(image_px: np.ndarray, px: int) -> int:
    """The integer factor to shrink the frame by before sampling, so that neighbouring patch
    pixels are about 1.5 frame pixels apart (less aliasing and noise when the board is close):
    the larger of a row's first step and a column's (a polar patch: the step outwards)."""
    step = np.linalg.norm(image_px[1] - image_px[0])
    if px > 1 and len(image_px) > px:
        step = max(step, float(np.linalg.norm(image_px[px] - image_px[0])))
    return max(1, int(step / 1.5))
