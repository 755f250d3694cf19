"""A hand and forearm reaching over the board from one of its edges (sleeve, skin tone, pose).

The hand is laid out flat in a local frame (mm): the fingertips at the origin, pointing along +u,
the arm running back along -u and rising towards the shoulder. It is placed so that the middle
fingertip hides a chosen point of the board from the camera.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from ..geometry import BoardGeometry
from .camera import Camera
from .compose import apply_layer
from .paint import UP, Painter, Solid, clip_near, densify, soften

#: Skin tones (BGR), from very light to very dark.
SKIN_TONES = (
    (185, 205, 240),
    (160, 185, 228),
    (130, 165, 215),
    (105, 140, 190),
    (80, 110, 160),
    (55, 80, 125),
    (40, 55, 85),
)
#: Sleeve colours (BGR).
SLEEVES = (
    (40, 40, 40),
    (150, 70, 30),
    (60, 60, 170),
    (200, 200, 200),
    (50, 120, 60),
    (120, 80, 90),
)


def _capsule(a: np.ndarray, b: np.ndarray, radius: float, n: int = 8) -> np.ndarray:
    """Outline (2D) of a stadium of ``radius`` around segment ``a``-``b``."""
    d = (b - a) / np.linalg.norm(b - a)
    angle = math.atan2(d[1], d[0])
    t1 = np.linspace(angle - math.pi / 2, angle + math.pi / 2, n)
    t0 = t1 + math.pi
    cap_b = b + radius * np.column_stack([np.cos(t1), np.sin(t1)])
    cap_a = a + radius * np.column_stack([np.cos(t0), np.sin(t0)])
    return np.concatenate([cap_b, cap_a])


def hand_outlines(rng: np.random.Generator) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Skin and sleeve outlines (2D, mm, local frame) of a random hand pose."""
    width = rng.uniform(0.9, 1.12)
    side = 1 if rng.random() < 0.5 else -1
    skin = []
    fingers = [(-1.5, 0.0), (-0.5, -4.0), (0.5, -11.0), (1.5, -22.0)]
    knuckle_u = -74.0 * width
    for slot, tip_u in fingers:
        v = side * slot * 18.0 * width
        curl = rng.uniform(0.0, 25.0)
        spread = rng.normal(0, 4)
        tip = np.array([tip_u + curl, v + spread])
        skin.append(_capsule(np.array([knuckle_u, v * 1.05]), tip, 8.5 * width))
    wrist_u = knuckle_u - 95.0 * width
    palm = np.array(
        [
            [knuckle_u + 8, -side * 40 * width],
            [knuckle_u + 10, side * 40 * width],
            [wrist_u, side * 31 * width],
            [wrist_u, -side * 31 * width],
        ]
    )
    thumb_base = np.array([knuckle_u - 60 * width, -side * 38 * width])
    thumb_tip = thumb_base + np.array([rng.uniform(35, 60), -side * rng.uniform(5, 30)])
    skin += [palm, _capsule(thumb_base, thumb_tip, 10.0 * width)]
    cuff_u = wrist_u - rng.uniform(0.0, 60.0)
    arm_end = wrist_u - 450.0
    forearm = np.array(
        [
            [wrist_u + 5, 31 * width],
            [wrist_u + 5, -31 * width],
            [arm_end, -45 * width],
            [arm_end, 45 * width],
        ]
    )
    sleeve = np.array(
        [
            [cuff_u, 40 * width],
            [cuff_u, -40 * width],
            [arm_end, -55 * width],
            [arm_end, 55 * width],
        ]
    )
    skin.insert(0, forearm)
    return skin, [sleeve]


def place(
    outline: np.ndarray,
    tip: np.ndarray,
    direction: np.ndarray,
    normal_up: np.ndarray,
    rise: float,
    ceiling: float,
) -> np.ndarray:
    """3D points of a local outline: fingertips at ``tip`` pointing along ``direction`` (unit,
    in the board plane), the arm rising ``rise`` mm per mm towards the shoulder along
    ``normal_up``, by at most ``ceiling`` mm."""
    across = np.array([-direction[1], direction[0], 0.0])
    pts = densify(outline, 15.0)
    u, v = pts[:, 0:1], pts[:, 1:2]
    lift = np.clip((-u - 120.0) * rise, 0.0, ceiling)
    return tip + u * direction + v * across + lift * normal_up


