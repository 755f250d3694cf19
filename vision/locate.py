"""Find the board in a camera frame: ArUco markers -> which game -> homography, tracked over time.

:class:`BoardLocator` detects the markers of every known geometry (on a downscaled grey image,
then those missed where the fit puts them, corners refined at full resolution), recognises the
game by its marker ids, fits the homography board mm -> image px (robust to misplaced markers),
estimates the lens's radial distortion from the first frames, and follows the board from frame
to frame. The result is a :class:`BoardPose`; when there is no usable board it raises
:class:`BoardNotFound` with a reason code.

A pose maps points between the board (mm) and the image (px); :meth:`BoardPose.lifted` and
:meth:`BoardPose.surface` give the pose of a plane above the markers (a raised board's top) and
:meth:`BoardPose.project_above` projects piece tops, with known or estimated intrinsics.
:class:`Rectification` / :func:`rectify` make top-down images. See ``docs/vision/pipeline.md``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import combinations
from typing import Any

import cv2
import numpy as np

from .geometry import BoardGeometry, available_games, load_geometry
from .placement import BoardPlacement, placement_shift
from .register import GATE, TOLERANCE, follow, register
from .still_look import StillLook, outline_mask, still_look, unlikeness

#: Reasons of :class:`BoardNotFound`.
NO_MARKERS = "no-markers"
UNKNOWN_MARKERS = "unknown-markers"
TOO_FEW_MARKERS = "too-few-markers"
BAD_FIT = "bad-fit"
IMPOSSIBLE_VIEW = "impossible-view"

#: Horizontal field of view assumed when the intrinsics cannot be estimated (Camera Module 3).
DEFAULT_HFOV_DEG = 66.0

#: Markers seen smaller than this (px a side, median) are not all found reliably: the camera is
#: too far (``referee bench vision --zoom``, ``docs/vision/pipeline.md``).
RELIABLE_MARKER_PX = 20.0
#: What the OLED's status line says while the markers are smaller than that, and what the "no
#: board" screen says when the board is lost after it was seen that small.
TOO_FAR = "camera too far: move in"
TOO_FAR_HINT = "Camera too far: bring it closer so the markers look bigger"
#: What the OLED's status line says while markers are read only in linear light (the paper's
#: light bled into their black: over-exposed, or a lamp's glare on the mat)
OVER_EXPOSED = "mat too bright: dim lamp"
#: What it says while markers are found only from their outlines (``vision.register``): their
#: bits too blurred, small or bright to be read one by one
MARKERS_BLURRED = "markers blurred: focus"

#: A still run (:class:`BoardLocator`, ``still_px``) averages at most this many sightings of a
#: marker, and follows the markers' corners with optical flow windows this size (px)
STILL_FITS = 10
STILL_WINDOW = (15, 15)

#: What to tell the players, per reason (short enough for the OLED's "no board" screen).
HINTS = {
    NO_MARKERS: "Check the mat's markers are in view and lit",
    UNKNOWN_MARKERS: "Markers of no known game: is it the right mat?",
    TOO_FEW_MARKERS: "Too few markers in view: clear the mat's edges",
    BAD_FIT: "Markers do not match the board file: is it the right mat?",
    IMPOSSIBLE_VIEW: "The markers put the camera below the board: show the whole mat",
}


class BoardNotFound(LookupError):
    """No usable board in the frame: ``reason`` is a reason code, ``hint`` what to tell the
    players; ``str()`` adds the details for the log."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(HINTS[reason] + (f" ({detail})" if detail else ""))
        self.reason = reason
        self.hint = HINTS[reason]


@dataclass(frozen=True)
class CameraIntrinsics:
    """Pinhole intrinsics in pixels (no distortion): focal lengths and principal point."""

    fx: float
    fy: float
    cx: float
    cy: float

    @classmethod
    def from_fov(cls, image_size: tuple[int, int], hfov_deg: float) -> CameraIntrinsics:
        """Square pixels, centred principal point, horizontal field of view ``hfov_deg``."""
        w, h = image_size
        f = (w / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
        return cls(f, f, (w - 1) / 2.0, (h - 1) / 2.0)

    @property
    def matrix(self) -> np.ndarray:
        """The 3x3 camera matrix K."""
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])


def estimate_intrinsics(
    homography: np.ndarray,
    image_size: tuple[int, int],
    *,
    hfov_deg: float = DEFAULT_HFOV_DEG,
    min_tilt_deg: float = 8.0,
) -> CameraIntrinsics:
    """Intrinsics from one board homography (square pixels, centred principal point).

    The focal length follows from the rotation's columns being orthogonal and of equal length
    (Zhang's constraints, least squares). It is only defined when the board is seen at an angle:
    below ``min_tilt_deg``, or if the solution is implausible, the ``hfov_deg`` default is used.
    """
    fallback = CameraIntrinsics.from_fov(image_size, hfov_deg)
    shift = np.array([[1.0, 0.0, -fallback.cx], [0.0, 1.0, -fallback.cy], [0.0, 0.0, 1.0]])
    a = shift @ np.asarray(homography, dtype=np.float64)
    a = a / np.linalg.norm(a[:, :2])
    p = np.array(
        [
            a[0, 0] * a[0, 1] + a[1, 0] * a[1, 1],
            a[0, 0] ** 2 + a[1, 0] ** 2 - a[0, 1] ** 2 - a[1, 1] ** 2,
        ]
    )
    q = np.array([a[2, 0] * a[2, 1], a[2, 0] ** 2 - a[2, 1] ** 2])
    denom = float(p @ p)
    inv_f2 = -float(p @ q) / denom if denom > 0 else 0.0
    width = image_size[0]
    if inv_f2 <= 0:
        return fallback
    f = 1.0 / math.sqrt(inv_f2)
    if not 0.3 * width < f < 5.0 * width:
        return fallback
    guess = CameraIntrinsics(f, f, fallback.cx, fallback.cy)
    _, normal = _decompose(homography, guess)
    if math.degrees(math.acos(min(1.0, abs(normal[2])))) < min_tilt_deg:
        return fallback
    return guess


def _decompose(
    homography: np.ndarray, intrinsics: CameraIntrinsics
) -> tuple[np.ndarray, np.ndarray]:
    """Camera centre in board mm (z < 0: above the board) and the board normal in camera axes."""
    a = np.linalg.solve(intrinsics.matrix, np.asarray(homography, dtype=np.float64))
    scale = 2.0 / (np.linalg.norm(a[:, 0]) + np.linalg.norm(a[:, 1]))
    r1, r2, t = a[:, 0] * scale, a[:, 1] * scale, a[:, 2] * scale
    if t[2] < 0:
        r1, r2, t = -r1, -r2, -t
    u, _, vt = np.linalg.svd(np.column_stack([r1, r2, np.cross(r1, r2)]))
    rotation = u @ vt
    return -rotation.T @ t, rotation[:, 2]


def _apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    return cv2.perspectiveTransform(pts[None], matrix)[0]


def _mat_corners(geometry: BoardGeometry) -> np.ndarray:
    (x, y), (w, h) = geometry.mat_origin, geometry.mat_size
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], dtype=np.float64)


def _mat_shift(geometry: BoardGeometry, a: np.ndarray, b: np.ndarray) -> float:
    corners = _mat_corners(geometry)
    return float(np.max(np.linalg.norm(_apply(a, corners) - _apply(b, corners), axis=1)))


@dataclass(frozen=True)
class Lens:
    """Radial distortion with one coefficient ``k`` about the image centre ``c``: image point
    ``d`` shows what an ideal pinhole camera sees at ``c + (d - c) * (1 + k * |d - c|^2 / R^2)``,
    ``R`` half the image diagonal. ``k > 0`` is barrel distortion, ``k = 0`` a pinhole."""

    k: float
    image_size: tuple[int, int]

    def _centre(self) -> tuple[np.ndarray, float]:
        w, h = self.image_size
        return np.array([(w - 1) / 2.0, (h - 1) / 2.0]), (w * w + h * h) / 4.0

    def undistort(self, points_px: np.ndarray) -> np.ndarray:
        """Image points (Nx2 px) -> ideal pinhole points."""
        c, r2 = self._centre()
        d = np.asarray(points_px, dtype=np.float64).reshape(-1, 2) - c
        return c + d * (1.0 + self.k * (d * d).sum(axis=1, keepdims=True) / r2)

    def distort(self, ideal_px: np.ndarray) -> np.ndarray:
        """Ideal pinhole points (Nx2 px) -> image points (Newton on the radius)."""
        c, r2 = self._centre()
        u = np.asarray(ideal_px, dtype=np.float64).reshape(-1, 2) - c
        ru = np.sqrt((u * u).sum(axis=1, keepdims=True) / r2)
        rd = ru.copy()
        for _ in range(5):
            rd -= (rd + self.k * rd**3 - ru) / (1.0 + 3.0 * self.k * rd**2)
        return c + u * np.divide(rd, ru, out=np.ones_like(ru), where=ru > 1e-12)


