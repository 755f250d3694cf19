"""Gobsmacked: each hole of the upright board is empty or holds a token showing one motif.

The camera faces the board. Every hole is sampled on rings around its centre, on the plane of
the token faces (``pieces.thickness`` in front of the board's face), plus one ring on the board's
face around the hole: the local light reference. Each point becomes one of five *kinds* from its
lightness relative to that ring and its chroma: dark (a motif's black, or the empty hole's
depth), face grey, white, red, or *other* (skin, a sleeve, anything no token shows).

A token's motif is round or square, but its rotation is unknown: so each ring is summarised by
the share of each kind on it, which does not depend on the rotation. Every class has an expected
profile of these shares, drawn from the geometry's ``pieces.motif`` (coverage, shape, colour) with
the token a little off-centre; a hole's score is how much of it matches the class's profile.
"Other" points match no class: a hand over a hole makes it unreadable. See
``docs/vision/readers.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from engine import Observation
from engine.core import Content

from ..geometry import BoardGeometry
from ..locate import BoardPose
from . import Reader
from .common import (
    MatReference,
    PointSet,
    Region,
    find_occlusion,
    grid_neighbours,
    hex_bgr,
    observation,
    softmax,
)

#: Point kinds, in the order of the profiles' columns.
DARK, GREY, WHITE, RED, OTHER = range(5)
KINDS = 5
#: Radii (fractions of the token's radius) of the sampled rings, and points per ring.
RINGS = (0.0, 0.15, 0.3, 0.42, 0.5, 0.6, 0.68, 0.76, 0.84, 0.9)
RING_POINTS = (1, 8, 16, 24, 24, 32, 32, 40, 40, 48)


def _lightness_chroma(refl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per point: lightness (N) and chroma ``(b - g, r - g) / lightness`` (N x 2)."""
    light = np.maximum(refl.mean(axis=1), 0.02)
    d = np.column_stack([refl[:, 0] - refl[:, 1], refl[:, 2] - refl[:, 1]])
    return light, d / light[:, None]


