"""Where a board lies on its mat: the markers are printed on the mat, but the board is put down
by hand, a few millimetres and degrees off the outline printed for it. Its own edges say where
it really is.

:class:`BoardPlacement` looks across every side of the board's outline, on the plane of the
board's top face, for the board's edge (where a profile across the side crosses it is told by
a fitted model, :mod:`vision.edges`), and fits the board's in-plane move
(a rotation about the board's middle and a shift) to the edges found, robustly (a hand or a
piece over an edge, a shadow on the mat are outliers). On a side whose outer face the camera
sees, the step seen is the face's foot on the mat, not the top face's edge: it is moved back by
the face's height as seen from the camera. The mat marks only the outline's corners (see
``vision/mat.py``): a printed line along a side would look like the board's edge.

``BoardPose.placement`` carries the result: a 3x3 matrix from the board's frame (the cells,
the outline) to the mat's (the markers); every plane above the mat (the board's top face, the
pieces) is read in the board's frame, the mat itself (paper, markers) in the mat's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

import cv2
import numpy as np

from .edges import EdgeModel, edge_model
from .geometry import BoardGeometry
from .view_cache import LastView

if TYPE_CHECKING:
    from .locate import BoardPose

#: How far (mm) either side of the printed outline the profiles reach (the edge model looks a
#: few mm further in and out than the edge it places).
REACH_MM = 10.0
#: Sample step (mm) along a profile across an edge.
STEP_MM = 0.5
#: Profiles along each side: one every this many mm, none within ``CORNER_MM`` of a corner.
SPACING_MM = 12.0
CORNER_MM = 15.0
#: A profile is the mean of parallel lines this far apart (mm) along the side (the sensor's
#: noise averages out in a dim frame).
LINES_MM = (-2.0, -1.0, 0.0, 1.0, 2.0)
#: An edge within this (mm) of where a placement puts it agrees with the placement.
AGREE_MM = 1.5
#: A side counts when this many of its profiles, and this share of them, agree with the move
#: (the others: pieces, a hand).
SIDE_PROFILES = 4
SIDE_AGREE = 0.25
#: Moves tried through three profiles each.
TRIES = 80
#: The largest move (mm, degrees) believed: beyond it the board is not on its mat; and the
#: largest relative difference in size between the board seen and its outline.
MAX_SHIFT_MM = 10.0
MAX_TURN_DEG = 6.0
MAX_SCALE = 0.03
#: A move of the outline's corners smaller than this (mm) is within the edges' noise.
MIN_MOVE_MM = 1.0


def rigid(dx: float, dy: float, turn_deg: float, about: np.ndarray) -> np.ndarray:
    """3x3 matrix of a turn by ``turn_deg`` about ``about`` (x, y mm), then a shift."""
    a = math.radians(turn_deg)
    c, s = math.cos(a), math.sin(a)
    turn = np.array([[c, -s], [s, c]])
    centre = np.asarray(about, dtype=np.float64)
    offset = centre + np.array([dx, dy]) - turn @ centre
    return np.array([[c, -s, offset[0]], [s, c, offset[1]], [0.0, 0.0, 1.0]])


def board_centre(geometry: BoardGeometry) -> np.ndarray:
    """The middle of the board's outline (mm), about which a misplaced board is turned."""
    outline = np.asarray(geometry.extra["board"]["outline"], dtype=np.float64).reshape(-1, 2)
    return (outline.min(axis=0) + outline.max(axis=0)) / 2


def placement_shift(finder: BoardPlacement, a: np.ndarray, b: np.ndarray) -> float:
    """How far (mm) two placements put the board's outline corners apart, at the most."""
    corners = np.column_stack([finder.outline, np.ones(len(finder.outline))])
    return float(np.linalg.norm((corners @ a.T - corners @ b.T)[:, :2], axis=1).max())