def estimate_lens(
    board_mm: np.ndarray,
    image_px: np.ndarray,
    image_size: tuple[int, int],
    limits: tuple[float, float] = (-0.1, 0.3),
) -> Lens | None:
    """The :class:`Lens` under which matching board and image points (Nx2) best fit one
    homography (golden-section search on ``k`` within ``limits``, where the model stays
    invertible over the image); ``None`` if the best ``k`` is at a limit (not a lens effect)."""

    def rms(k: float) -> float:
        ideal = Lens(k, image_size).undistort(image_px)
        homography, _ = cv2.findHomography(board_mm, ideal, 0)
        if homography is None:
            return math.inf
        return float(np.sqrt(np.mean((_apply(homography, board_mm) - ideal) ** 2)))

    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    lo, hi = limits
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = rms(a), rms(b)
    for _ in range(24):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = rms(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = rms(b)
    k = (lo + hi) / 2.0
    margin = 0.02 * (limits[1] - limits[0])
    return None if not limits[0] + margin < k < limits[1] - margin else Lens(k, image_size)


@dataclass(frozen=True, eq=False)
class BoardPose:
    """Where one game's board is in one frame.

    ``homography`` maps board mm to image px and ``inverse`` back. ``markers_seen`` are the
    game's markers detected in this frame, ``markers_used`` those the fit kept (the others are
    off their documented place), ``markers_missing`` those seen steadily before but not now (a
    hand?). ``reprojection_error`` is the RMS corner error in px, ``error_mm`` the mean corner
    error on the board. A ``tracked`` pose is the last fitted one reused, ``age`` seconds old.
    With a ``lens``, the homography maps to ideal (undistorted) pixels and :meth:`to_image` /
    :meth:`to_board` add / remove the distortion.
    """

    geometry: BoardGeometry
    homography: np.ndarray
    inverse: np.ndarray
    image_size: tuple[int, int]
    markers_seen: tuple[int, ...]
    markers_used: tuple[int, ...]
    markers_missing: tuple[int, ...]
    reprojection_error: float
    error_mm: float
    confidence: float
    t: float
    tracked: bool = False
    age: float = 0.0
    lens: Lens | None = None
    #: board mm -> mat mm (3x3): where the board lies on its mat, found from its edges
    #: (:mod:`vision.placement`); None when it lies on its printed outline or is not known
    placement: np.ndarray | None = None
    #: median side (px) of the markers seen (a tracked pose keeps the last fit's)
    marker_px: float = 0.0
    #: markers of ``markers_seen`` read only in linear light or on the frame eroded by a pixel:
    #: the paper's light had bled into their black (over-exposed, or a lamp's glare on the mat)
    markers_bled: tuple[int, ...] = ()
    #: markers of ``markers_seen`` found only from their outlines, their bits read together
    #: (:mod:`vision.register`): too far, blurred or bright to be read one by one
    markers_registered: tuple[int, ...] = ()

    @property
    def game(self) -> str:
        """The game recognised from the markers."""
        return self.geometry.game

    @property
    def too_far(self) -> bool:
        """The markers are smaller than RELIABLE_MARKER_PX: some may be lost from frame to
        frame (the camera is too far, or its resolution too low)."""
        return 0.0 < self.marker_px < RELIABLE_MARKER_PX

    def view_key(self) -> tuple:
        """Equal for two poses that put every board point, on every plane, on the same pixel:
        a still board keeps its homography (``deadband_px``), so what is worked out from a
        pose alone can be kept while it holds."""
        lens = None if self.lens is None else (self.lens.k, self.lens.image_size)
        placement = None if self.placement is None else self.placement.tobytes()
        return (self.game, self.homography.tobytes(), self.image_size, lens, placement)

    def to_image(self, points_mm: np.ndarray | Iterable) -> np.ndarray:
        """Board points (Nx2 mm) -> image points (Nx2 px)."""
        ideal = _apply(self.homography, np.asarray(points_mm))
        return ideal if self.lens is None else self.lens.distort(ideal)

    def to_board(self, points_px: np.ndarray | Iterable) -> np.ndarray:
        """Image points (Nx2 px) -> board points (Nx2 mm) on the board plane."""
        ideal = np.asarray(points_px) if self.lens is None else self.lens.undistort(points_px)
        return _apply(self.inverse, ideal)

    def mat_corners(self) -> np.ndarray:
        """The mat's 4 corners in the image (4x2 px), clockwise from its top-left."""
        return self.to_image(_mat_corners(self.geometry))

    def shift(self, other: BoardPose) -> float:
        """How far the mat corners moved in the image between ``other`` and this pose (px)."""
        return _mat_shift(self.geometry, self.homography, other.homography)

    def camera_centre(
        self, intrinsics: CameraIntrinsics | None = None
    ) -> tuple[float, float, float]:
        """The camera's position: board x, y (mm) and height above the board plane (mm).

        Without ``intrinsics`` they are estimated from the homography (:func:`estimate_intrinsics`).
        """
        k = intrinsics or estimate_intrinsics(self.homography, self.image_size)
        centre, _ = _decompose(self.homography, k)
        return float(centre[0]), float(centre[1]), float(-centre[2])

    def lifted(self, height_mm: float, intrinsics: CameraIntrinsics | None = None) -> BoardPose:
        """This pose for the plane ``height_mm`` above the markers' plane (e.g. a board's top
        face): a point there lies on the camera ray through the point where that ray meets the
        markers' plane, which is a scaling about the point under the camera. Above the mat is
        the board: with a :attr:`placement`, the lifted pose maps the board's own frame."""
        cx, cy, cz = self.camera_centre(intrinsics)
        if height_mm >= cz:
            raise ValueError(f"a plane at {height_mm:.0f} mm is above the camera ({cz:.0f} mm)")
        k = cz / (cz - height_mm)
        scale = np.array([[k, 0.0, (1 - k) * cx], [0.0, k, (1 - k) * cy], [0.0, 0.0, 1.0]])
        homography = self.homography @ scale
        if self.placement is not None and height_mm > 0:
            homography = homography @ self.placement
        return replace(
            self, homography=homography, inverse=np.linalg.inv(homography), placement=None
        )

    def surface(self, intrinsics: CameraIntrinsics | None = None) -> BoardPose:
        """This pose for the playing surface: the markers' plane raised by the geometry's
        ``board.thickness`` (0 when the file gives none)."""
        thickness = self.geometry.board_height
        return self.lifted(thickness, intrinsics) if thickness else self

    def project_above(
        self,
        points_mm: np.ndarray | Iterable,
        height_mm: float | np.ndarray,
        intrinsics: CameraIntrinsics | None = None,
    ) -> np.ndarray:
        """Image px of board points raised ``height_mm`` (one, or one per point) above the
        plane of this pose: parallax-corrected piece tops (see :meth:`lifted`)."""
        cx, cy, cz = self.camera_centre(intrinsics)
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        if self.placement is not None:
            pts = _apply(self.placement, pts)
        h = np.broadcast_to(np.asarray(height_mm, dtype=np.float64), (len(pts),))
        if np.any(h >= cz):
            raise ValueError(f"points at {h.max():.0f} mm are above the camera ({cz:.0f} mm)")
        k = (cz / (cz - h))[:, None]
        centre = np.array([cx, cy])
        return self.to_image(centre + (pts - centre) * k)


@dataclass(frozen=True)
class Rectification:
    """A top-down view of a board area: ``origin`` and ``size_mm`` on the board, ``px_per_mm``.

    Pixel (u, v) of the image covers board mm ``origin + [u, u + 1) / px_per_mm``.
    """

    origin: tuple[float, float]
    size_mm: tuple[float, float]
    px_per_mm: float

    @classmethod
    def of_mat(cls, geometry: BoardGeometry, px_per_mm: float) -> Rectification:
        """The geometry's whole mat (markers included)."""
        return cls(geometry.mat_origin, geometry.mat_size, px_per_mm)

    @classmethod
    def of_cells(
        cls, geometry: BoardGeometry, px_per_mm: float, margin_mm: float = 0.0
    ) -> Rectification:
        """The bounding box of the cells, grown by ``margin_mm``: less to warp than the mat."""
        pts = np.concatenate([np.asarray(c.polygon, dtype=np.float64) for c in geometry.cells])
        lo, hi = pts.min(axis=0) - margin_mm, pts.max(axis=0) + margin_mm
        return cls(
            (float(lo[0]), float(lo[1])), (float(hi[0] - lo[0]), float(hi[1] - lo[1])), px_per_mm
        )

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the image in px."""
        w, h = self.size_mm
        return max(1, round(w * self.px_per_mm)), max(1, round(h * self.px_per_mm))

    @property
    def matrix(self) -> np.ndarray:
        """Board mm -> rectified px (3x3)."""
        ox, oy = self.origin
        s = self.px_per_mm
        return np.array([[s, 0.0, -ox * s - 0.5], [0.0, s, -oy * s - 0.5], [0.0, 0.0, 1.0]])

    def to_px(self, points_mm: np.ndarray | Iterable) -> np.ndarray:
        """Board points (Nx2 mm) -> rectified image points (Nx2 px)."""
        return _apply(self.matrix, np.asarray(points_mm))

    def to_mm(self, points_px: np.ndarray | Iterable) -> np.ndarray:
        """Rectified image points (Nx2 px) -> board points (Nx2 mm)."""
        return _apply(np.linalg.inv(self.matrix), np.asarray(points_px))

    def warp(
        self, frame: np.ndarray, pose: BoardPose, interpolation: int = cv2.INTER_LINEAR
    ) -> np.ndarray:
        """The top-down image of this area in ``frame`` (``cv2.warpPerspective``, or ``remap``
        through the pose's lens)."""
        to_frame = pose.homography @ np.linalg.inv(self.matrix)
        if pose.lens is None or pose.lens.k == 0.0:
            return cv2.warpPerspective(
                frame,
                to_frame,
                self.size,
                flags=interpolation | cv2.WARP_INVERSE_MAP,
                borderMode=cv2.BORDER_REPLICATE,
            )
        maps = _lens_maps(self.size, to_frame.tobytes(), pose.lens)
        return cv2.remap(frame, maps, None, interpolation, borderMode=cv2.BORDER_REPLICATE)


@lru_cache(maxsize=4)
def _lens_maps(size: tuple[int, int], to_frame: bytes, lens: Lens) -> np.ndarray:
    """Frame position (WxHx2 float32) of every rectified pixel; cached, as a still board keeps
    its homography from frame to frame."""
    w, h = size
    u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    matrix = np.frombuffer(to_frame, dtype=np.float64).reshape(3, 3)
    ideal = _apply(matrix, np.column_stack([u.ravel(), v.ravel()]))
    return lens.distort(ideal).reshape(h, w, 2).astype(np.float32)


def rectify(
    frame: np.ndarray, pose: BoardPose, px_per_mm: float, *, interpolation: int = cv2.INTER_LINEAR
) -> np.ndarray:
    """A top-down image of the pose's mat at ``px_per_mm`` (see :class:`Rectification`)."""
    return Rectification.of_mat(pose.geometry, px_per_mm).warp(frame, pose, interpolation)


def _rigid(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Least-squares rotation + translation mapping points ``src`` to ``dst`` (3x3)."""
    mu_s, mu_d = src.mean(axis=0), dst.mean(axis=0)
    u, _, vt = np.linalg.svd((dst - mu_d).T @ (src - mu_s))
    rot = u @ np.diag([1.0, np.sign(np.linalg.det(u @ vt)) or 1.0]) @ vt
    out = np.eye(3)
    out[:2, :2] = rot
    out[:2, 2] = mu_d - rot @ mu_s
    return out


def _grey(frame: np.ndarray) -> np.ndarray:
    if frame.ndim == 2:
        return frame
    code = cv2.COLOR_BGRA2GRAY if frame.shape[2] == 4 else cv2.COLOR_BGR2GRAY
    return cv2.cvtColor(frame, code)


#: a grey level to linear light (the sRGB-like curve of a camera undone, gamma 2.2)
_LINEAR_LUT = np.round(255.0 * (np.arange(256) / 255.0) ** 2.2).astype(np.uint8)


def _linear(grey: np.ndarray) -> np.ndarray:
    """``grey`` in linear light. Blur spreads light linearly, and a camera's curve then lifts
    the half-way level of a blurred edge towards black: bright paper bleeds into a marker's
    black modules (thin borders, merged bits). Undoing the curve puts the edge back."""
    return cv2.LUT(grey, _LINEAR_LUT)


#: the 3x3 neighbourhood of the eroded last-resort search (:meth:`BoardLocator._eroded`)
_ERODE = np.ones((3, 3), np.uint8)


def _union(
    low: dict[str, dict[int, np.ndarray]], high: dict[str, dict[int, np.ndarray]]
) -> dict[str, dict[int, np.ndarray]]:
    """Two searches' finds (dictionary name -> {id: corners}) together; a marker both found
    keeps ``high``'s corners."""
    return {n: {**low.get(n, {}), **high.get(n, {})} for n in low.keys() | high.keys()}


def _only_in(
    more: dict[str, dict[int, np.ndarray]], found: dict[str, dict[int, np.ndarray]]
) -> set[int]:
    """The ids of the markers that a later search (``more``) showed and the searches before it
    (``found``) did not."""
    return {i for n, quads in more.items() for i in quads.keys() - found.get(n, {}).keys()}


def _among(seen: tuple[int, ...], marked: set[int]) -> tuple[int, ...]:
    """Which of ``seen`` this frame marked (``marked``: read only in linear light, or found only
    from their outlines)."""
    return tuple(i for i in seen if i in marked)


def _ideal(markers: dict[int, np.ndarray], lens: Lens | None) -> dict[int, np.ndarray]:
    """Detected marker corners with the lens's distortion removed."""
    return markers if lens is None else {i: lens.undistort(q) for i, q in markers.items()}


def _merged(
    found: dict[str, dict[int, np.ndarray]], pose: BoardPose | None, fast: dict[int, np.ndarray]
) -> dict[str, dict[int, np.ndarray]]:
    """The search pass's ``found`` markers with the fast pass's (at ``pose``) over them."""
    if pose is None or not fast:
        return found
    name = pose.geometry.aruco_dictionary
    return {**found, name: {**found.get(name, {}), **fast}}


def _box(points: np.ndarray, grow: float, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """The box (x0, y0, x1, y1) around image points, grown by ``grow`` px, within the frame."""
    h, w = shape[:2]
    x0, y0 = np.clip(np.floor(points.min(axis=0) - grow), 0, (w, h)).astype(int)
    x1, y1 = np.clip(np.ceil(points.max(axis=0) + grow), 0, (w, h)).astype(int)
    return int(x0), int(y0), int(x1), int(y1)


def _sides(quads: np.ndarray) -> np.ndarray:
    """Side lengths (px, N x 4) of Nx4x2 marker quads."""
    return np.linalg.norm(quads - np.roll(quads, 1, axis=1), axis=2)


def _side(quads: np.ndarray) -> float:
    """Median side length (px) of Nx4x2 marker quads."""
    return float(np.median(_sides(quads)))


def _dictionary(name: str) -> cv2.aruco.Dictionary:
    key = "DICT_" + name.upper().removeprefix("DICT_")
    if not hasattr(cv2.aruco, key):
        raise ValueError(f"unknown ArUco dictionary {name!r}")
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, key))


def _detector_parameters(
    windows: tuple[int, int, int], error_correction: float, perimeter_rate: float = 0.02
) -> cv2.aruco.DetectorParameters:
    """ArUco parameters with adaptive-threshold windows (min, max, step), the given error
    correction rate and the smallest outline looked at (``perimeter_rate`` times the image's
    longer side); no corner refinement (corners are refined at full resolution afterwards).

    Chosen by ``referee bench vision --zoom`` style measurement over seeded scenes (markers of
    15-60 px, ``docs/vision/pipeline.md``): each marker cell is sampled on an 8 px grid and read
    from its middle 40 % (OpenCV's 4 px and 74 % misread blurred 3 px modules)."""
    params = cv2.aruco.DetectorParameters()
    # the search pass's 0.02: outlines 13 px round and longer on the frame shrunk to 640 px
    params.minMarkerPerimeterRate = perimeter_rate
    win_min, win_max, win_step = windows
    params.adaptiveThreshWinSizeMin = win_min
    params.adaptiveThreshWinSizeMax = win_max
    params.adaptiveThreshWinSizeStep = win_step
    params.perspectiveRemovePixelPerCell = 8
    params.perspectiveRemoveIgnoredMarginPerCell = 0.3
    params.errorCorrectionRate = error_correction
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_NONE
    return params


#: one threshold window, for markers brought to ~MODULE_PX px per module (fast pass)
_FAST_WINDOWS = (7, 7, 10)
#: three windows (5, 15, 25 px), for markers of unknown size (search pass)
_SEARCH_WINDOWS = (5, 25, 10)
#: error correction: a marker looked for by id where the pose puts it may have one bit wrong
#: (4x4 codes are 4 bits apart); the search pass over the whole frame corrects none, as one bit
#: more triples its false markers in textures and hands
_FAST_CORRECTION = 1.0
_SEARCH_CORRECTION = 0.6
#: the fast pass (and the search near a tracked pose) looks for a marker in a box round where
#: the pose puts it: no outline under this share of the side the pose expects is that marker
#: (nor one ``follow`` may take), and the many small outlines of a crop's texture are what a
#: detection's time goes on
_SMALLEST_SIDE = 0.5


def _crop_perimeter_rate(grow: float) -> float:
    """The ``minMarkerPerimeterRate`` of a box round where a pose puts a marker, grown by
    ``grow`` times the expected side each way: an outline of ``_SMALLEST_SIDE`` of that side,
    over the box's side of (1 + 2 grow) sides (a box cut by the frame's edge is smaller, the
    rate larger)."""
    return 4.0 * _SMALLEST_SIDE / (1.0 + 2.0 * grow)


@dataclass
class _Fit:
    homography: np.ndarray
    used: tuple[int, ...]
    rms_px: float
    error_mm: float
    marker_errors: dict[int, float]


def _homography(
    places: dict[int, np.ndarray], markers: dict[int, np.ndarray], ids: tuple[int, ...]
) -> _Fit | None:
    """The least-squares homography through every corner of the markers ``ids``."""
    board = np.concatenate([places[i] for i in ids])
    homography, _ = cv2.findHomography(board, np.concatenate([markers[i] for i in ids]), 0)
    return None if homography is None else _score(homography, places, markers, ids)


def _score(
    homography: np.ndarray,
    places: dict[int, np.ndarray],
    markers: dict[int, np.ndarray],
    ids: tuple[int, ...],
) -> _Fit | None:
    """RMS reprojection error (px) and each marker's mean corner error on the board (mm);
    ``None`` for a degenerate or mirrored homography."""
    if not np.all(np.isfinite(homography)) or np.linalg.det(homography[:2, :2]) <= 0:
        return None
    board = np.concatenate([places[i] for i in ids])
    image = np.concatenate([markers[i] for i in ids])
    rms = float(np.sqrt(np.mean(np.sum((_apply(homography, board) - image) ** 2, axis=1))))
    back = _apply(np.linalg.inv(homography), image)
    errors = np.linalg.norm(back - board, axis=1).reshape(len(ids), 4).mean(axis=1)
    return _Fit(
        homography, ids, rms, float(errors.mean()), dict(zip(ids, map(float, errors), strict=True))
    )


#: a marker's box in the frame (x0, y0, x1, y1), its grey pixels and its corners in them
_Crop = tuple[tuple[int, int, int, int], np.ndarray, np.ndarray]


@dataclass
class _StillRun:
    """The sightings of a board whose markers have not moved in the image since the run began:
    each marker's grey crop then and its corners in it (the reference for :meth:`flow`), and its
    corners (image px, as detected) summed over the frames whose fit kept it."""

    crops: dict[int, _Crop]
    sums: dict[int, np.ndarray]
    counts: dict[int, int]
    #: markers held where the move that began the run took them, until really seen
    carried: set[int] = field(default_factory=set)
    #: crops from earlier runs of the markers not seen when this one began (for :meth:`unmoved`)
    stale: dict[int, _Crop] = field(default_factory=dict)

    @classmethod
    def start(cls, grey: np.ndarray, markers: dict[int, np.ndarray]) -> _StillRun:
        """A run beginning with this frame's markers (each cropped with a side's margin)."""
        return cls({i: _crop(grey, quad) for i, quad in markers.items()}, {}, {})

    def flow(
        self, grey: np.ndarray, markers: dict[int, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The corners of the markers seen in both, where the run began and where pyramidal
        Lucas-Kanade optical flow finds them in ``grey``, in the same crops (None when none is
        seen in both, or one is lost)."""
        before, after = [], []
        for i in sorted(self.crops.keys() & markers.keys()):
            followed = _follow(grey, self.crops[i])
            if followed is None:
                return None
            before.append(followed[0])
            after.append(followed[1])
        if not before:
            return None
        return np.concatenate(before), np.concatenate(after)

    @property
    def last_crops(self) -> dict[int, _Crop]:
        """Every marker's last crop: this run's, or an earlier run's for those it began without."""
        return {**self.stale, **self.crops}

    def unmoved(
        self,
        grey: np.ndarray,
        ids: Iterable[int],
        seen: Iterable[int],
        still_px: float,
        look: StillLook,
    ) -> set[int]:
        """The markers of ``ids`` in place and in view in ``grey``, though the detector did not
        read them, judged against each marker's last crop (this run's, or an earlier run's when
        this one began without it): optical flow follows every corner to less than
        ``still_px`` from where it was (nothing lies over a marker whose corners are all found
        unmoved), or ``look`` finds its pixels as like its crop as the fresh noise of this
        frame's markers ``seen`` (read, with crops) makes theirs (:mod:`vision.still_look`)."""
        crops = self.last_crops
        asked = crops.keys() & set(ids)
        unmoved = set()
        for i in asked:
            followed = _follow(grey, crops[i])
            if followed is not None and _still(followed, still_px):
                unmoved.add(i)
        rest = asked - unmoved
        yard = [_unlike(grey, crops[j]) for j in crops.keys() & set(seen)] if rest else []
        if yard:
            yardstick = float(np.median(yard))
            unmoved |= {i for i in rest if look.in_place(_unlike(grey, crops[i]), yardstick)}
        return unmoved

    def moved(
        self, grey: np.ndarray, markers: dict[int, np.ndarray], still_px: float, carry: int
    ) -> _StillRun | None:
        """None while every marker seen in both has moved less than ``still_px``; else a new
        run from this frame, holding the markers not seen in it where the image's motion (a
        similarity through the flow) took them, when at least ``carry`` markers were
        followed."""
        flow = self.flow(grey, markers)
        if flow is not None and _still(flow, still_px):
            return None
        run = _StillRun.start(grey, markers)
        run.stale = {i: c for i, c in self.last_crops.items() if i not in markers}
        carried = flow is not None and len(flow[0]) >= 4 * carry
        motion = cv2.estimateAffinePartial2D(*flow)[0] if carried else None
        if motion is not None:
            for i in self.sums.keys() - markers.keys():
                run.sums[i] = cv2.transform(self.mean(i)[None], motion)[0]
                run.counts[i] = 1
                run.carried.add(i)
        return run

    def mean(self, i: int) -> np.ndarray:
        """Marker ``i``'s mean corners over the run."""
        return self.sums[i] / self.counts[i]

    def add(
        self, grey: np.ndarray, markers: dict[int, np.ndarray], used: Iterable[int]
    ) -> dict[int, np.ndarray]:
        """Count this frame's sightings of the markers ``used`` (up to STILL_FITS each), and crop
        those of ``markers`` read for the first time in the run from ``grey`` (so that they too
        are judged against this run's look when they go unread); the mean corners of every
        marker the run has seen."""
        for i in markers.keys() - self.crops.keys():
            self.crops[i] = _crop(grey, markers[i])
        for i in used:
            if i in self.carried:  # really seen: the carried guess gives way
                self.carried.discard(i)
                del self.sums[i], self.counts[i]
            if self.counts.get(i, 0) < STILL_FITS:
                self.sums[i] = self.sums.get(i, 0.0) + markers[i]
                self.counts[i] = self.counts.get(i, 0) + 1
        return {i: self.mean(i) for i in self.sums}


def _crop(grey: np.ndarray, quad: np.ndarray) -> _Crop:
    """A marker's crop of ``grey`` round its corners ``quad``, with a side's margin."""
    x0, y0, x1, y1 = box = _box(quad, _side(quad[None]), grey.shape)
    local = (quad - np.float64([x0, y0])).astype(np.float32).reshape(-1, 1, 2)
    return box, grey[y0:y1, x0:x1].copy(), local


def _still(flow: tuple[np.ndarray, np.ndarray], still_px: float) -> bool:
    """Whether every corner of ``flow`` (where they were, where they are) moved less than
    ``still_px``."""
    return bool(np.linalg.norm(flow[1] - flow[0], axis=1).max() < still_px)


def _unlike(grey: np.ndarray, crop: _Crop) -> float:
    """How unlike its ``crop`` (box, grey pixels, corners in them) a marker's pixels inside its
    outline are in ``grey`` (:func:`~vision.still_look.unlikeness`)."""
    (x0, y0, x1, y1), before, local = crop
    now = grey[y0:y1, x0:x1]
    if now.shape != before.shape:
        return 1.0
    return unlikeness(before, now, outline_mask(before.shape, local))


#: when the optical flow of a still run stops refining a corner
_LK_STOP = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 0.01)


def _follow(grey: np.ndarray, crop: _Crop) -> tuple[np.ndarray, np.ndarray] | None:
    """A marker's corners in its ``crop`` (box, grey pixels, corners in them) and where
    pyramidal Lucas-Kanade flow finds them in ``grey`` (image px); None when a corner is lost."""
    (x0, y0, x1, y1), before, local = crop
    now = grey[y0:y1, x0:x1]
    if now.shape != before.shape:
        return None
    found, status, _ = cv2.calcOpticalFlowPyrLK(
        before, now, local, None, winSize=STILL_WINDOW, maxLevel=2, criteria=_LK_STOP
    )
    if found is None or not status.all():
        return None
    origin = np.float32([x0, y0])
    return local.reshape(-1, 2) + origin, found.reshape(-1, 2) + origin


class BoardLocator:
    """Finds and tracks the board of one of ``geometries`` (default: every known game).

    ``locate(frame, t)`` returns a :class:`BoardPose` or raises :class:`BoardNotFound`.

    - ``detect_scale``: markers are searched on the grey frame resized by this factor (full
      resolution when fewer than FULL_FIT_MARKERS of a game's are found, and then in linear
      light); a tracked board's
      markers are looked for first where its pose puts them, each crop resized to their size,
      with one threshold window, and so are the markers a fit misses. Corners are then refined
      with ``cornerSubPix`` on the full-resolution frame.
    - ``tolerance_mm``: a marker whose corners are further than this (mean) from the fit is
      left out as misplaced, as long as most of the markers seen agree with each other.
    - ``max_age``: seconds a fitted pose is reused while too few markers are visible.
    - ``min_markers``: markers needed to fit a pose without a recent one to track (one
      marker's corners fit a homography exactly, with nothing to check it).
    - ``still_px``: while every marker seen has moved less than this in the image (optical
      flow of its corners) since a still run began, the pose is fitted through each marker's
      mean corners over the run (up to STILL_FITS sightings): a board that does not move in
      the image does not move in its pose, however differently its blurred markers are found
      from frame to frame.
    - ``deadband_px``: a new pose moving the mat corners less than this keeps the previous
      homography, so a still board gives identical rectified images.
    - ``lens_k``: the camera's radial distortion (:class:`Lens`); ``None`` estimates it from the
      first fits that use at least five markers (0 for a pinhole camera).
    """

    #: the lens is estimated on this many fits using at least CALIBRATION_MARKERS markers
    CALIBRATION_FITS = 3
    CALIBRATION_MARKERS = 5
    #: markers needed for a full homography while a recent pose can be corrected instead
    FULL_FIT_MARKERS = 3
    #: a marker is "established" after this many sightings and forgotten after ``forget_after``
    ESTABLISHED_HITS = 3
    #: module (bit) size in px the fast pass brings markers to, and its largest enlargement
    MODULE_PX = 4.0
    MAX_UPSCALE = 3.0
    #: the box a missing marker is looked for in, grown by this times its side: a first fit
    #: (no lens estimate yet, markers on one side) may put a far marker most of a side off
    RECOVER_GROW = 1.25
    #: the box the search pass looks in for a marker the fast pass missed, grown by this times
    #: its side: its threshold windows need the paper round the marker (in boxes grown by the
    #: fast pass's 0.75 it missed markers it read in the whole frame)
    SEARCH_GROW = 1.25
    #: the eroded last resort (:meth:`_eroded`) counts only when it leaves this many markers
    ERODED_MARKERS = 2
    #: a board placement that moves the outline's corners less than this (mm) is not news
    PLACEMENT_DEADBAND_MM = 0.5

    def __init__(
        self,
        geometries: Iterable[BoardGeometry] | None = None,
        *,
        detect_scale: float = 0.5,
        tolerance_mm: float = 6.0,
        max_age: float = 2.0,
        min_markers: int = 2,
        deadband_px: float = 0.5,
        still_px: float = 0.25,
        forget_after: float = 10.0,
        lens_k: float | None = None,
        find_placement: bool = True,
    ) -> None:
        geoms = tuple(geometries) if geometries is not None else _all_geometries()
        if not geoms:
            raise ValueError("no board geometry to look for")
        self.geometries = geoms
        self.detect_scale = detect_scale
        self.tolerance_mm = tolerance_mm
        self.max_age = max_age
        self.min_markers = min_markers
        self.deadband_px = deadband_px
        self.still_px = still_px
        self.forget_after = forget_after
        self.lens_k = lens_k
        self._lens_k = lens_k or 0.0
        self._lens_estimates: list[float] = []
        names = sorted({g.aruco_dictionary for g in geoms})
        search = _detector_parameters(_SEARCH_WINDOWS, _SEARCH_CORRECTION)
        #: the detectors of boxes round where a pose puts a marker (:meth:`_crop_detector`)
        self._crops: dict[tuple[str, float, bool], cv2.aruco.ArucoDetector] = {}
        self._search = {n: cv2.aruco.ArucoDetector(_dictionary(n), search) for n in names}
        #: modules per marker side (data bits + black border), for the scale and refinement
        self._modules = {n: _dictionary(n).markerSize + 2 for n in names}
        self._places = {
            g.game: {m.id: m.corners().astype(np.float64) for m in g.markers} for g in geoms
        }
        self._placements = {g.game: BoardPlacement(g) for g in geoms} if find_placement else {}
        self._pose: BoardPose | None = None
        #: the size of the frames seen (another size: :meth:`_new_camera_mode`)
        self._image_size: tuple[int, int] | None = None
        #: the markers' sightings since they last moved in the image
        self._run: _StillRun | None = None
        #: a placement seen once, waiting for the next frame to confirm it
        self._candidate: np.ndarray | None = None
        self._hits: dict[int, int] = {}
        self._last_seen: dict[int, float] = {}
        #: this frame's markers read only in linear light
        self._bled: set[int] = set()
        #: this frame's markers found only by the registration
        self._outlined: set[int] = set()

    @classmethod
    def for_game(cls, game: str, **options: Any) -> BoardLocator:
        """A locator for ``game`` only (its ``hardware/boards`` geometry)."""
        return cls([load_geometry(game)], **options)

    @property
    def pose(self) -> BoardPose | None:
        """The last fitted pose (``None`` before the first, or after :meth:`reset`)."""
        return self._pose

    def reset(self) -> None:
        """Forget the tracked board (e.g. a new game is set up)."""
        self._pose = None
        self._run = None
        self._candidate = None
        self._hits.clear()
        self._last_seen.clear()

    def _new_camera_mode(self) -> None:
        """Frames of another size than the last: the camera was set up anew (another mode may
        also crop the sensor), so the tracked board and, unless it was given, the lens are found
        afresh."""
        self.reset()
        if self.lens_k is None:
            self._lens_estimates.clear()
            self._lens_k = 0.0

    # ----------------------------------------------------------------- detection
    def _detect(
        self, grey: np.ndarray, expected: frozenset[int]
    ) -> tuple[dict[str, dict[int, np.ndarray]], frozenset[int]]:
        """Markers in ``grey``: dictionary name -> {id: 4x2 corners in full-resolution px}, and
        the ids the fast pass already looked for where the tracked pose puts them.

        While tracking, the fast pass (:meth:`_look` at the tracked pose) runs first. The search
        pass (three threshold windows at ``detect_scale``) runs only when it misses one of the
        ``expected`` markers or decodes fewer than FULL_FIT_MARKERS (those it only follows by
        their outlines do not count): on the whole frame, or, when it decoded that many, only
        where the pose puts the markers it did not decode (:meth:`_search_near`). What the fast
        pass found is kept over the search pass's finds, but for the markers it only followed
        and the search decoded. Without the fast pass's finds, the search is done again at full
        resolution when it finds fewer than FULL_FIT_MARKERS of a game's markers (small
        markers, far away), and what either found is kept. Still fewer (without the fast pass's
        finds): the same search in linear light (:func:`_linear`) adds the markers only it
        shows, and fewer again, both eroded (:meth:`_eroded`).
        """
        fast: dict[int, np.ndarray] = {}
        looked: frozenset[int] = frozenset()
        pose = self._pose
        enough = self.FULL_FIT_MARKERS
        near = False  # the fast pass decoded enough: the board is where the pose puts it
        if pose is not None and expected:
            looked = frozenset(self._places[pose.game])
            fast = self._look(grey, pose.geometry, pose.homography, pose.lens, looked)
            decoded = fast.keys() - self._outlined  # an outline followed is weaker evidence
            near = len(decoded) >= min(enough, len(looked))
            if near and expected <= fast.keys():
                return {pose.geometry.aruco_dictionary: fast}, looked
        if near and pose is not None:
            found = self._search_near(grey, pose, looked - decoded)
        else:
            found = self._search_at(grey, fast)
        self._refine(grey, found)
        searched = found.get(pose.geometry.aruco_dictionary, {}) if fast and pose else {}
        superseded = self._outlined & searched.keys()  # followed by the fast pass, decoded here
        self._outlined -= superseded
        if not fast and self._most(found) < enough:
            # bright paper bled into the markers' black: search again in linear light, and
            # keep what the frame as it is showed over what only the linear one did
            linear = _linear(grey)
            more = self._search_at(linear, fast)
            self._refine(linear, more)
            self._bled |= _only_in(more, found)  # bled: read only so
            found = _union(more, found)
            if self._most(found) < enough:
                found = self._eroded(grey, linear, found)
            if self._most(found) < enough:
                registered = self._registered(grey, linear)
                self._outlined |= _only_in(registered, found)
                found = _union(registered, found)
        kept = {i: q for i, q in fast.items() if i not in superseded}
        return _merged(found, pose, kept), looked

    def _eroded(
        self, grey: np.ndarray, linear: np.ndarray, found: dict[str, dict[int, np.ndarray]]
    ) -> dict[str, dict[int, np.ndarray]]:
        """The last resort, when neither the frame nor its linear copy shows FULL_FIT_MARKERS
        of a game's markers: the search pass (at ``detect_scale`` only) on both eroded by a
        pixel (the darkest of each 3x3), which grows a black border that bright, blurred paper
        has eaten to a pixel back to a readable one, and its corners back where they were.
        What was found before is kept; the markers only this finds are marked bled. They are
        kept only when ERODED_MARKERS of a game's markers are then known: one marker's four
        corners fit a homography exactly, with nothing left over to check it (one found so put
        a board 276 px off)."""
        more: dict[str, dict[int, np.ndarray]] = {}
        for image in (linear, grey):  # the frame's own finds kept over its linear copy's
            eroded = cv2.erode(image, _ERODE)
            extra = self._detect_at(eroded, self.detect_scale, self._search)
            self._refine(eroded, extra)
            more = _union(more, extra)
        merged = _union(more, found)
        if self._most(merged) < self.ERODED_MARKERS:
            return found
        self._bled |= _only_in(more, found)  # bled: read only so
        return merged

    def _registered(self, grey: np.ndarray, linear: np.ndarray) -> dict[str, dict[int, np.ndarray]]:
        """The very last resort, when even the eroded search leaves fewer than FULL_FIT_MARKERS
        of a game's markers (none, or two whose degraded corners fit the far side of the mat
        badly): the mat registered from its markers' outlines, their bits read all together
        (:func:`vision.register.register`) on the search pass's candidates, accepted and
        rejected, in the frame and its linear copy at full resolution. The game whose mat most
        markers confirm; nothing when none holds. Markers decoded before keep their corners."""
        best: tuple[str, dict[int, np.ndarray]] | None = None
        for name, detector in self._search.items():
            quads = [
                np.asarray(q, np.float64).reshape(4, 2)
                for image in (linear, grey)
                for part in detector.detectMarkers(image)[::2]  # accepted and rejected outlines
                for q in part
            ]
            if not quads:
                continue
            candidates, dictionary = np.stack(quads), _dictionary(name)
            for geometry in self.geometries:
                if geometry.aruco_dictionary != name:
                    continue
                layout = self._places[geometry.game]
                found = register(linear, candidates, layout, dictionary)
                if found is not None and (best is None or len(found.markers) > len(best[1])):
                    best = (name, found.markers)
        if best is None:
            return {}
        registered = {best[0]: dict(best[1])}
        self._refine(linear, registered)
        return registered

    def _search_at(
        self, grey: np.ndarray, fast: dict[int, np.ndarray]
    ) -> dict[str, dict[int, np.ndarray]]:
        """The search pass on ``grey`` at ``detect_scale``, and (without the fast pass's
        ``fast`` finds, and fewer than FULL_FIT_MARKERS of a game's markers found) at full
        resolution too: what either found."""
        found = self._detect_at(grey, self.detect_scale, self._search)
        if self.detect_scale < 1.0 and not fast and self._most(found) < self.FULL_FIT_MARKERS:
            # the full resolution's finds, and those only the smaller image showed (a blurred
            # frame's markers read better shrunk)
            full = self._detect_at(grey, 1.0, self._search)
            found = _union(found, full)
        return found

    def _search_near(
        self, grey: np.ndarray, pose: BoardPose, ids: Iterable[int]
    ) -> dict[str, dict[int, np.ndarray]]:
        """The search pass (its threshold windows and error correction, at ``detect_scale``)
        on the boxes where ``pose`` puts the markers ``ids``, not on the whole frame: once the
        fast pass has decoded enough markers where the pose puts them the mat has not moved,
        and a marker it missed (a hand over it, glare) can only be in its box. Each box is
        cut on the shrunk image's pixel grid, so it is shrunk to the very pixels the whole
        frame would be."""
        name = pose.geometry.aruco_dictionary
        detector = {name: self._crop_detector(name, self.SEARCH_GROW, search=True)}
        found: dict[int, np.ndarray] = {}
        step = round(1.0 / self.detect_scale) if (1.0 / self.detect_scale).is_integer() else 1
        boxes = self._boxes(
            pose.geometry, pose.homography, pose.lens, list(ids), self.SEARCH_GROW, grey, step
        )
        for i, _, _, (x0, y0, x1, y1) in boxes:
            crop = self._detect_at(grey[y0:y1, x0:x1], self.detect_scale, detector, (x0, y0))
            if i in crop[name]:
                found[i] = crop[name][i]
        return {name: found}

    def _most(self, found: dict[str, dict[int, np.ndarray]]) -> int:
        """The most markers of one geometry in ``found``."""
        return max(
            len(found.get(g.aruco_dictionary, {}).keys() & g.marker_ids) for g in self.geometries
        )

    def _look(
        self,
        grey: np.ndarray,
        geometry: BoardGeometry,
        homography: np.ndarray,
        lens: Lens | None,
        ids: Iterable[int],
        grow: float = 0.75,
        gate: float = TOLERANCE,
    ) -> dict[int, np.ndarray]:
        """The markers ``ids`` looked for where ``homography`` (board mm -> ideal px, seen
        through ``lens``) puts them: each in a box grown by ``grow`` times its side, resized so
        that a marker module is MODULE_PX px (enlarged at most MAX_UPSCALE times), with one
        threshold window; a marker the crop does not show is looked for in its linear copy
        (:func:`_linear`), and one neither decodes is followed by its outline within ``gate``
        sides (:func:`vision.register.follow`). Corners are refined at full resolution."""
        name = geometry.aruco_dictionary
        detector = {name: self._crop_detector(name, grow)}
        markers: dict[int, np.ndarray] = {}
        bled: dict[int, np.ndarray] = {}
        outlined: dict[int, np.ndarray] = {}
        dictionary = _dictionary(name)
        boxes = self._boxes(geometry, homography, lens, list(ids), grow, grey)
        for i, quad, side, (x0, y0, x1, y1) in boxes:
            scale = min(self.MAX_UPSCALE, self.MODULE_PX * self._modules[name] / side)
            outlines: list[np.ndarray] = []  # the outlines rejected in the crop
            crop = self._detect_at(grey[y0:y1, x0:x1], scale, detector, (x0, y0), outlines)
            crop = crop[name]
            if i in crop:
                markers[i] = crop[i]
                continue
            # bright paper bled into its black? In linear light, and never shrunk: a bled
            # marker needs every pixel it has
            linear = _linear(grey[y0:y1, x0:x1])
            crop = self._detect_at(linear, max(scale, 1.0), detector, (x0, y0), outlines)[name]
            if i in crop:
                local = {name: {i: crop[i] - (x0, y0)}}  # refined on the crop's own pixels
                self._refine(linear, local)
                bled[i] = local[name][i] + (x0, y0)
                self._bled.add(i)
                continue
            # its bits past reading alone: its outline where the pose puts it
            if not outlines:
                continue
            quads = np.stack(outlines) - (x0, y0)
            found = follow(linear, quad - (x0, y0), quads, i, dictionary, gate)
            if found is not None:
                outlined[i] = found + np.float64([x0, y0])
                self._outlined.add(i)
        self._refine(grey, {name: markers})
        return {**markers, **bled, **outlined}

    def _boxes(
        self,
        geometry: BoardGeometry,
        homography: np.ndarray,
        lens: Lens | None,
        ids: list[int],
        grow: float,
        grey: np.ndarray,
        step: int = 1,
    ) -> list[tuple[int, np.ndarray, float, tuple[int, int, int, int]]]:
        """Where ``homography`` (board mm -> ideal px, seen through ``lens``) puts each of the
        markers ``ids`` (all in one projection), and the box round it in ``grey``, grown by
        ``grow`` times its side, its top-left corner on a grid of ``step`` px: id, 4x2 quad
        (px), median side and box (x0, y0, x1, y1), for the markers whose box the frame holds
        a side of (not (partly) out of the frame)."""
        if not ids:
            return []
        places = self._places[geometry.game]
        quads = _apply(homography, np.concatenate([places[i] for i in ids]))
        quads = (quads if lens is None else lens.distort(quads)).reshape(-1, 4, 2)
        sides = np.median(_sides(quads), axis=1)
        boxes = []
        for i, quad, side in zip(ids, quads, sides.tolist(), strict=True):
            x0, y0, x1, y1 = _box(quad, grow * side, grey.shape)
            x0, y0 = x0 - x0 % step, y0 - y0 % step
            if min(x1 - x0, y1 - y0) >= side:
                boxes.append((i, quad, side, (x0, y0, x1, y1)))
        return boxes

    def _crop_detector(
        self, name: str, grow: float, search: bool = False
    ) -> cv2.aruco.ArucoDetector:
        """The detector of dictionary ``name`` for boxes grown by ``grow`` times a marker's side
        round where a pose puts it: the fast pass's threshold window and error correction (with
        ``search``, the search pass's), and no outline under ``_SMALLEST_SIDE`` of the side the
        pose expects (:func:`_crop_perimeter_rate`)."""
        key = (name, grow, search)
        detector = self._crops.get(key)
        if detector is None:
            windows, correction = (
                (_SEARCH_WINDOWS, _SEARCH_CORRECTION)
                if search
                else (_FAST_WINDOWS, _FAST_CORRECTION)
            )
            params = _detector_parameters(windows, correction, _crop_perimeter_rate(grow))
            detector = self._crops[key] = cv2.aruco.ArucoDetector(_dictionary(name), params)
        return detector

    def _recover(
        self,
        grey: np.ndarray,
        geometry: BoardGeometry,
        lens: Lens | None,
        markers: dict[int, np.ndarray],
        fit: _Fit,
        prior: BoardPose | None,
        skip: frozenset[int],
    ) -> tuple[dict[int, np.ndarray], _Fit]:
        """``markers`` and ``fit`` with the geometry's missing markers that lie wholly in the
        frame (but those in ``skip``, already looked for this frame) looked for where the fit
        puts them (:meth:`_look`): markers too small or blurred for the search pass. Each find
        refits, and the rest are looked for again where the new fit puts them (a fit through
        the markers of one side of the mat is a poor guess of the far side's)."""
        h, w = grey.shape[:2]
        while True:
            missing = []
            for i, corners in self._places[geometry.game].items():
                if i in markers or i in skip:
                    continue
                quad = _apply(fit.homography, corners)
                quad = quad if lens is None else lens.distort(quad)
                if np.all((quad >= 0) & (quad <= (w - 1, h - 1))):
                    missing.append(i)
            if not missing:
                return markers, fit
            extra = self._look(
                grey, geometry, fit.homography, lens, missing, self.RECOVER_GROW, GATE
            )
            more = {**markers, **extra}
            refit = self._fit(geometry, _ideal(more, lens), prior) if extra else None
            if refit is None:
                return markers, fit
            markers, fit = more, refit

    @staticmethod
    def _detect_at(
        image: np.ndarray,
        scale: float,
        detectors: dict[str, cv2.aruco.ArucoDetector],
        origin: tuple[int, int] = (0, 0),
        outlines: list[np.ndarray] | None = None,
    ) -> dict[str, dict[int, np.ndarray]]:
        """Detect on ``image`` (a crop of the frame at ``origin``) resized by ``scale``; the
        outlines the detectors rejected (4x2 px of the frame) are added to ``outlines``."""
        if scale < 1.0:
            area = (1.0 / scale).is_integer()  # OpenCV's fast INTER_AREA path, else bilinear
            method = cv2.INTER_AREA if area else cv2.INTER_LINEAR
            image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=method)
        elif scale > 1.0:
            image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_LINEAR)
        found: dict[str, dict[int, np.ndarray]] = {}
        for name, detector in detectors.items():
            corners, ids, rejected = detector.detectMarkers(image)
            if outlines is not None:
                outlines.extend(
                    (q.reshape(4, 2).astype(np.float64) + 0.5) / scale - 0.5 + origin
                    for q in rejected
                )
            markers: dict[int, np.ndarray] = {}
            duplicates: set[int] = set()
            for quad, marker_id in zip(corners, [] if ids is None else ids.ravel(), strict=True):
                key = int(marker_id)
                if key in markers:
                    duplicates.add(key)
                quad_px = (quad.reshape(4, 2).astype(np.float64) + 0.5) / scale - 0.5
                markers[key] = quad_px + origin
            found[name] = {k: v for k, v in markers.items() if k not in duplicates}
        return found

    def _refine(self, grey: np.ndarray, found: dict[str, dict[int, np.ndarray]]) -> None:
        criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_COUNT, 30, 0.01)
        for name, markers in found.items():
            if not markers:
                continue
            ids = list(markers)
            quads = np.stack([markers[i] for i in ids])
            module = _side(quads) / self._modules[name]
            win = int(max(2, min(5, round(0.4 * module))))
            pts = quads.reshape(-1, 1, 2).astype(np.float32)
            cv2.cornerSubPix(grey, pts, (win, win), (-1, -1), criteria)
            refined = pts.reshape(-1, 4, 2).astype(np.float64)
            for i, quad in zip(ids, refined, strict=True):
                markers[i] = quad

    # ----------------------------------------------------------------- localisation
    def locate(self, frame: np.ndarray, t: float | None = None) -> BoardPose:
        """The board's pose in ``frame`` (captured at ``t`` s); :class:`BoardNotFound` if none."""
        now = time.monotonic() if t is None else float(t)
        image_size = (int(frame.shape[1]), int(frame.shape[0]))
        if self._image_size not in (None, image_size):
            self._new_camera_mode()
        self._image_size = image_size
        grey = _grey(frame)
        self._bled = set()
        self._outlined = set()
        found, looked = self._detect(grey, self._expected(now))
        geometry, markers = self._recognise(found)
        prior = self._fresh_prior(now, geometry)
        if geometry is None:
            if prior is not None:
                return self._tracked(prior, now, ())
            seen_any = any(found.values())
            raise BoardNotFound(UNKNOWN_MARKERS if seen_any else NO_MARKERS)
        if prior is None and self._pose is not None and self._pose.game != geometry.game:
            self.reset()
        lens = Lens(self._lens_k, image_size) if self._lens_k else None
        fit = None
        if len(markers) >= self.min_markers or prior is not None:
            fit = self._fit(geometry, _ideal(markers, lens), prior)
        if fit is not None:
            markers, fit = self._recover(grey, geometry, lens, markers, fit, prior, looked)
        seen = tuple(sorted(markers))
        self._note_sightings(seen, now)
        if len(markers) < self.min_markers and prior is None:
            raise BoardNotFound(TOO_FEW_MARKERS, f"{len(markers)} of {geometry.game}'s markers")
        ideal = _ideal(markers, lens)
        if fit is None:
            if prior is not None:
                return self._tracked(prior, now, seen)
            raise BoardNotFound(BAD_FIT, f"{geometry.game}: markers {list(seen)}")
        if prior is not None:
            fit = self._deadband(self._steady(grey, markers, ideal, fit, lens, prior), prior, ideal)
        else:
            self._run = _StillRun.start(grey, markers)
            self._run.add(grey, markers, fit.used)
        marker_px = _side(np.stack(list(markers.values())))
        self._calibrate(geometry, markers, fit.used, image_size)
        pose = BoardPose(
            geometry=geometry,
            homography=fit.homography,
            inverse=np.linalg.inv(fit.homography),
            image_size=image_size,
            markers_seen=seen,
            markers_used=fit.used,
            markers_missing=self._missing(seen, now, grey),
            reprojection_error=fit.rms_px,
            error_mm=fit.error_mm,
            confidence=self._confidence(geometry, fit),
            t=now,
            lens=lens,
            marker_px=marker_px,
            markers_bled=_among(seen, self._bled),
            markers_registered=_among(seen, self._outlined),
        )
        pose = replace(pose, placement=self._placement(frame, pose, prior))
        self._pose = pose
        return pose

    def _placement(
        self, frame: np.ndarray, pose: BoardPose, prior: BoardPose | None
    ) -> np.ndarray | None:
        """Where the board lies on its mat in ``frame`` (None: on its outline). While a board
        is tracked, the prior's placement is kept when the edges say nothing this frame (a
        hand over them) or barely differ from it (so that a still board keeps byte-identical
        images), and while the markers hold still a new one is taken only once two frames in a
        row agree on it (one frame's misreading of its edges does not move the board)."""
        finder = self._placements.get(pose.game)
        if finder is None:
            return None
        found = finder.estimate(frame, pose)
        kept = prior.placement if prior is not None else None
        if found is None:
            return kept
        deadband = self.PLACEMENT_DEADBAND_MM
        if placement_shift(finder, found, np.eye(3) if kept is None else kept) < deadband:
            self._candidate = None
            return kept
        steady = prior is not None and pose.shift(prior) < self.deadband_px
        if steady and (
            self._candidate is None or placement_shift(finder, found, self._candidate) >= deadband
        ):
            self._candidate = found
            return kept
        self._candidate = None
        return None if placement_shift(finder, found, np.eye(3)) < deadband else found

    def _calibrate(
        self,
        geometry: BoardGeometry,
        markers: dict[int, np.ndarray],
        used: tuple[int, ...],
        image_size: tuple[int, int],
    ) -> None:
        """Estimate the lens from the first few fits with enough markers; then keep it."""
        if self.lens_k is not None or len(self._lens_estimates) >= self.CALIBRATION_FITS:
            return
        if len(used) < self.CALIBRATION_MARKERS:
            return
        places = self._places[geometry.game]
        board = np.concatenate([places[i] for i in used])
        lens = estimate_lens(board, np.concatenate([markers[i] for i in used]), image_size)
        if lens is not None:
            self._lens_estimates.append(lens.k)
            self._lens_k = float(np.median(self._lens_estimates))

    def _recognise(
        self, found: dict[str, dict[int, np.ndarray]]
    ) -> tuple[BoardGeometry | None, dict[int, np.ndarray]]:
        """The geometry with the most detected ids (ties: the tracked game, then by name)."""
        tracked = self._pose.game if self._pose is not None else None
        candidates = []
        for g in self.geometries:
            seen = {i: q for i, q in found.get(g.aruco_dictionary, {}).items() if i in g.marker_ids}
            if seen:
                candidates.append(((-len(seen), g.game != tracked, g.game), g, seen))
        if not candidates:
            return None, {}
        _, geometry, seen = min(candidates, key=lambda c: c[0])
        return geometry, seen

    def _fresh_prior(self, now: float, geometry: BoardGeometry | None) -> BoardPose | None:
        pose = self._pose
        if pose is None or now - pose.t > self.max_age:
            return None
        if geometry is not None and geometry.game != pose.game:
            return None
        return pose

    def _tracked(self, prior: BoardPose, now: float, seen: tuple[int, ...]) -> BoardPose:
        age = now - prior.t
        return replace(
            prior,
            markers_seen=seen,
            markers_used=(),
            markers_missing=self._missing(seen, now),
            confidence=prior.confidence * max(0.0, 1.0 - age / self.max_age),
            t=now,
            tracked=True,
            age=age,
            markers_bled=_among(seen, self._bled),
            markers_registered=_among(seen, self._outlined),
        )

    def _note_sightings(self, seen: tuple[int, ...], now: float) -> None:
        for i in seen:
            self._hits[i] = self._hits.get(i, 0) + 1
            self._last_seen[i] = now

    def _expected(self, now: float) -> frozenset[int]:
        """Markers seen steadily and recently: their absence means something hides them."""
        return frozenset(
            i
            for i, hits in self._hits.items()
            if hits >= self.ESTABLISHED_HITS and now - self._last_seen[i] <= self.forget_after
        )

    def _missing(
        self, seen: tuple[int, ...], now: float, grey: np.ndarray | None = None
    ) -> tuple[int, ...]:
        """Established markers not ``seen``, less (with this frame's ``grey``) those the still
        run finds unmoved and in view: a marker at the edge of what the detector reads may go
        unread for a while with nothing over it."""
        unseen = self._expected(now) - set(seen)
        if grey is not None and unseen and self._run is not None:
            unseen -= self._run.unmoved(grey, unseen, seen, self.still_px, still_look())
        return tuple(sorted(unseen))

    def _fit(
        self, geometry: BoardGeometry, markers: dict[int, np.ndarray], prior: BoardPose | None
    ) -> _Fit | None:
        """Move the prior rigidly when few markers are seen, else fit a homography; markers off
        by more than ``tolerance_mm`` are left out while most agree (see :meth:`_consensus`)."""
        places = self._places[geometry.game]
        ids = tuple(sorted(markers))
        if prior is not None and len(ids) < self.FULL_FIT_MARKERS:
            # the board slid on the table: move it rigidly in its own plane
            board = np.concatenate([places[i] for i in ids])
            moved = _apply(prior.inverse, np.concatenate([markers[i] for i in ids]))
            fit = _score(prior.homography @ _rigid(board, moved), places, markers, ids)
            if fit is not None and fit.error_mm <= self.tolerance_mm / 2:
                return fit
        fit = _homography(places, markers, ids)
        if fit is None or max(fit.marker_errors.values()) <= self.tolerance_mm:
            return fit
        if len(ids) <= 2:
            return None  # two markers disagree: no telling which one is off
        # some marker is off: find the largest set of markers that agree (RANSAC over markers)
        inliers = self._consensus(places, markers, ids)
        if 2 * len(inliers) <= len(ids):
            return None  # most markers disagree: the wrong geometry, or a misread
        fit = _homography(places, markers, inliers)
        if fit is None or max(fit.marker_errors.values()) > self.tolerance_mm:
            return None
        return fit

    def _consensus(
        self, places: dict[int, np.ndarray], markers: dict[int, np.ndarray], ids: tuple[int, ...]
    ) -> tuple[int, ...]:
        """The most markers that agree within ``tolerance_mm``. The usual case, one sticker off
        its place, is settled by leaving each marker out in turn; otherwise exhaustive RANSAC
        over marker subsets (at most 8 markers: 56 small fits through 3 of them, 2 when only 3
        are seen)."""
        best: tuple[int, float, tuple[int, ...]] = (0, 0.0, ())
        if len(ids) > 3:
            for left_out in ids:
                rest = tuple(i for i in ids if i != left_out)
                fit = _homography(places, markers, rest)
                if fit is not None and max(fit.marker_errors.values()) <= self.tolerance_mm:
                    spread = sum(fit.marker_errors.values())
                    if (len(rest), -spread) > best[:2]:
                        best = (len(rest), -spread, rest)
            if best[2]:
                return best[2]
        for subset in combinations(ids, 3 if len(ids) > 3 else 2):
            fit = _homography(places, markers, subset)
            if fit is None:
                continue
            fit = _score(fit.homography, places, markers, ids)
            if fit is None:
                continue
            inliers = tuple(i for i in ids if fit.marker_errors[i] <= self.tolerance_mm)
            spread = sum(fit.marker_errors[i] for i in inliers)
            if (len(inliers), -spread) > best[:2]:
                best = (len(inliers), -spread, inliers)
        return best[2]

    def _steady(
        self,
        grey: np.ndarray,
        markers: dict[int, np.ndarray],
        ideal: dict[int, np.ndarray],
        fit: _Fit,
        lens: Lens | None,
        prior: BoardPose,
    ) -> _Fit:
        """``fit`` (through ``ideal``: this frame's ``markers`` through the lens), or while the
        markers have not moved in the image since the still run began, the fit through each
        marker's mean corners over the run (see ``still_px``), scored on this frame's markers
        that its fit kept; a move starts a new run, which holds the markers not seen where the
        move took them when FULL_FIT_MARKERS were followed (after fewer, the frame's markers are
        fitted alone: :meth:`_fit`)."""
        run = self._run
        assert run is not None  # begun with the first fit
        moved = run.moved(grey, markers, self.still_px, self.FULL_FIT_MARKERS)
        self._run = run = run if moved is None else moved
        mean = _ideal(run.add(grey, markers, fit.used), lens)
        steady = self._fit(prior.geometry, mean, prior)
        used = tuple(i for i in steady.used if i in fit.used) if steady is not None else ()
        if not used:
            return fit
        return _score(steady.homography, self._places[prior.game], ideal, used) or fit

    def _deadband(self, fit: _Fit, prior: BoardPose, markers: dict[int, np.ndarray]) -> _Fit:
        """Keep the prior's homography when ``fit`` barely moves the mat, so that a still board
        gives byte-identical rectified images."""
        if _mat_shift(prior.geometry, fit.homography, prior.homography) >= self.deadband_px:
            return fit
        return _score(prior.homography, self._places[prior.game], markers, fit.used) or fit

    def _confidence(self, geometry: BoardGeometry, fit: _Fit) -> float:
        """Support (markers used, three spread markers suffice) times fit quality."""
        support = min(1.0, len(fit.used) / min(3, len(geometry.markers)))
        quality = 1.0 / (1.0 + (fit.error_mm / self.tolerance_mm) ** 2)
        return support * quality


def _all_geometries() -> tuple[BoardGeometry, ...]:
    return tuple(load_geometry(game) for game in available_games())
