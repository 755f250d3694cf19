"""Test fixtures for board localisation: two small geometries, a printed mat and a pinhole camera.

Frames are made by warping the mat image into a 1280x960 "camera" frame with the exact
homography of a camera pose (so heights above the board can be projected too), then adding a
table background, noise and blur. Everything is seeded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

import cv2
import numpy as np

from vision.geometry import BoardGeometry, Cell, Marker

FRAME_SIZE = (1280, 960)
MAT_PX_PER_MM = 4.0
MAT_COLOUR = (222, 226, 228)
LINE_COLOUR = (90, 90, 90)


def _grid_cells(origin: tuple[float, float], pitch: float, n: int) -> tuple[Cell, ...]:
    """n x n squares named a1.. (files left to right, rank 1 at the bottom)."""
    ox, oy = origin
    cells = []
    for row in range(n):
        for col in range(n):
            x, y = ox + col * pitch, oy + row * pitch
            square = ((x, y), (x + pitch, y), (x + pitch, y + pitch), (x, y + pitch))
            cells.append(Cell(f"{'abcdefgh'[col]}{n - row}", square))
    return tuple(cells)


def _geometry(
    game: str, first_id: int, places: tuple[tuple[float, float, float], ...]
) -> BoardGeometry:
    markers = tuple(Marker(first_id + k, (x, y), 36.0, rot) for k, (x, y, rot) in enumerate(places))
    return BoardGeometry(
        game=game,
        aruco_dictionary="DICT_4X4_50",
        markers=markers,
        cells=_grid_cells((100.0, 60.0), 55.0, 4),
        mat_origin=(0.0, 0.0),
        mat_size=(420.0, 340.0),
    )


#: Six markers around a 4x4 grid, several of them turned (corners must follow ``rotation_deg``).
GEOMETRY = _geometry(
    "testgame",
    10,
    (
        (30, 30, 0.0),
        (390, 30, 90.0),
        (390, 310, 180.0),
        (30, 310, 270.0),
        (210, 30, 45.0),
        (210, 310, -30.0),
    ),
)
#: Another game on the same dictionary, its four markers where ``GEOMETRY`` has none.
OTHER = _geometry(
    "othergame", 20, ((40, 120, 0.0), (380, 120, 0.0), (380, 220, 0.0), (40, 220, 0.0))
)


def render_mat(geometry: BoardGeometry, ppm: float = MAT_PX_PER_MM) -> np.ndarray:
    """The printed mat (BGR, ``ppm`` px per mm): grid lines of the cells and the markers."""
    w, h = (round(v * ppm) for v in geometry.mat_size)
    mat = np.full((h, w, 3), MAT_COLOUR, np.uint8)
    to_px = _mm_to_mat_px(geometry, ppm)
    for cell in geometry.cells:
        poly = cv2.perspectiveTransform(np.array([cell.polygon], np.float64), to_px)[0]
        cv2.polylines(
            mat, [np.round(poly * 16).astype(np.int32)], True, LINE_COLOUR, 3, cv2.LINE_AA, 4
        )
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    side = 240
    src = np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float32) - 0.5
    for marker in geometry.markers:
        tag = cv2.aruco.generateImageMarker(dictionary, marker.id, side)
        dst = cv2.perspectiveTransform(marker.corners()[None].astype(np.float64), to_px)[0]
        x0, y0 = np.floor(dst.min(axis=0)).astype(int) - 2
        x1, y1 = np.ceil(dst.max(axis=0)).astype(int) + 3
        warp = cv2.getPerspectiveTransform(src, (dst - (x0, y0)).astype(np.float32))
        box = (x1 - x0, y1 - y0)
        ink = cv2.warpPerspective(np.full((side, side), 255, np.uint8), warp, box)
        tag_img = cv2.warpPerspective(tag, warp, box, flags=cv2.INTER_AREA)
        alpha = ink.astype(np.float32)[..., None] / 255.0
        roi = mat[y0:y1, x0:x1]
        roi[:] = (roi * (1 - alpha) + tag_img[..., None] * alpha).astype(np.uint8)
    return mat


def _mm_to_mat_px(geometry: BoardGeometry, ppm: float) -> np.ndarray:
    ox, oy = geometry.mat_origin
    return np.array([[ppm, 0, -ox * ppm - 0.5], [0, ppm, -oy * ppm - 0.5], [0, 0, 1.0]])


@dataclass(frozen=True)
class View:
    """A pinhole camera (``k``, board->camera ``r``, ``t``) and an in-plane nudge of the board."""

    k: np.ndarray
    r: np.ndarray
    t: np.ndarray
    nudge: np.ndarray = field(default_factory=lambda: np.eye(3))
    size: tuple[int, int] = FRAME_SIZE

    @classmethod
    def looking_at(
        cls,
        target: tuple[float, float] = (210.0, 170.0),
        distance: float = 650.0,
        tilt_deg: float = 20.0,
        yaw_deg: float = 0.0,
        f: float = 1000.0,
    ) -> View:
        """A camera ``distance`` mm from ``target`` on the board, tilted and turned."""
        w, h = FRAME_SIZE
        k = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1.0]])
        rx, _ = cv2.Rodrigues(np.array([math.radians(tilt_deg), 0.0, 0.0]))
        rz, _ = cv2.Rodrigues(np.array([0.0, 0.0, math.radians(yaw_deg)]))
        r = rx @ rz
        centre = np.array([*target, 0.0]) - distance * r.T @ np.array([0.0, 0.0, 1.0])
        return cls(k, r, -r @ centre)

    def nudged(self, dx: float, dy: float, degrees: float, about=(210.0, 170.0)) -> View:
        """The same camera, the board moved ``dx, dy`` mm and turned ``degrees`` about ``about``."""
        a = math.radians(degrees)
        c, s = math.cos(a), math.sin(a)
        ax, ay = about
        move = np.array(
            [[c, -s, ax - c * ax + s * ay + dx], [s, c, ay - s * ax - c * ay + dy], [0, 0, 1.0]]
        )
        return View(self.k, self.r, self.t, move @ self.nudge, self.size)

    @property
    def homography(self) -> np.ndarray:
        """Board mm -> image px."""
        h = self.k @ np.column_stack([self.r[:, 0], self.r[:, 1], self.t]) @ self.nudge
        return h / h[2, 2]

    def project(self, points_mm: np.ndarray, height_mm: float = 0.0) -> np.ndarray:
        """Image px of board points raised ``height_mm`` towards the camera."""
        pts = np.asarray(points_mm, np.float64).reshape(-1, 2)
        moved = cv2.perspectiveTransform(pts[None], self.nudge)[0]
        xyz = np.column_stack([moved, np.full(len(pts), -height_mm)])
        rvec, _ = cv2.Rodrigues(self.r)
        out, _ = cv2.projectPoints(xyz, rvec, self.t, self.k, None)
        return out.reshape(-1, 2)

    def camera_centre(self) -> np.ndarray:
        """Camera position in board mm: x, y and height above the (un-nudged) board."""
        c = -self.r.T @ self.t
        return np.array([c[0], c[1], -c[2]])


def table(rng: np.random.Generator, size: tuple[int, int] = FRAME_SIZE) -> np.ndarray:
    """A brownish wooden-table background with low-frequency texture."""
    w, h = size
    coarse = rng.normal(0, 12, (h // 16, w // 16, 1)).astype(np.float32)
    tex = cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC)[..., None]
    base = np.array([70, 100, 130], np.float32)
    return np.clip(base + tex, 0, 255).astype(np.uint8)


def render(
    mat: np.ndarray,
    geometry: BoardGeometry,
    view: View,
    rng: np.random.Generator,
    *,
    noise: float = 3.0,
    blur: float = 0.6,
    background: np.ndarray | None = None,
    distortion: float = 0.0,
) -> np.ndarray:
    """The camera frame (BGR uint8) of ``mat`` seen from ``view`` on a table.

    ``distortion`` k bends it radially: pixel d shows the pinhole image at
    c + (d - c)(1 + k |d - c|^2 / R^2), c the centre and R the half-diagonal.
    """
    ppm = mat.shape[1] / geometry.mat_size[0]
    to_frame = view.homography @ np.linalg.inv(_mm_to_mat_px(geometry, ppm))
    frame = table(rng, view.size) if background is None else background.copy()
    cv2.warpPerspective(
        mat, to_frame, view.size, dst=frame, flags=cv2.INTER_AREA, borderMode=cv2.BORDER_TRANSPARENT
    )
    if distortion:
        frame = cv2.remap(frame, _distortion_map(view.size, distortion), None, cv2.INTER_LINEAR)
    if blur > 0:
        frame = cv2.GaussianBlur(frame, (0, 0), blur)
    if noise > 0:
        cv2.setRNGSeed(int(rng.integers(2**31)))  # OpenCV's generator: 4x faster than numpy's
        grain = cv2.randn(
            np.empty((frame.shape[0], frame.size // frame.shape[0]), np.int16), 0, noise
        )
        frame = cv2.add(frame, grain.reshape(frame.shape), dtype=cv2.CV_8U)
    return frame


@cache
def _distortion_map(size: tuple[int, int], k: float) -> np.ndarray:
    w, h = size
    d = np.dstack(np.meshgrid(np.arange(w), np.arange(h))).astype(np.float64)
    d -= ((w - 1) / 2, (h - 1) / 2)
    r2 = (d * d).sum(axis=2, keepdims=True) / ((w * w + h * h) / 4)
    return (d * (1 + k * r2) + ((w - 1) / 2, (h - 1) / 2)).astype(np.float32)


def distort(points_px: np.ndarray, size: tuple[int, int], k: float) -> np.ndarray:
    """Where pinhole image points land in a frame rendered with ``distortion=k`` (bisection)."""
    w, h = size
    c = np.array([(w - 1) / 2, (h - 1) / 2])
    u = np.asarray(points_px, np.float64) - c
    ru = np.linalg.norm(u, axis=1) / np.sqrt((w * w + h * h) / 4)
    lo, hi = np.zeros_like(ru), ru * 2 + 1
    for _ in range(60):
        mid = (lo + hi) / 2
        too_far = mid * (1 + k * mid * mid) > ru
        hi, lo = np.where(too_far, mid, hi), np.where(too_far, lo, mid)
    scale = np.divide(lo, ru, out=np.ones_like(ru), where=ru > 0)
    return c + u * scale[:, None]


def cover(frame: np.ndarray, polygon_px: np.ndarray, colour=(95, 125, 190)) -> np.ndarray:
    """A copy of ``frame`` with a (hand-coloured) polygon drawn over it."""
    out = frame.copy()
    cv2.fillPoly(out, [np.round(polygon_px).astype(np.int32)], colour)
    return out


def cover_markers(frame: np.ndarray, view: View, geometry: BoardGeometry, ids) -> np.ndarray:
    """``frame`` with the markers ``ids`` hidden under blobs slightly larger than them."""
    out = frame
    for i in ids:
        marker = geometry.marker(i)
        grown = Marker(marker.id, marker.center, marker.size * 1.6, marker.rotation_deg)
        out = cover(out, view.project(grown.corners()))
    return out


def bled(image: np.ndarray, gain: float, sigma: float) -> np.ndarray:
    """``image`` over-exposed ``gain`` times and blurred by ``sigma`` px in linear light, then
    encoded with a camera's gamma curve: the bright paper bleeds into the markers' black."""
    light = (image.astype(np.float64) / 255.0) ** 2.2 * gain
    light = cv2.GaussianBlur(light, (0, 0), sigma)
    return np.round(255.0 * np.clip(light, 0.0, 1.0) ** (1 / 2.2)).astype(np.uint8)


def eaten(image: np.ndarray, gain: float, sigma: float) -> np.ndarray:
    """``image`` over-exposed ``gain`` times and clipped, then processed as a camera's pipeline
    may after its curve: the brightest of each 3x3 (the paper eats one pixel of every black
    edge, a marker's thin border left a pixel wide) and a ``sigma`` px blur."""
    light = np.clip((image.astype(np.float64) / 255.0) ** 2.2 * gain, 0.0, 1.0)
    encoded = cv2.dilate(255.0 * light ** (1 / 2.2), np.ones((3, 3), np.uint8))
    return np.round(np.clip(cv2.GaussianBlur(encoded, (0, 0), sigma), 0, 255)).astype(np.uint8)