def paint_hand(
    image: np.ndarray,
    camera: Camera,
    skin: list[np.ndarray],
    sleeve: list[np.ndarray],
    skin_color: np.ndarray,
    sleeve_color: np.ndarray,
) -> np.ndarray:
    """Draw the hand (3D outlines: forearm, 4 fingers, palm, thumb; then the sleeve) with a
    rounded shading; return its coverage mask (uint8, 255 = hand)."""
    h, w = image.shape[:2]
    mask = np.zeros((h, w), dtype=np.uint8)
    near = 0.25 * float(camera.depth(skin[-1].mean(axis=0)[None])[0])
    parts = []
    for i, outline in enumerate(skin + sleeve):
        clipped = clip_near(outline, camera, near)
        if len(clipped) >= 3:
            color = skin_color if i < len(skin) else sleeve_color
            parts.append(
                (np.round(camera.project(clipped) * 16).astype(np.int32), color, 0 < i < 5)
            )
    if not parts:
        return mask
    corners = np.concatenate([pts for pts, _, _ in parts]) / 16
    x0, y0 = np.clip(np.floor(corners.min(axis=0)).astype(int) - 2, 0, (w, h))
    x1, y1 = np.clip(np.ceil(corners.max(axis=0)).astype(int) + 2, 0, (w, h))
    if x1 <= x0 or y1 <= y0:
        return mask
    shift = np.array([x0, y0]) * 16
    roi_mask = np.zeros((y1 - y0, x1 - x0), dtype=np.uint8)
    color = np.zeros((y1 - y0, x1 - x0, 3), dtype=np.uint8)
    edge = tuple(float(c) for c in skin_color * 0.7)
    for pts, part_color, finger in parts:
        local = [pts - shift]
        cv2.fillPoly(roi_mask, local, 255, cv2.LINE_AA, 4)
        cv2.fillPoly(color, local, tuple(float(v) for v in part_color), cv2.LINE_AA, 4)
        if finger:
            cv2.polylines(color, local, True, edge, 1, cv2.LINE_AA, 4)
    spread = max(2.0, 0.01 * (x1 - x0 + y1 - y0))
    unit = 230.0  # shade factors 0.55..1.05, in units of 1/230 so they fit a byte
    shade = cv2.addWeighted(soften(roi_mask, spread), 0.5 * unit / 255, roi_mask, 0, 0.55 * unit)
    shaded = cv2.multiply(color, cv2.cvtColor(shade, cv2.COLOR_GRAY2BGR), scale=1 / unit)
    solid = cv2.threshold(roi_mask, 127, 255, cv2.THRESH_BINARY)[1]
    cv2.copyTo(shaded, solid, image[y0:y1, x0:x1])
    mask[y0:y1, x0:x1] = roi_mask
    return mask


def add_hand(
    painter: Painter,
    geometry: BoardGeometry,
    surface_z: float,
    rng: np.random.Generator,
    upright: bool,
) -> np.ndarray:
    """A hand reaching from a random edge so that its fingertip hides a random cell; return
    its mask."""
    camera = painter.camera
    cell = geometry.cells[int(rng.integers(len(geometry.cells)))]
    target = np.array([*cell.center, surface_z])
    eye = camera.position
    above = float(surface_z - eye[2])  # the camera's height over the playing surface
    height = rng.uniform(0.08, 0.25) * above
    edges = ((0, 1), (-1, 0), (1, 0)) if upright else ((0, 1), (0, -1), (-1, 0), (1, 0))
    ex, ey = edges[int(rng.integers(len(edges)))]
    angle = math.atan2(-ey, -ex) + rng.normal(0, 0.35)
    direction = np.array([math.cos(angle), math.sin(angle), 0.0])
    tip = target + (eye - target) * (height / above)
    skin, sleeve = hand_outlines(rng)
    rise = math.tan(math.radians(rng.uniform(3, 15)))
    ceiling = max(0.0, 0.35 * above - height)
    skin3 = [place(o, tip, direction, UP, rise, ceiling) for o in skin]
    sleeve3 = [place(o, tip, direction, UP, rise, ceiling) for o in sleeve]
    tone = np.asarray(SKIN_TONES[int(rng.integers(len(SKIN_TONES)))], dtype=np.float64)
    tone *= rng.uniform(0.92, 1.06, 3)
    cloth = np.asarray(SLEEVES[int(rng.integers(len(SLEEVES)))], dtype=np.float64)
    painter.cast([Solid(tip, casts=skin3 + sleeve3)], surface_z)
    apply_layer(painter.image, painter.shadow, 6.0, 0.35)
    return paint_hand(painter.image, camera, skin3, sleeve3, tone, cloth)