class GobsmackedReader(Reader):
    """Reads every hole of a Gobsmacked board: empty or one of the geometry's token kinds.

    Options: ``sharpness`` (how fast probabilities follow the scores, 30), ``readable``
    (best score below which a hole cannot be read, 0.7), ``offset_mm`` (how far off its hole's
    centre a token may sit, 1.5).
    """

    games = ("gobsmacked",)

    def __init__(
        self,
        geometry: BoardGeometry,
        *,
        sharpness: float = 30.0,
        readable: float = 0.7,
        offset_mm: float = 1.5,
        **options: Any,
    ) -> None:
        super().__init__(geometry, **options)
        spec = geometry.pieces
        self.radius = float(spec.get("token_diameter", 30.0)) / 2
        self.sharpness = sharpness
        self.readable = readable
        motif = spec["motif"]
        self.classes: tuple[Content, ...] = (None, *sorted(motif["kinds"]))
        self.names = geometry.cell_names
        centres = np.array([c.center for c in geometry.cells])
        ring = np.concatenate(
            [_ring(r * self.radius, n) for r, n in zip(RINGS, RING_POINTS, strict=True)]
        )
        self.ring_of = np.repeat(np.arange(len(RINGS)), RING_POINTS)
        self.faces = PointSet.from_groups(
            [c + ring for c in centres], float(spec.get("thickness", 0.0))
        )
        pitch = _pitch(centres)
        hole = _hole_radius(geometry)
        around = min(hole + 2.5, pitch / 2 - 0.5)
        self.board = PointSet.from_groups([c + _ring(around, 32) for c in centres])
        self.neighbours = grid_neighbours(self.names, centres, pitch)
        self.mat = MatReference(geometry)
        look = geometry.extra.get("look", {})
        colours = look.get("pieces", {})
        board_light = _lightness_chroma(hex_bgr(look.get("board", "#2e6fa8"))[None] / 255)[0][0]
        #: expected lightness of each kind relative to the board's face (learned by calibrate)
        self.levels = {
            DARK: float(hex_bgr(look.get("hole", "#10161c")).mean() / 255 / board_light),
            GREY: float(hex_bgr(colours.get("face", "#8a8a88")).mean() / 255 / board_light),
            WHITE: float(hex_bgr(colours.get("white", "#f2f2ee")).mean() / 255 / board_light),
        }
        _, red_chroma = _lightness_chroma(
            hex_bgr(colours.get("red", "#c8262a"))[None] / 255
        )
        self.red = red_chroma[0]
        self.profiles = np.stack([_profile(c, motif, self.radius, offset_mm) for c in self.classes])

    # ----------------------------------------------------------------- reading
    def read(self, frame: np.ndarray, pose: BoardPose) -> Observation:
        """Every visible hole's content, with probabilities; hands and objects left out."""
        kinds = self._kinds(frame, pose)
        shares = self._ring_shares(kinds)
        scores = self._scores(shares)
        foreign = (kinds == OTHER).reshape(len(self.names), -1).mean(axis=1)
        best = scores.max(axis=1)
        covered = np.where(best < self.readable, 1.0, foreign)
        occlusion = find_occlusion(
            self.names, covered, neighbours=self.neighbours, hide_at=0.2, grow_at=0.08
        )
        return observation(
            self.game,
            self.names,
            self.classes,
            softmax(self.sharpness * scores),
            occlusion.hidden,
            occluded=occlusion.occluded,
        )

    def _kinds(self, frame: np.ndarray, pose: BoardPose) -> np.ndarray:
        """The kind of every sample point (N), judged against its hole's board ring."""
        ref = self.mat.measure(frame, pose)
        faces_px = self.faces.image_points(pose)
        board_px = self.board.image_points(pose)
        region = Region.around(frame, np.vstack([faces_px, board_px]))
        faces = ref.normalise(region.sample(faces_px))
        board = ref.normalise(region.sample(board_px))
        board_light = self.board.group_median(_lightness_chroma(board)[0])
        light, chroma = _lightness_chroma(faces)
        ratio = light / np.maximum(board_light[self.faces.owner], 0.02)
        noise = max(ref.noise, 0.01)
        neutral = np.linalg.norm(chroma, axis=1) <= np.maximum(0.15, 4 * noise / light)
        red_t = chroma @ self.red / float(self.red @ self.red)
        red_off = np.abs(chroma @ np.array([-self.red[1], self.red[0]])) / float(
            self.red @ self.red
        )
        red = (red_t >= 0.4) & (red_off <= 0.35)
        dark_grey = math.sqrt(self.levels[DARK] * self.levels[GREY])
        grey_white = math.sqrt(self.levels[GREY] * self.levels[WHITE])
        kinds = np.full(len(light), OTHER)
        dark = ratio < dark_grey
        kinds[dark] = DARK  # too dark for its colour to count
        kinds[~dark & neutral & (ratio < grey_white)] = GREY
        kinds[~dark & neutral & (ratio >= grey_white)] = WHITE
        kinds[~dark & red] = RED
        return kinds

    def _ring_shares(self, kinds: np.ndarray) -> np.ndarray:
        """Per hole and ring, the share of each kind (G x rings x kinds)."""
        g = len(self.names)
        onehot = np.zeros((g, len(kinds) // g, KINDS))
        onehot.reshape(-1, KINDS)[np.arange(len(kinds)), kinds] = 1.0
        sums = np.stack(
            [onehot[:, self.ring_of == j].sum(axis=1) for j in range(len(RINGS))], axis=1
        )
        return sums / np.asarray(RING_POINTS, dtype=np.float64)[None, :, None]

    def _scores(self, shares: np.ndarray) -> np.ndarray:
        """Per hole and class (G x classes), the share of the hole's points that fit the
        class's expected ring profile (1 - total variation, rings weighted by points)."""
        weights = np.asarray(RING_POINTS, dtype=np.float64)
        weights /= weights.sum()
        diff = np.abs(shares[:, None] - self.profiles[None]).sum(axis=3) / 2
        return 1.0 - (diff * weights).sum(axis=2)

    # ----------------------------------------------------------------- calibration
    def calibrate(self, frame: np.ndarray, pose: BoardPose, known: Mapping[str, Content]) -> None:
        """Learn the lightness of the empty holes, the token faces and the white motifs
        relative to the board's face, from the holes of ``known``."""
        ref = self.mat.measure(frame, pose)
        faces = ref.normalise(self.faces.sample(frame, pose))
        board = ref.normalise(self.board.sample(frame, pose))
        board_light = self.board.group_median(_lightness_chroma(board)[0])
        ratio = _lightness_chroma(faces)[0] / np.maximum(board_light[self.faces.owner], 0.02)
        ratio = ratio.reshape(len(self.names), -1)
        outer = self.ring_of >= len(RINGS) - 2
        inner = self.ring_of <= 2
        samples: dict[int, list[float]] = {DARK: [], GREY: [], WHITE: []}
        for name, content in known.items():
            if name not in self.names:
                continue
            row = ratio[self.names.index(name)]
            if content is None:
                samples[DARK].append(float(np.median(row)))
            else:
                samples[GREY].append(float(np.median(row[outer])))
                if str(content).startswith("white"):
                    samples[WHITE].append(float(np.median(row[inner])))
        for kind, values in samples.items():
            if values:
                self.levels[kind] = 0.5 * self.levels[kind] + 0.5 * float(np.median(values))


def _ring(radius: float, count: int) -> np.ndarray:
    """``count`` points (count x 2 mm) evenly on a circle of ``radius`` about the origin."""
    if count == 1 or radius == 0:
        return np.zeros((count, 2))
    a = (np.arange(count) + 0.5) * 2 * np.pi / count
    return radius * np.column_stack([np.cos(a), np.sin(a)])


def _pitch(centres: np.ndarray) -> float:
    """The smallest distance between two hole centres (mm)."""
    d = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    return float(d[d > 0].min())


def _hole_radius(geometry: BoardGeometry) -> float:
    """A hole's radius (mm), from its polygon."""
    cell = geometry.cells[0]
    pts = np.asarray(cell.polygon, dtype=np.float64)
    return float(np.linalg.norm(pts - pts.mean(axis=0), axis=1).mean())


def _profile(
    content: Content, motif: Mapping[str, Any], radius: float, offset: float
) -> np.ndarray:
    """The expected share of each kind on each ring (rings x kinds) for a hole holding
    ``content`` (``None``: empty), averaged over rotations and over centre offsets up to
    ``offset`` mm."""
    if content is None:
        out = np.zeros((len(RINGS), KINDS))
        out[:, DARK] = 1.0
        return out
    kind = motif["kinds"][content]
    area = float(motif.get("coverage", 0.6)) * math.pi * radius**2
    colour = {"black": DARK, "white": WHITE, "red": RED}.get(kind["colour"])
    shifts = [(0.0, 0.0)] + [
        (offset * math.cos(a), offset * math.sin(a))
        for a in np.linspace(0, 2 * math.pi, 8, endpoint=False)
    ]
    total = np.zeros((len(RINGS), KINDS))
    for turn in np.linspace(0, math.pi / 2, 6, endpoint=False):
        rot = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
        for dx, dy in shifts:
            for j, r in enumerate(RINGS):
                pts = _ring(r * radius, 90) @ rot.T + (dx, dy)
                x, y = pts[:, 0], pts[:, 1]
                kinds = _motif_kinds(kind["shape"], colour, area, x, y)
                total[j] += np.bincount(kinds, minlength=KINDS) / len(kinds)
    return total / total[:, :].sum(axis=1, keepdims=True)


def _motif_kinds(
    shape: str, colour: int | None, area: float, x: np.ndarray, y: np.ndarray
) -> np.ndarray:
    """The kind of each token-face point (mm, motif frame) for one motif."""
    kinds = np.full(len(x), GREY)
    r = np.hypot(x, y)
    if shape == "circle":
        kinds[r <= math.sqrt(area / math.pi)] = colour
    elif shape == "square":
        half = math.sqrt(area) / 2
        kinds[(np.abs(x) <= half) & (np.abs(y) <= half)] = colour
    elif shape == "circle-in-square":
        half, stroke = math.sqrt(area) / 2, 1.6
        box = np.maximum(np.abs(x), np.abs(y))
        kinds[(box <= half) & (box >= half - stroke)] = RED
        kinds[(r <= half - 2.6) & (r >= half - 2.6 - stroke)] = RED
    else:  # a shapeless blob, half black, half white: a disc of the same area, split
        inside = r <= math.sqrt(area / math.pi)
        kinds[inside & (y < 0)] = DARK
        kinds[inside & (y >= 0)] = WHITE
    return kinds