def board_offset(finder: BoardPlacement, placement: np.ndarray | None) -> tuple[float, float]:
    """How far (mm) the board's middle lies from where its outline has it, and by how many
    degrees it is turned (0, 0 on its outline), for the set-up checks."""
    if placement is None:
        return 0.0, 0.0
    moved = placement @ np.array([*finder.centre, 1.0])
    turn = math.degrees(math.atan2(placement[1, 0], placement[0, 0]))
    return float(np.linalg.norm(moved[:2] - finder.centre)), turn


@dataclass(frozen=True)
class Profiles:
    """The colours across a board's outline in one frame: ``colours`` (profiles x samples x
    BGR), ``foot`` (mm: how much further out than the top face's edge the step shows on each
    profile, the board's outer face seen from the camera), ``inside`` (profiles wholly in the
    frame)."""

    colours: np.ndarray
    foot: np.ndarray
    inside: np.ndarray


class BoardPlacement:
    """Finds a board's place on its mat from the board's outline edges (see the module)."""

    def __init__(self, geometry: BoardGeometry, edges: EdgeModel | None = None) -> None:
        board = geometry.extra.get("board", {})
        self.thickness = geometry.board_height
        outline = np.asarray(board.get("outline", []), dtype=np.float64).reshape(-1, 2)
        self.outline = outline
        #: no outline, or markers on the board itself (an upright board): nothing to find
        self.enabled = len(outline) >= 3 and not geometry.upright
        self.centre = board_centre(geometry) if len(outline) else None
        offsets = np.arange(-REACH_MM, REACH_MM + STEP_MM / 2, STEP_MM)
        self._offsets = offsets
        points, normals, alongs, sides = [], [], [], []
        nxt = np.roll(outline, -1, axis=0)
        area = 0.5 * float(np.sum(outline[:, 0] * nxt[:, 1] - outline[:, 1] * nxt[:, 0]))
        for k in range(len(outline) if self.enabled else 0):
            a, b = outline[k], outline[(k + 1) % len(outline)]
            length = float(np.linalg.norm(b - a))
            along = (b - a) / length
            normal = np.array([along[1], -along[0]]) * (1.0 if area > 0 else -1.0)
            count = max(int((length - 2 * CORNER_MM) // SPACING_MM) + 1, 2)
            for s in np.linspace(CORNER_MM, length - CORNER_MM, count):
                points.append(a + along * s)
                normals.append(normal)
                alongs.append(along)
                sides.append(k)
        self._points = np.asarray(points).reshape(-1, 2)
        self._normals = np.asarray(normals).reshape(-1, 2)
        self._sides = np.asarray(sides, dtype=np.int64)
        lines = np.asarray(alongs).reshape(-1, 1, 2) * np.asarray(LINES_MM)[None, :, None]
        #: every sample: profile point + line shift + offset x normal
        #: (profiles x lines x offsets x 2)
        self._samples = (self._points[:, None, :] + lines)[:, :, None, :] + offsets[
            None, None, :, None
        ] * self._normals[:, None, None, :]
        self._edges = edges
        #: the last view's sample points in the image: (px, inside, foot), or None
        self._view_points: LastView[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = LastView()

    @property
    def offsets(self) -> np.ndarray:
        """The samples' offsets (mm, outwards) along every profile."""
        return self._offsets

    @property
    def edge_model(self) -> EdgeModel:
        """The fitted model that places the edge on a profile (loaded when first needed)."""
        if self._edges is None:
            self._edges = edge_model()
        return self._edges

    def profiles(
        self, frame: np.ndarray, pose: BoardPose, shift_mm: float = 0.0
    ) -> Profiles | None:
        """The colours across the outline in ``frame`` seen through ``pose`` (a mat pose), on
        the plane of the board's top face; None when that plane cannot be placed.
        ``shift_mm`` moves every profile that far outwards (the edge model learns from
        profiles away from any edge what a profile without one looks like)."""
        if not self.enabled or len(self._points) == 0:
            return None
        seen = self._points_in(frame.shape, pose, shift_mm)
        if seen is None:
            return None
        px, inside, foot = seen
        shape = self._samples.shape[:3]
        colours = cv2.remap(frame, px[:, None, 0], px[:, None, 1], cv2.INTER_LINEAR)
        colours = colours.reshape(*shape, -1).astype(np.float32)
        if colours.shape[-1] == 1:
            colours = np.repeat(colours, 3, axis=-1)
        # the colour of every profile point, averaged over the parallel lines
        return Profiles(colours.mean(axis=1), foot, inside.reshape(shape).all(axis=(1, 2)))

    def _points_in(
        self, shape: tuple[int, ...], pose: BoardPose, shift_mm: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Every sample's image point (float32 px), whether each is in the frame, and each
        profile's foot (mm); None when the top face's plane cannot be placed. The last pose's
        are kept: a still board keeps its homography (the locator's deadband), so they are
        computed again only when it moves."""
        pose = replace(pose, placement=None)  # the outline is where the mat has it
        key = (pose.view_key(), shape[:2], shift_mm)
        return self._view_points.get(key, lambda: self._project(shape, pose, shift_mm))

    def _project(
        self, shape: tuple[int, ...], pose: BoardPose, shift_mm: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`_points_in` worked out afresh (``pose`` without a placement)."""
        try:
            top = pose.lifted(self.thickness) if self.thickness else pose
            cx, cy, cz = pose.camera_centre()
        except (ValueError, np.linalg.LinAlgError):
            return None
        # on a side whose outer face is towards the camera the step seen is that face's foot
        # on the mat, which shows this much further out on the top face's plane
        towards = ((np.array([cx, cy]) - self._points) * self._normals).sum(axis=1)
        foot = np.maximum(towards, 0.0) * self.thickness / max(cz, 1.0)
        samples = self._samples + shift_mm * self._normals[:, None, None, :]
        px = top.to_image(samples.reshape(-1, 2)).astype(np.float32)
        h, w = shape[:2]
        inside = (px[:, 0] >= 0) & (px[:, 0] < w - 1) & (px[:, 1] >= 0) & (px[:, 1] < h - 1)
        return px, inside, foot

    def estimate(self, frame: np.ndarray, pose: BoardPose) -> np.ndarray | None:
        """The board -> mat matrix in ``frame`` seen through ``pose`` (a mat pose): the
        identity when the board lies on its outline (within the edges' noise), None when the
        board's edges do not say (too few found, or disagreeing)."""
        seen = self.profiles(frame, pose)
        return None if seen is None else self.from_profiles(seen)

    def from_profiles(self, seen: Profiles) -> np.ndarray | None:
        """The placement :meth:`estimate` makes of the profiles ``seen``."""
        return self.from_edges(self.edges_found(seen))

    def edges_found(self, seen: Profiles) -> np.ndarray:
        """Per profile, where (mm, outwards) the edge model puts the top face's edge (the
        outer face's foot taken off); NaN where it puts none or the profile is not in view."""
        found = np.full(len(seen.foot), np.nan)
        if seen.inside.any():
            found[seen.inside] = self.edge_model.edges(seen.colours[seen.inside], self._offsets)
        return found - seen.foot

    def from_edges(self, found: np.ndarray) -> np.ndarray | None:
        """The placement fitted to the edges ``found`` (:meth:`edges_found`)."""
        ok = np.isfinite(found)
        if ok.sum() < 4:
            return None
        return self._fit(self._points[ok], self._normals[ok], found[ok], self._sides[ok])

    def true_offsets(self, placement: np.ndarray) -> np.ndarray:
        """Per profile, how far (mm, outwards along its normal) the board's edge lies from the
        outline when the board lies at ``placement`` (board -> mat): where a fitted model
        should place it (:mod:`vision.train.edges`)."""
        turn = placement[:2, :2]
        moved_points = self._points @ turn.T + placement[:2, 2]
        moved_normals = self._normals @ turn.T
        along = ((moved_points - self._points) * moved_normals).sum(axis=1)
        return along / (self._normals * moved_normals).sum(axis=1)

    def _fit(
        self, points: np.ndarray, normals: np.ndarray, found: np.ndarray, sides: np.ndarray
    ) -> np.ndarray | None:
        """The shift (dx, dy) and small turn about the board's middle that move the
        outline's points ``found`` mm along their normals: the move most profiles agree with
        (within ``AGREE_MM``; a hand, a piece, a shadow give the others), among the moves
        through every few profiles, then refined by least squares on them.

        With three sides in view the fit also has a scale, which is then dropped: every
        side's edge is seen a little out or in alike (the edge's shadow or bevel, blur, a
        lens the markers' pose does not quite model), which is no move of the board, and
        which only opposite sides tell from a shift. With two sides (a hand over the
        others) it is a shift and turn alone."""
        arm = points - self.centre
        perp = np.column_stack([-arm[:, 1], arm[:, 0]])
        design = np.column_stack(
            [normals, (perp * normals).sum(axis=1), (arm * normals).sum(axis=1)]
        )
        for columns, needed in ((4, 3), (3, 2)):
            fitted = _consensus(design[:, :columns], found, sides, needed)
            if fitted is not None:
                break
        else:
            return None
        if not _believable(fitted):
            return None
        dx, dy, turn = (float(v) for v in fitted[:3])
        found_move = rigid(dx, dy, math.degrees(turn), self.centre)
        if placement_shift(self, found_move, np.eye(3)) < MIN_MOVE_MM:
            return np.eye(3)  # within the edges' noise of its outline: it lies on it
        return found_move


def _consensus(
    design: np.ndarray, found: np.ndarray, sides: np.ndarray, needed: int
) -> np.ndarray | None:
    """Least squares ``design @ coef = found`` on the largest set of profiles that agree
    (within ``AGREE_MM``) with a fit through a few of them, when that set covers ``needed``
    sides with ``SIDE_PROFILES`` profiles each, and on each side it covers agrees with at
    least ``SIDE_AGREE`` of the side's profiles; None otherwise."""
    k = design.shape[1]
    picks = _picks(len(found), k)
    on = np.sort(sides[picks], axis=1)
    spans = (np.diff(on, axis=1) > 0).sum(axis=1) >= needed - 1
    systems = design[picks[spans]]
    solvable = np.abs(np.linalg.det(systems)) > 1e-6
    if not solvable.any():
        return None
    trials = np.linalg.solve(systems[solvable], found[picks[spans][solvable]][..., None])[..., 0]
    trials = trials[_believable(trials)]
    if not len(trials):
        return None
    agree = np.abs(trials @ design.T - found) <= AGREE_MM
    best = agree[int(agree.sum(axis=1).argmax())]
    counts = np.bincount(sides[best], minlength=sides.max() + 1)
    totals = np.bincount(sides, minlength=sides.max() + 1)
    covered = (counts >= SIDE_PROFILES) & (counts >= SIDE_AGREE * totals)
    if covered.sum() < needed:
        return None
    use = best & covered[sides]
    if np.linalg.matrix_rank(design[use], tol=1e-3) < k:
        return None
    coef, *_ = np.linalg.lstsq(design[use], found[use], rcond=None)
    return coef


@cache
def _picks(n: int, k: int) -> np.ndarray:
    """``TRIES`` random choices of ``k`` of ``n`` profiles (TRIES x k), the same for every
    frame (the same frame gives the same placement), drawn once."""
    picks = np.random.default_rng(0).random((TRIES, n)).argsort(axis=1)[:, :k]
    picks.flags.writeable = False
    return picks


def _believable(coef: np.ndarray) -> np.ndarray:
    """Whether moves ``coef`` (..., [dx, dy, turn (rad), and maybe scale - 1]) are within how
    far a board is ever put off its outline (``MAX_SHIFT_MM``, ``MAX_TURN_DEG``,
    ``MAX_SCALE``): a larger one is made of edges that are not the board's (pieces along a
    side, a shadow)."""
    coef = np.asarray(coef, dtype=np.float64)
    ok = np.hypot(coef[..., 0], coef[..., 1]) <= MAX_SHIFT_MM
    ok &= np.abs(np.degrees(coef[..., 2])) <= MAX_TURN_DEG
    if coef.shape[-1] > 3:
        ok &= np.abs(coef[..., 3]) <= MAX_SCALE
    return ok
