"""Which of the mat's markers a piece standing on the board hides from the camera.

A tall piece (a Gobblet piece) on a cell near the board's edge can stand between a tilted camera
and a marker on the mat behind it: the marker is not found, and the settle filter, which takes a
marker seen steadily and now missing for a hand, would wait for ever. The pose knows where the
camera is (:meth:`~vision.locate.BoardPose.project_above`), so a piece's outline in the image,
and the markers it covers, follow from its footprint and its height.

A piece is a cylinder of its box's diameter and height (``pieces.sizes`` of the geometry file;
games without standing pieces have none), standing on the playing surface up to
``offset_mm`` off its cell's centre. A marker counts as covered when that outline overlaps the
marker grown by its printed quiet zone: the detector needs the white around the black border.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from .geometry import BoardGeometry
from .locate import BoardPose
from .mat import print_layout

#: How far off its cell's centre a piece may stand (mm), as players put pieces down.
OFFSET_MM = 4.0
#: Points on a footprint's rim.
_RIM = 24


@dataclass(frozen=True)
class Standing:
    """A piece standing on a cell: its footprint's ``diameter`` and its ``height`` (mm)."""

    diameter: float
    height: float


def standing_sizes(geometry: BoardGeometry) -> dict[int, Standing]:
    """The standing pieces of the game by size (``pieces.sizes`` of the geometry file; empty
    for flat pieces)."""
    sizes: Mapping[str, Any] = geometry.pieces.get("sizes", {})
    return {int(k): Standing(float(v["diameter"]), float(v["height"])) for k, v in sizes.items()}


def _marker_areas(geometry: BoardGeometry, pose: BoardPose) -> dict[int, np.ndarray]:
    """Each marker with its quiet zone, in the image (4x2 px, float32)."""
    quiet = float(print_layout(geometry)["quiet_zone"])
    areas = {}
    for marker in geometry.markers:
        corners = marker.corners().astype(np.float64)
        centre = np.asarray(marker.center)
        grown = centre + (corners - centre) * (marker.size / 2 + quiet) / (marker.size / 2)
        areas[marker.id] = pose.to_image(grown).astype(np.float32)
    return areas


def markers_covered(
    pose: BoardPose,
    pieces: Iterable[tuple[str, Standing]],
    *,
    offset_mm: float = OFFSET_MM,
) -> frozenset[int]:
    """The markers that ``pieces`` (cell name, piece) standing on the board cover in the
    image of ``pose``; none when the pose puts the camera below a piece (not a real view)."""
    geometry = pose.geometry
    cells = {c.name: c for c in geometry.cells}
    base = geometry.board_height
    pieces = list(pieces)
    if not pieces:
        return frozenset()
    angles = np.linspace(0.0, 2.0 * np.pi, _RIM, endpoint=False)
    circle = np.column_stack([np.cos(angles), np.sin(angles)])
    points, heights = [], []
    for name, piece in pieces:
        rim = np.asarray(cells[name].center) + circle * (piece.diameter / 2 + offset_mm)
        points += [rim, rim]
        heights.append(np.repeat([base, base + piece.height], _RIM))
    try:  # every piece's foot and top rims at once: the camera is worked out once
        image = pose.project_above(np.concatenate(points), np.concatenate(heights))
    except ValueError:
        return frozenset()
    rims = image.astype(np.float32).reshape(len(pieces), 2 * _RIM, 2)
    outlines = [cv2.convexHull(rim) for rim in rims]
    covered = set()
    for marker_id, area in _marker_areas(geometry, pose).items():
        for outline in outlines:
            overlap, _ = cv2.intersectConvexConvex(area, outline)
            if overlap > 0.0:
                covered.add(marker_id)
                break
    return frozenset(covered)


def markers_coverable(pose: BoardPose, *, offset_mm: float = OFFSET_MM) -> frozenset[int]:
    """The markers that the game's tallest piece, standing on some cell, would cover in the
    image of ``pose``: only these may be missing for a piece rather than a hand."""
    sizes = standing_sizes(pose.geometry)
    if not sizes:
        return frozenset()
    tallest = max(sizes.values(), key=lambda s: (s.height, s.diameter))
    cells = [(c.name, tallest) for c in pose.geometry.cells]
    return markers_covered(pose, cells, offset_mm=offset_mm)


__all__ = ["OFFSET_MM", "Standing", "markers_coverable", "markers_covered", "standing_sizes"]
