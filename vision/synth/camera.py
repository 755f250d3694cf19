"""The synthetic camera: a pinhole with one-coefficient radial distortion, posed over the board.

World frame = the board's frame (mm): x right, y down as seen from the camera side, z away from
the camera side (into the table), so a point ``h`` mm above the board plane has ``z = -h``.

Distortion model (exact, and cheap to apply to a whole image): a pixel ``d`` of the real image
shows what an ideal pinhole camera sees at ``c + (d - c) * (1 + k * |d - c|^2 / f^2)``, ``c`` the
principal point and ``f`` the focal length in pixels; ``k > 0`` is barrel distortion.
:attr:`Camera.dist_coeffs` gives OpenCV coefficients that approximate it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import cv2
import numpy as np


@dataclass(frozen=True, eq=False)
class Camera:
    """Intrinsics (``matrix``, ``distortion``, image ``size``) and pose (board -> camera)."""

    matrix: np.ndarray
    rotation: np.ndarray
    translation: np.ndarray
    size: tuple[int, int]
    distortion: float = 0.0

    @property
    def focal(self) -> float:
        """Focal length in pixels."""
        return float(self.matrix[0, 0])

    @property
    def position(self) -> np.ndarray:
        """The camera centre in the board frame (mm)."""
        return -self.rotation.T @ self.translation

    @property
    def dist_coeffs(self) -> np.ndarray:
        """OpenCV ``(k1, k2, p1, p2, k3)`` approximating :attr:`distortion` (series inverse)."""
        k = self.distortion
        return np.array([-k, 3 * k * k, 0.0, 0.0, -12 * k**3])

    def moved(self, placement: np.ndarray) -> Camera:
        """The same camera seen from a frame that ``placement`` (3x3, in this frame's plane:
        a turn and a shift, see ``vision.placement.rigid``) maps into this one: what it
        projects, given in the moved frame, lands where the moved object is."""
        turn = np.eye(3)
        turn[:2, :2] = placement[:2, :2]
        offset = np.array([placement[0, 2], placement[1, 2], 0.0])
        return Camera(
            self.matrix,
            self.rotation @ turn,
            self.rotation @ offset + self.translation,
            self.size,
            self.distortion,
        )

    def homography(self, z: float = 0.0) -> np.ndarray:
        """3x3 map from board (x, y) mm on the plane at ``z`` to ideal (undistorted) pixels."""
        r = self.rotation
        h = self.matrix @ np.column_stack([r[:, 0], r[:, 1], r[:, 2] * z + self.translation])
        return h / h[2, 2]

    def depth(self, points: np.ndarray) -> np.ndarray:
        """Distance of ``points`` (N x 3, mm) in front of the camera along its axis."""
        return np.asarray(points, dtype=np.float64) @ self.rotation[2] + self.translation[2]

    def project_ideal(self, points: np.ndarray) -> np.ndarray:
        """Ideal pinhole pixel coordinates (N x 2) of board-frame ``points`` (N x 3)."""
        cam = np.asarray(points, dtype=np.float64) @ self.rotation.T + self.translation
        uvw = cam @ self.matrix.T
        return uvw[:, :2] / uvw[:, 2:3]

    def project(self, points: np.ndarray) -> np.ndarray:
        """Pixel coordinates (N x 2) in the rendered, distorted image of ``points`` (N x 3)."""
        return self.distort(self.project_ideal(points))

    def undistort(self, pixels: np.ndarray) -> np.ndarray:
        """Ideal pixel coordinates of real image ``pixels`` (N x 2)."""
        c = self.matrix[:2, 2]
        d = np.asarray(pixels, dtype=np.float64) - c
        r2 = (d * d).sum(axis=1, keepdims=True) / self.focal**2
        return c + d * (1 + self.distortion * r2)

    def distort(self, ideal: np.ndarray) -> np.ndarray:
        """Real image pixel coordinates of ``ideal`` pixels (Newton on the radial model).

        Beyond 1.5 times the image's corner radius the model is continued linearly, so that
        far-away points (the end of an arm near the lens) stay in order."""
        c = self.matrix[:2, 2]
        u = np.asarray(ideal, dtype=np.float64) - c
        ru = np.sqrt((u * u).sum(axis=1, keepdims=True)) / self.focal
        limit = 1.5 * float(np.hypot(*c)) / self.focal
        k, target = self.distortion, np.minimum(ru, limit)
        rd = target.copy()
        for _ in range(8):
            rd -= (rd + k * rd**3 - target) / (1 + 3 * k * rd**2)
        rd += (ru - target) / (1 + 3 * k * rd**2)
        scale = np.divide(rd, ru, out=np.ones_like(ru), where=ru > 1e-12)
        return c + u * scale

    def ideal_grid(self, x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
        """Ideal pixel coordinates (2-channel float32) seen by every other real pixel of the
        region ``[x0, x1) x [y0, y1)`` (even bounds): the pixels at ``(x0 + 2i + 0.5, y0 + 2j
        + 0.5)``, which is what ``cv2.resize`` to the region's size interpolates from."""
        points, radial = _half_grid(self.size)
        region = (slice(y0 // 2, y1 // 2), slice(x0 // 2, x1 // 2))
        return cv2.scaleAdd(radial[region], self.distortion / self.focal**2, points[region])


@cache
def _half_grid(size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``(2i + 0.5, 2j + 0.5)`` and their ``(p - c) * |p - c|^2`` (cached per size)."""
    w, h = size
    u, v = np.meshgrid(np.arange(w // 2) * 2 + 0.5, np.arange(h // 2) * 2 + 0.5)
    points = np.dstack([u, v])
    d = points - ((w - 1) / 2, (h - 1) / 2)
    radial = d * (d * d).sum(axis=2, keepdims=True)
    return points.astype(np.float32), radial.astype(np.float32)


def look_at(target: np.ndarray, offset: np.ndarray, down: np.ndarray) -> tuple[np.ndarray, ...]:
    """Rotation and translation of a camera at ``target + offset`` looking at ``target``, with
    the image's downward axis as close as possible to the board-frame direction ``down``."""
    z = -offset / np.linalg.norm(offset)
    y = down - (down @ z) * z
    y /= np.linalg.norm(y)
    x = np.cross(y, z)
    rotation = np.stack([x, y, z])
    return rotation, -rotation @ (target + offset)


def intrinsics(size: tuple[int, int], hfov_deg: float) -> np.ndarray:
    """The camera matrix for an image ``size`` and horizontal field of view, centred."""
    w, h = size
    f = (w / 2) / math.tan(math.radians(hfov_deg) / 2)
    return np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]], dtype=np.float64)


def fit_distance(
    matrix: np.ndarray,
    size: tuple[int, int],
    target: np.ndarray,
    direction: np.ndarray,
    down: np.ndarray,
    keep: np.ndarray,
    margin: float = 0.03,
) -> float:
    """The smallest distance along ``direction`` from ``target`` at which every point of
    ``keep`` (N x 3, mm) projects inside the ideal image, ``margin`` (fraction) from its edges.

    Moving the camera along its axis only changes the points' depth, so each point gives a
    lower bound on the distance in closed form."""
    rotation, _ = look_at(target, direction, down)
    q = (keep - target) @ rotation.T
    f, w, h = matrix[0, 0], *size
    bounds = []
    for coord, centre, extent in ((q[:, 0], matrix[0, 2], w), (q[:, 1], matrix[1, 2], h)):
        room = np.where(coord > 0, (1 - margin) * extent - centre, centre - margin * extent)
        bounds.append(f * np.abs(coord) / room - q[:, 2])
    return float(np.max(bounds))
