"""Random camera poses and lamps for a board: how the synthetic scenes are framed and lit."""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np

from ..geometry import BoardGeometry, load_geometry
from ..mat import print_layout, quiet_square
from .camera import Camera, fit_distance, intrinsics, look_at


def random_camera(
    geometry: BoardGeometry,
    size: tuple[int, int],
    rng: np.random.Generator,
    distortion: float | None,
    tilt_deg: float | None,
    max_tilt_deg: float,
    zoom_range: tuple[float, float] = (1.0, 1.15),
) -> tuple[Camera, dict[str, Any]]:
    """A camera posed at a random tilt, azimuth and roll, as close as keeps the markers and
    board in view, then backed off a random bit."""
    upright = geometry.upright
    hfov = rng.uniform(55, 72)
    k = rng.uniform(-0.03, 0.1)
    tilt = math.radians(rng.uniform(0, min(max_tilt_deg, 30.0 if upright else max_tilt_deg)))
    azimuth = rng.uniform(0, 2 * math.pi)
    roll = rng.normal(0, math.radians(3)) if upright else rng.uniform(0, 2 * math.pi)
    zoom = rng.uniform(*zoom_range)
    jitter = rng.uniform(-0.04, 0.04, 2)
    if distortion is not None:
        k = distortion
    if tilt_deg is not None:
        tilt = math.radians(tilt_deg)
    keep = keep_points(geometry.game)
    target = keep_centre(geometry.game)[:2]
    target = np.array([*(target + jitter * np.ptp(keep[:, :2], axis=0)), 0.0])
    direction = np.array(
        [math.sin(tilt) * math.cos(azimuth), math.sin(tilt) * math.sin(azimuth), -math.cos(tilt)]
    )
    down = np.array([math.sin(roll), math.cos(roll), 0.0])
    matrix = intrinsics(size, hfov)
    distance = fit_distance(matrix, size, target, direction, down, keep) * zoom
    rotation, translation = look_at(target, direction * distance, down)
    camera = Camera(matrix, rotation, translation, size, float(k))
    params = {
        "hfov_deg": float(hfov),
        "distortion": float(k),
        "tilt_deg": math.degrees(tilt),
        "azimuth_deg": math.degrees(azimuth),
        "roll_deg": math.degrees(roll),
        "distance_mm": float(distance),
        "height_mm": float(-camera.position[2]),
    }
    return camera, params


@cache
def keep_points(game: str) -> np.ndarray:
    """Points that must be in view: every marker's quiet zone and the board's outline."""
    geometry = load_geometry(game)
    quiet = float(print_layout(geometry)["quiet_zone"])
    pts = [quiet_square(m, quiet) for m in geometry.markers]
    pts.append(np.asarray(geometry.extra["board"]["outline"], dtype=np.float64))
    flat = np.concatenate(pts)
    z = np.zeros((len(flat), 1))
    return np.hstack([flat, z])


def keep_centre(game: str) -> np.ndarray:
    """The centre (x, y, 0) of the box round :func:`keep_points`: where a camera aims."""
    keep = keep_points(game)
    return np.array([*((keep[:, :2].min(axis=0) + keep[:, :2].max(axis=0)) / 2), 0.0])


def random_lamp(geometry: BoardGeometry, rng: np.random.Generator, upright: bool) -> np.ndarray:
    """A room lamp: above the table, or above and in front of an upright board."""
    outline = np.asarray(geometry.extra["board"]["outline"], dtype=np.float64)
    cx, cy = outline.mean(axis=0)
    a, reach, height = rng.uniform(0, 2 * math.pi), rng.uniform(0, 700), rng.uniform(700, 1500)
    if upright:
        return np.array([cx + reach * math.cos(a), cy - height / 2, -300 - reach / 2])
    return np.array([cx + reach * math.cos(a), cy + reach * math.sin(a), -height])
