"""Gobsmacked: each hole of the upright board is empty or holds a token showing one motif.

The camera faces the board. Every hole is sampled on a polar grid (radii x angles) on the plane
of the token faces (``pieces.thickness`` in front of the board's face), plus a ring on the
board's face around it; the board's frame around the holes is sampled too (hands, sleeves).
Colours become reflectances against the mat's paper and marker black (:class:`MatReference`).
Each point is then judged against its own token's face (the median of the hole's outer
annulus, tilted by the light's slope across the token): darker (black ink), lighter (white
ink), in the red's hue, or bare face.

The pose can be a few millimetres off (lens distortion) and tokens sit loosely: a first pass
finds the centre of every plain black or white motif and the grids are sampled again there.

Per hole, five features, each a ratio or a share, so that the light's level and colour cancel:

* ``presence``: log of the lightness of the outer annulus (a token's bare grey face, or an
  empty hole's dark depth) over the board's face around the hole;
* ``ink``: the share of the inner face that is black or white ink;
* ``balance``: the white share of that ink (0 black, 1 white, about half for the colour joker);
* ``red``: the share of the inner face in the red's hue (the shape joker's outlines);
* ``square``: the 4th angular harmonic (mm) of how far the motif reaches out along every ray:
  about 0 for a circle, large for a square, whatever the token's rotation.

Every class's expected features come from the geometry's ``pieces.motif`` and ``look`` colours
(the ideal motif drawn on the same polar grid); :meth:`GobsmackedReader.calibrate` moves them to
what known holes look like in the real light. Probabilities are a softmax of Gaussian
log-likelihoods. Points in no token's or board's colour (skin, a sleeve) hide the holes they
cover; next to them, holes that fit no class or look like a finger across a hole are hidden
too; anything foreign on the board's face makes the frame occluded. See
``docs/vision/readers-gobsmacked.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import Observation
from engine.core import Content

from ..geometry import BoardGeometry, hex_bgr
from ..locate import BoardPose
from . import Reader
from .common import (
    MatReference,
    PointSet,
    Reference,
    chroma,
    grid_neighbours,
    grow_region,
    observation,
    plane_pose,
    sample_image,
    softmax,
)

#: Point kinds on a token's face.
FACE, DARK, LIGHT, RED = range(4)
#: Feature columns.
PRESENCE, INK, BALANCE, RED_SHARE, SQUARE = range(5)
#: Polar grid: radial step (mm) and number of directions.
STEP_MM = 1.0
ANGLES = 32
#: Farthest a token's motif is looked for from where the pose puts it (mm).
MAX_SHIFT_MM = 4.0
#: A spread at least this wide means the class says nothing of the feature, which is then
#: uniform over its range (presence in log units, shares, the square-ness in mm).
VAGUE = 1.0
RANGES = np.array([4.0, 1.0, 1.0, 1.0, 2.0])
#: Share of a hole's ring on the board's face that is foreign when a hand is next to it.
NEXT_TO_HAND = 0.2
#: Fits of the light's slope across a token's face, how strongly it is held to 0 (in face
#: points at 1 mm from the centre) and the most it changes the log lightness up to the edge.
FACE_PASSES = 2
RIDGE = 100.0
MAX_TILT = 0.3


#: Spread of every feature per motif shape: the blob's reach says nothing (it has no shape), a
#: two-colour blob's balance is only roughly even, an outline has no black or white ink.
_SPREADS = {
    "circle": (0.25, 0.12, 0.08, 0.06, 0.15),
    "square": (0.25, 0.12, 0.08, 0.06, 0.15),
    "blob": (0.25, 0.15, 0.2, 0.06, VAGUE),
    "circle-in-square": (0.25, 0.12, VAGUE, 0.05, VAGUE),
}


class GobsmackedReader(Reader):
    """Reads every hole of a Gobsmacked board: empty or one of the geometry's token kinds.

    Options: ``rate`` (how far one calibration moves the class models, 0.5), ``foreign_at``
    (share of a hole's points in no token's colour that hides it, 0.06), ``misfit_at``
    (distance to the best class, in spreads, beyond which a hole next to a hand is unreadable,
    4), ``recentre`` (passes that find the motifs' centres before the final sampling, 1).
    """

    games = ("gobsmacked",)

    def __init__(
        self,
        geometry: BoardGeometry,
        *,
        rate: float = 0.5,
        foreign_at: float = 0.06,
        misfit_at: float = 4.0,
        recentre: int = 1,
        **options: Any,
    ) -> None:
        super().__init__(geometry, **options)
        spec = geometry.pieces
        motif = spec["motif"]
        self.radius = float(spec.get("token_diameter", 30.0)) / 2
        self.rate, self.foreign_at, self.misfit_at = rate, foreign_at, misfit_at
        self.recentre = recentre
        self.classes: tuple[Content, ...] = (None, *sorted(motif["kinds"]))
        self.names = geometry.cell_names
        centres = np.array([c.center for c in geometry.cells])
        self.centres = centres
        self.radii = np.arange(STEP_MM / 2, self.radius - 0.8, STEP_MM)
        self.angles = np.arange(ANGLES) * 2 * math.pi / ANGLES
        grid = _polar(self.radii, self.angles)
        self.grid = grid
        self.zones = self._zones()
        self.faces = PointSet.from_groups(
            [c + grid for c in centres], float(spec.get("thickness", 0.0))
        )
        pitch = _pitch(centres)
        self.neighbours = grid_neighbours(self.names, centres, pitch)
        self.neighbour_index = [
            [self.names.index(m) for m in self.neighbours[n]] for n in self.names
        ]
        hole = _hole_radius(geometry)
        around = (hole + pitch / 2) / 2 + 0.5
        self.rings = PointSet.from_groups([c + _circle(around, 32) for c in centres])
        self.frame_points, self.frame_cells = _board_frame(geometry, centres, hole)
        self.mat = MatReference(geometry)
        self.ref_look = _Look.of(geometry)
        self.motif_area = float(motif.get("coverage", 0.6)) * math.pi * self.radius**2
        self.mean, self.sigma = self._priors(motif)
        self.vague = self.sigma >= VAGUE

    # ----------------------------------------------------------------- features
    def _zones(self) -> dict[str, np.ndarray]:
        """Per polar point (R*A), which zones it belongs to."""
        r = np.repeat(self.radii, ANGLES)
        return {
            "annulus": (r >= self.radius - 3.2) & (r <= self.radius - 1.0),
            "inner": r <= 0.75 * self.radius,
            "band": r >= 0.62 * self.radius,
        }

    def _features(self, kinds: np.ndarray, presence: np.ndarray) -> np.ndarray:
        """Per hole (G x 5): presence, ink (black or white share of the inner face), balance
        (white share of that ink), red share, square-ness, from the kinds of its polar points
        (G x R*A) and its presence."""
        m = self.zones
        inner = kinds[:, m["inner"]]
        dark, light = (inner == DARK).mean(axis=1), (inner == LIGHT).mean(axis=1)
        ink = dark + light
        balance = np.where(ink > 0.05, light / np.maximum(ink, 1e-9), 0.5)
        motif = (kinds != FACE).reshape(len(kinds), len(self.radii), ANGLES)
        band = m["band"].reshape(len(self.radii), ANGLES)[:, 0]
        # G x A: how far the motif reaches along each ray, from the band's inner edge to the
        # first bare face point (what lies beyond, e.g. the hole past an off-centre token,
        # is not motif)
        reach = np.cumprod(motif[:, band], axis=1).sum(axis=1) * STEP_MM
        harmonic = np.abs(reach @ np.exp(-4j * self.angles)) / ANGLES
        return np.column_stack(
            [
                presence,
                ink,
                balance,
                (inner == RED).mean(axis=1),
                harmonic,
            ]
        )

    def _priors(self, motif: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """Expected features (classes x 5) and their spreads, from the ideal motifs."""
        look = self.ref_look
        area = self.motif_area
        r = np.repeat(self.radii, ANGLES)
        a = np.tile(self.angles, len(self.radii))
        means, sigmas = [], []
        for content in self.classes:
            if content is None:
                kinds = np.full((1, len(r)), FACE)
                feat = self._features(kinds, np.array([math.log(look.hole / look.board)]))[0]
                means.append(feat)
                sigmas.append([0.35, VAGUE, VAGUE, VAGUE, VAGUE])
                continue
            kind = motif["kinds"][content]
            rows = []
            for turn in np.linspace(0, math.pi / 2, 5, endpoint=False):
                x, y = r * np.cos(a + turn) + 0.4, r * np.sin(a + turn)
                rows.append(_motif_kinds(kind["shape"], kind["colour"], area, x, y))
            presence = np.full(len(rows), math.log(look.face / look.board))
            feat = self._features(np.array(rows), presence).mean(axis=0)
            means.append(feat)
            sigmas.append(_SPREADS[kind["shape"]])
        return np.array(means), np.array(sigmas, dtype=np.float64)

    def _measure(self, frame: np.ndarray, pose: BoardPose) -> _Measure:
        """Sample the frame: kinds, presence and foreign shares of every hole, the tokens'
        faces sampled again about their motifs' centres (see :meth:`_recentre`)."""
        ref = self.mat.measure(frame, pose)
        g = len(self.names)
        rings = ref.normalise(
            sample_image(frame, self.rings.image_points(pose)), self.centres, self.rings.owner
        )
        board = ref.normalise(
            sample_image(frame, pose.to_image(self.frame_points)), self.frame_points
        )
        noise = max(ref.noise, 0.015)  # a saturated paper hides the sensor's noise
        ring_light = np.median(rings.mean(axis=1).reshape(g, -1), axis=1)
        board_chroma = np.median(chroma(np.vstack([rings, board])), axis=0)
        ring_foreign = _contiguous(
            _off_board(
                chroma(rings), rings.mean(axis=1), board_chroma, ring_light[self.rings.owner], noise
            ).reshape(g, -1)
        )
        clear = self._clear_of_tokens(pose)
        ring_share = (ring_foreign & clear).sum(axis=1) / np.maximum(clear.sum(axis=1), 1)
        offsets = np.zeros((g, 2))
        for _ in range(self.recentre):
            kinds, presence = self._classify(
                self._sample_faces(frame, pose, ref, offsets), ring_light
            )[:2]
            offsets = offsets + self._recentre(kinds, presence, ring_share >= NEXT_TO_HAND)
        faces = self._sample_faces(frame, pose, ref, offsets)
        kinds, presence, foreign = self._classify(faces, ring_light, board_chroma, noise)
        frame_foreign = _clustered(
            _off_board(
                chroma(board), board.mean(axis=1), board_chroma, np.median(ring_light), noise
            ),
            self.frame_cells,
        )
        return _Measure(
            kinds=kinds,
            presence=presence,
            rim=(kinds[:, self.zones["annulus"]] == FACE).mean(axis=1),
            foreign=foreign,
            ring_foreign=ring_share,
            frame_foreign=float(frame_foreign.mean()),
        )

    def _sample_faces(
        self, frame: np.ndarray, pose: BoardPose, ref: Reference, offsets: np.ndarray
    ) -> np.ndarray:
        """Reflectances (N x 3) of the polar grids, each moved by its hole's offset (mm)."""
        points = self.faces.points + offsets[self.faces.owner]
        px = plane_pose(pose, self.faces.height_mm).to_image(points)
        return ref.normalise(sample_image(frame, px), self.centres, self.faces.owner)

    def _classify(
        self,
        faces: np.ndarray,
        ring_light: np.ndarray,
        board_chroma: np.ndarray | None = None,
        noise: float = 0.0,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Per hole: the kind of each polar point (G x R*A), presence (G) and, given the
        board's chroma, the share of foreign points (G); without it, no red points either."""
        g = len(self.names)
        light = np.maximum(faces.mean(axis=1), 1e-3).reshape(g, -1)
        look = self.ref_look
        low, high = 0.5 * math.log(look.black / look.face), 0.5 * math.log(look.white / look.face)
        log_face = self._face_field(np.log(light), low, high)
        presence = log_face.mean(axis=1) - np.log(np.maximum(ring_light, 1e-3))
        q = np.log(light) - log_face
        dark = q < low
        kinds = np.full(light.shape, FACE)
        kinds[dark] = DARK
        kinds[q > high] = LIGHT
        if board_chroma is None:  # enough to find the plain motifs' centres
            return kinds, presence, None
        c = chroma(faces).reshape(g, -1, 2)
        along, across = _red_hue(c, look.red)
        kinds[(along >= 0.5) & across & ~dark] = RED  # a dark point's hue is sensor noise
        steady = 1.5 * noise / light
        reddish = (along >= 0.1) & across  # a blurred red edge keeps the red's hue
        foreign = _foreign(c, light, board_chroma, steady) & ~reddish
        return kinds, presence, foreign.mean(axis=1)

    def _face_field(self, log_light: np.ndarray, low: float, high: float) -> np.ndarray:
        """Log lightness (G x R*A) of every hole's bare token face under its light: the outer
        annulus's median at the centre, tilted by the slope of the annulus's face points (a
        light falling off across the token, a shadow's soft edge), refitted each pass to the
        points within half of ``low`` .. ``high`` of the last fit and not next to a point
        outside them (a motif's blurred edge); at most ``MAX_TILT`` from the centre to the
        token's edge. A shadow scales the face and its motif alike: ink stays ink."""
        ring = self.zones["annulus"]
        xy = self.grid[ring]
        values = log_light[:, ring]
        level = np.median(values, axis=1)
        slope = np.zeros((len(level), 2))
        for _ in range(FACE_PASSES):
            q = values - level[:, None] - slope @ xy.T
            face = ((q > 0.5 * low) & (q < 0.5 * high)).reshape(len(q), -1, ANGLES)
            # not next to ink either: a blurred motif's edge is neither face nor ink
            face &= np.roll(face, 1, axis=2) & np.roll(face, -1, axis=2)
            face &= face.all(axis=1, keepdims=True)
            w = face.reshape(len(q), -1).astype(np.float64)
            normal = np.einsum("gn,ni,nj->gij", w, xy, xy) + RIDGE * np.eye(2)
            rhs = np.einsum("gn,ni,gn->gi", w, xy, values - level[:, None])
            fit = np.linalg.solve(normal, rhs[..., None])[..., 0]
            tilt = np.linalg.norm(fit, axis=1) * self.radius
            slope = fit * np.minimum(1.0, MAX_TILT / np.maximum(tilt, 1e-9))[:, None]
        return level[:, None] + slope @ self.grid.T

    def _recentre(self, kinds: np.ndarray, presence: np.ndarray, hand: np.ndarray) -> np.ndarray:
        """How far (G x 2 mm) each token's motif centre lies from where it was sampled: the
        pose can be off by a few millimetres (lens distortion) and a token sits loosely in its
        hole. A plain motif (black or white at the centre) is followed outwards along every ray
        to its edge (an empty hole's dark depth counts as plain: it stays about put); the
        centroid of that outline is its centre. Other holes, and those with a ``hand`` next to
        them (a finger over part of a motif cuts its outline: the centroid runs away from it),
        move like their plain neighbours (the pose's error varies smoothly over the board)."""
        g = len(self.names)
        k = kinds.reshape(g, len(self.radii), ANGLES)
        look = self.ref_look
        present = presence > 0.5 * math.log(look.hole * look.face) - math.log(look.board)
        centre = np.where((k[:, 0] == DARK).mean(axis=1) > 0.5, DARK, FACE)
        centre = np.where((k[:, 0] == LIGHT).mean(axis=1) > 0.5, LIGHT, centre)
        same = k == centre[:, None, None]
        other = np.where(centre == DARK, LIGHT, DARK)
        plain = (
            (centre != FACE)
            & (same.reshape(g, -1).mean(axis=1) >= 0.4)
            # not the two-colour joker (both colours inside what any motif covers)
            & (
                (k[:, self.radii < 0.6 * self.radius] == other[:, None, None]).mean(axis=(1, 2))
                < 0.05
            )
        )
        edge = np.cumprod(same, axis=1).sum(axis=1) * STEP_MM  # G x A
        x, y = edge * np.cos(self.angles), edge * np.sin(self.angles)
        xn, yn = np.roll(x, -1, axis=1), np.roll(y, -1, axis=1)
        cross = x * yn - xn * y
        area = np.maximum(cross.sum(axis=1) / 2, 1e-6)
        cx = ((x + xn) * cross).sum(axis=1) / (6 * area)
        cy = ((y + yn) * cross).sum(axis=1) / (6 * area)
        # an outline much smaller than a motif is a motif only partly seen (a light falling
        # off across a white motif): no centre from it
        plain &= (area >= 0.6 * self.motif_area) & ~hand
        shift = np.column_stack([cx, cy])
        shift *= np.minimum(1.0, MAX_SHIFT_MM / np.maximum(np.linalg.norm(shift, axis=1), 1e-9))[
            :, None
        ]
        out = np.where(plain[:, None], shift, 0.0)
        guides = plain & present
        # a joker (or a token too far off to see its face) moves like its plain neighbours;
        # an empty hole may move too: it looks the same anywhere in its hole
        for i in np.flatnonzero(~guides):
            near = [j for j in self.neighbour_index[i] if guides[j]]
            if near:
                out[i] = shift[near].mean(axis=0)
        return out

    def _clear_of_tokens(self, pose: BoardPose) -> np.ndarray:
        """Which ring points (G x ring) no token standing in its hole can hide from the camera:
        a token's side, seen at an angle, covers the board up to the parallax of its face."""
        lifted = plane_pose(pose, self.faces.height_mm)
        shift = pose.to_board(lifted.to_image(self.centres)) - self.centres
        rel = self.rings.points.reshape(len(self.names), -1, 2) - self.centres[:, None]
        along = np.clip(
            (rel @ shift[:, :, None])[..., 0]
            / np.maximum((shift * shift).sum(axis=1), 1e-9)[:, None],
            0.0,
            1.0,
        )
        gap = np.linalg.norm(rel - along[..., None] * shift[:, None], axis=2)
        return gap >= self.radius + 3.0

    def _loglik(self, features: np.ndarray) -> np.ndarray:
        """Log-likelihood of every hole's features under every class (G x K): Gaussian where
        the class says what to expect, uniform over the feature's range where it does not
        (a wide Gaussian would wrongly penalise the class)."""
        z = (features[:, None, :] - self.mean[None]) / self.sigma[None]
        gauss = -0.5 * z * z - np.log(self.sigma) - 0.5 * math.log(2 * math.pi)
        flat = -np.log(np.broadcast_to(RANGES, self.sigma.shape))
        return np.where(self.vague, flat, gauss).sum(axis=2)

    # ----------------------------------------------------------------- reading
    def read(self, frame: np.ndarray, pose: BoardPose) -> Observation:
        """Every visible hole's content, with probabilities; hands and objects left out."""
        meas = self._measure(frame, pose)
        features = self._features(meas.kinds, meas.presence)
        loglik = self._loglik(features)
        best = loglik.argmax(axis=1)
        z = np.where(self.vague[best], 0.0, (features - self.mean[best]) / self.sigma[best])
        misfit = np.sqrt((z * z).sum(axis=1))
        on_board = meas.frame_foreign >= 0.005 or bool((meas.ring_foreign >= NEXT_TO_HAND).any())
        covered = meas.foreign >= self.foreign_at
        # next to a hand (its ring on the board's face foreign), a hole needs less to doubt
        touched = (meas.ring_foreign >= NEXT_TO_HAND) & (meas.foreign >= self.foreign_at / 3)
        touched |= (meas.ring_foreign >= 0.35) & (misfit >= self.misfit_at / 2)
        # a finger across an empty hole can pass for a token: next to a hand, a token must
        # show its whole bare rim, as bright as a token's face
        token = best > 0  # classes[0] is the empty hole
        dim = features[:, PRESENCE] < self.mean[best, PRESENCE] - 0.25
        broken = meas.rim < 0.7
        touched |= (meas.ring_foreign >= 0.15) & token & (dim | broken)
        misfits = misfit >= self.misfit_at
        seeds = covered | touched | (misfits if on_board or covered.any() else False)
        doubtful = (meas.foreign >= self.foreign_at / 3) | (misfit >= self.misfit_at)
        # next to a hidden hole, a token with the hand right around it or with more than half
        # of its bare rim gone (no motif reaches that far) may be under a finger its colours
        # cannot tell (a pale one on a grey face)
        doubtful |= token & ((meas.ring_foreign >= 0.35) | (meas.rim < 0.5))
        names = np.asarray(self.names)
        hidden = grow_region(names[seeds], set(names[doubtful]), self.neighbours)
        occluded = bool(hidden) or on_board
        return observation(
            self.game, self.names, self.classes, softmax(loglik), hidden, occluded=occluded
        )

    # ----------------------------------------------------------------- calibration
    def calibrate(self, frame: np.ndarray, pose: BoardPose, known: Mapping[str, Content]) -> None:
        """Move every class's expected features towards those of the holes of ``known`` that
        hold it (holes covered by something foreign are skipped)."""
        meas = self._measure(frame, pose)
        features = self._features(meas.kinds, meas.presence)
        for k, content in enumerate(self.classes):
            rows = [
                i
                for i, name in enumerate(self.names)
                if name in known and known[name] == content and meas.foreign[i] < self.foreign_at
            ]
            if rows:
                observed = np.median(features[rows], axis=0)
                self.mean[k] = (1 - self.rate) * self.mean[k] + self.rate * observed


@dataclass(frozen=True)
class _Look:
    """Nominal lightness (sRGB mean, 0..1) of the board, hole, token face and motif colours,
    and the red's chroma: the priors, from the geometry's ``look``."""

    board: float
    hole: float
    face: float
    black: float
    white: float
    red: np.ndarray

    @classmethod
    def of(cls, geometry: BoardGeometry) -> _Look:
        """The look of ``geometry`` (``look.board``, ``look.hole``, ``look.pieces``)."""
        look = geometry.extra["look"]
        pieces = look["pieces"]

        def level(colour: str) -> float:
            return float(hex_bgr(colour).mean() / 255)

        red = chroma(hex_bgr(pieces["red"])[None] / 255)[0]
        return cls(
            level(look["board"]),
            level(look["hole"]),
            level(pieces["face"]),
            level(pieces["black"]),
            level(pieces["white"]),
            red,
        )


@dataclass(frozen=True)
class _Measure:
    """What one frame shows of every hole: the kind of each polar point (G x R*A), presence
    (G), the share of the outer annulus that is bare face (G), the share of foreign points in
    the hole (G) and on the board ring around it (G), and on the board's frame around the
    holes."""

    kinds: np.ndarray
    presence: np.ndarray
    rim: np.ndarray
    foreign: np.ndarray
    ring_foreign: np.ndarray
    frame_foreign: float


def _red_hue(c: np.ndarray, red: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How far chromas (... x 2) go along the red's (1: as saturated as the red) and whether
    they are in its hue (within ~15 degrees)."""
    norm = float(red @ red)
    along = c @ red / norm
    across = np.abs(c @ np.array([-red[1], red[0]])) / norm
    return along, across <= 0.27 * along + 0.05


def _foreign(c: np.ndarray, light: np.ndarray, board: np.ndarray, steady: np.ndarray) -> np.ndarray:
    """Points on a hole that no token, hole or board shows: clearly coloured (beyond the
    noise ``steady``) but neither grey nor the board's hue; warm (skin) colours count even when
    weakly saturated."""
    sat = np.linalg.norm(c, axis=-1)
    boardish = np.linalg.norm(c - board, axis=-1) <= np.maximum(0.1, steady)
    warm = (c[..., 1] >= 0.06) & (c[..., 0] <= -0.02)
    coloured = (sat >= np.maximum(0.15, steady)) | (warm & (sat >= steady))
    return coloured & ~boardish & (light >= 0.08)


def _off_board(
    c: np.ndarray, light: np.ndarray, board: np.ndarray, board_light: Any, noise: float
) -> np.ndarray:
    """Points of the board's face whose hue is clearly not the board's."""
    steady = 1.5 * noise / np.maximum(light, 1e-3)
    far = np.linalg.norm(c - board, axis=-1) >= np.maximum(0.12, steady)
    return far & (light >= 0.15 * np.asarray(board_light))


def _contiguous(flags: np.ndarray) -> np.ndarray:
    """``flags`` of ring points (G x points, in order around each ring) kept where a neighbour
    on the ring is flagged too: a hand covers an arc of the ring, the chroma noise of a dim
    board scatters single points."""
    return flags & (np.roll(flags, 1, axis=1) | np.roll(flags, -1, axis=1))


def _polar(radii: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Points (R*A x 2 mm) on circles of ``radii`` at ``angles``, radius after radius."""
    r = np.repeat(radii, len(angles))
    a = np.tile(angles, len(radii))
    return np.column_stack([r * np.cos(a), r * np.sin(a)])


def _circle(radius: float, count: int) -> np.ndarray:
    """``count`` points (count x 2 mm) evenly on a circle of ``radius`` about the origin."""
    a = (np.arange(count) + 0.5) * 2 * np.pi / count
    return radius * np.column_stack([np.cos(a), np.sin(a)])


def _pitch(centres: np.ndarray) -> float:
    """The smallest distance between two hole centres (mm)."""
    d = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    return float(d[d > 0].min())


def _hole_radius(geometry: BoardGeometry) -> float:
    """A hole's radius (mm), from its polygon."""
    pts = np.asarray(geometry.cells[0].polygon, dtype=np.float64)
    return float(np.linalg.norm(pts - pts.mean(axis=0), axis=1).mean())


def _clustered(flags: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """``flags`` of grid points (K, at grid ``cells`` K x 2) kept where at least two of the
    four grid neighbours are flagged too: a hand covers many neighbouring points, the noise of
    a dark frame scatters single ones."""
    grid = np.zeros(tuple(cells.max(axis=0) + 3), dtype=np.int8)
    i, j = cells[:, 0] + 1, cells[:, 1] + 1
    grid[i, j] = flags
    around = grid[i - 1, j] + grid[i + 1, j] + grid[i, j - 1] + grid[i, j + 1]
    return flags & (around >= 2)


def _board_frame(
    geometry: BoardGeometry, centres: np.ndarray, hole: float, step_mm: float = 5.0
) -> tuple[np.ndarray, np.ndarray]:
    """Points (K x 2 mm) of the board's face, ``step_mm`` apart, clear of the holes (and the
    tokens standing out of them), of the marker stickers and of the face's edge, and their
    grid cells (K x 2 integers)."""
    outline = np.asarray(geometry.extra["board"]["outline"], dtype=np.float64)
    lo, hi = outline.min(axis=0) + 3.0, outline.max(axis=0) - 3.0
    gx, gy = np.meshgrid(np.arange(lo[0], hi[0], step_mm), np.arange(lo[1], hi[1], step_mm))
    pts = np.column_stack([gx.ravel(), gy.ravel()])
    cells = np.indices(gx.shape).reshape(2, -1).T
    d_hole = np.linalg.norm(pts[:, None] - centres[None], axis=2).min(axis=1)
    keep = d_hole >= hole + 6.0
    quiet = float(geometry.extra.get("print", {}).get("quiet_zone", 4.0))
    for m in geometry.markers:
        reach = m.size / 2 * math.sqrt(2) + quiet + 3.0
        keep &= np.linalg.norm(pts - np.asarray(m.center), axis=1) >= reach
    return pts[keep], cells[keep]


def _motif_kinds(shape: str, colour: str, area: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The kind of each token-face point (mm, motif frame) for one ideal motif of ``area``."""
    kinds = np.full(len(x), FACE)
    ink = {"black": DARK, "white": LIGHT, "red": RED}.get(colour, FACE)
    r = np.hypot(x, y)
    if shape == "circle":
        kinds[r <= math.sqrt(area / math.pi)] = ink
    elif shape == "square":
        half = math.sqrt(area) / 2
        kinds[(np.abs(x) <= half) & (np.abs(y) <= half)] = ink
    elif shape == "circle-in-square":  # outlines: a square, a circle inside it
        half, stroke = math.sqrt(area) / 2, 1.6
        box = np.maximum(np.abs(x), np.abs(y))
        kinds[(box <= half) & (box >= half - stroke)] = RED
        kinds[(r <= half - 2.6) & (r >= half - 2.6 - stroke)] = RED
    else:  # a shapeless blob split half black, half white: a disc of the same area, split
        inside = r <= math.sqrt(area / math.pi)
        kinds[inside & (x < 0)] = DARK
        kinds[inside & (x >= 0)] = LIGHT
    return kinds
