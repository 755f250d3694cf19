"""A hand and forearm reaching over the board from one of its edges (sleeve, skin tone, pose),
and the things that lie beside a board (a phone, a cup).

The hand is laid out flat in a local frame (mm): the fingertips at the origin, pointing along +u,
the arm running back along -u and rising towards the shoulder. It is placed so that the middle
fingertip hides a chosen point of the board from the camera.
"""

from __future__ import annotations

import colorsys
import math
from typing import Any

import cv2
import numpy as np

from ..geometry import BoardGeometry
from .camera import Camera
from .compose import apply_layer
from .paint import UP, Face, Painter, Solid, circle, clip_near, densify, soften
from .pieces import prism_sides
from .textures import bgr
from .vary import Variation

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


def hand_colours(vary: Variation) -> tuple[np.ndarray, np.ndarray]:
    """A skin tone and a sleeve colour (BGR) from ``vary``'s domain: its skin tones, and its
    sleeves, or any colour, or a colour of the board or pieces."""
    domain, rng = vary.domain, vary.rng
    tones = [bgr(t) for t in domain.skin_tones] or [np.asarray(t, float) for t in SKIN_TONES]
    skin = tones[int(rng.integers(len(tones)))] * rng.uniform(0.92, 1.06, 3)
    chance = rng.random()
    if chance < domain.sleeve_any:
        r, g, b = colorsys.hsv_to_rgb(rng.random(), rng.uniform(0, 1), rng.uniform(0.08, 0.95))
        return skin, 255 * np.array([b, g, r])
    if chance < domain.sleeve_any + domain.sleeve_look:
        colours = [vary.board, *_colours(vary.look.get("pieces", {}))]
        return skin, bgr(colours[int(rng.integers(len(colours)))])
    sleeves = [bgr(c) for c in domain.sleeves] or [np.asarray(c, float) for c in SLEEVES]
    return skin, sleeves[int(rng.integers(len(sleeves)))] * rng.uniform(0.9, 1.1, 3)


def _colours(pieces: dict[str, Any]) -> list[str]:
    return [c for c in pieces.values() if isinstance(c, str)]


def hand_pose(
    geometry: BoardGeometry,
    camera: Camera,
    surface_z: float,
    rng: np.random.Generator,
    upright: bool,
    arm_only: bool = False,
) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """A hand reaching from a random edge so that its fingertip hides a random cell (with
    ``arm_only``, a point beyond the far side of the board: only the arm crosses it): its
    fingertip and its skin and sleeve outlines in 3D (mm)."""
    cell = geometry.cells[int(rng.integers(len(geometry.cells)))]
    target = np.array([*cell.center, surface_z])
    eye = camera.position
    above = float(surface_z - eye[2])  # the camera's height over the playing surface
    height = rng.uniform(0.08, 0.25) * above
    edges = ((0, 1), (-1, 0), (1, 0)) if upright else ((0, 1), (0, -1), (-1, 0), (1, 0))
    ex, ey = edges[int(rng.integers(len(edges)))]
    angle = math.atan2(-ey, -ex) + rng.normal(0, 0.35)
    direction = np.array([math.cos(angle), math.sin(angle), 0.0])
    if arm_only:
        target = target + direction * float(np.ptp(geometry.extra["board"]["outline"]) + 60)
    tip = target + (eye - target) * (height / above)
    skin, sleeve = hand_outlines(rng)
    rise = math.tan(math.radians(rng.uniform(3, 15)))
    ceiling = max(0.0, 0.35 * above - height)
    skin3 = [place(o, tip, direction, UP, rise, ceiling) for o in skin]
    sleeve3 = [place(o, tip, direction, UP, rise, ceiling) for o in sleeve]
    return tip, skin3, sleeve3


def add_hand(
    painter: Painter,
    geometry: BoardGeometry,
    surface_z: float,
    rng: np.random.Generator,
    upright: bool,
    vary: Variation | None = None,
    arm_only: bool = False,
) -> np.ndarray:
    """Paint a hand of :func:`hand_pose` and its shadow; return its mask. ``vary`` draws the
    skin, the sleeve and the shadow (None: the nominal ones)."""
    camera = painter.camera
    tip, skin3, sleeve3 = hand_pose(geometry, camera, surface_z, rng, upright, arm_only)
    tone = np.asarray(SKIN_TONES[int(rng.integers(len(SKIN_TONES)))], dtype=np.float64)
    tone *= rng.uniform(0.92, 1.06, 3)
    cloth = np.asarray(SLEEVES[int(rng.integers(len(SLEEVES)))], dtype=np.float64)
    shadow = (6.0, 0.35)
    if vary is not None:
        tone, cloth = hand_colours(vary)
        shadow = (4 * vary.shadow_soft, 0.8 * vary.shadow_dark)
    painter.cast([Solid(tip, casts=skin3 + sleeve3)], surface_z)
    apply_layer(painter.image, painter.shadow, *shadow)
    return paint_hand(painter.image, camera, skin3, sleeve3, tone, cloth)


def add_distractor(
    painter: Painter,
    geometry: BoardGeometry,
    kind: str,
    over_mat: bool,
    vary: Variation,
) -> np.ndarray:
    """A ``phone`` (lying flat, a screen on top) or a ``cup`` (standing; upright boards get a
    phone) beside the mat, reaching over its edge with ``over_mat``; return its mask."""
    rng = vary.rng
    upright = geometry.upright
    origin, size = np.asarray(geometry.mat_origin, float), np.asarray(geometry.mat_size, float)
    if upright:
        kind = "phone"
        outline = np.asarray(geometry.extra["board"]["outline"], dtype=np.float64)
        origin, size = outline.min(axis=0), np.ptp(outline, axis=0)
    centre = origin + size / 2
    angle = rng.uniform(0, 2 * math.pi)
    direction = np.array([math.cos(angle), math.sin(angle)])
    reach = float(np.min(size / 2 / np.maximum(np.abs(direction), 1e-6)))  # to the mat's edge
    radius = 40.0 if kind == "cup" else 80.0
    gap = rng.uniform(-0.6, -0.1) * radius if over_mat else rng.uniform(0.2, 1.5) * radius
    at = centre + direction * (reach + radius + gap)
    solid = (
        _cup(at, rng, painter.camera.position)
        if kind == "cup"
        else _phone(at, rng, painter.camera.position)
    )
    painter.cast([solid], 0.0)
    apply_layer(painter.image, painter.shadow, vary.shadow_soft * 2, vary.shadow_dark)
    painter.draw([solid])
    h, w = painter.image.shape[:2]
    mask = np.zeros((h, w), dtype=np.uint8)
    for face in solid.faces:
        pts = painter.fixed(face.polygons)
        cv2.fillPoly(mask, pts, 255, cv2.LINE_8, 4)
    return mask


def _phone(at: np.ndarray, rng: np.random.Generator, eye: np.ndarray) -> Solid:
    """A phone lying on the table: a dark slab, a glossy screen (dark, or lit)."""
    a = rng.uniform(0, math.pi)
    turn = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    half = np.array([rng.uniform(33, 40), rng.uniform(70, 80)])
    depth = rng.uniform(7, 10)
    box = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=np.float64)
    top = np.column_stack([(box * half) @ turn.T + at, np.full(4, -depth)])
    screen = np.column_stack([(box * (half - 3)) @ turn.T + at, np.full(4, -depth - 0.05)])
    body = np.full(3, rng.uniform(15, 70)) * rng.uniform(0.8, 1.2, 3)
    lit = rng.random() < 0.4
    glass = rng.uniform(120, 250, 3) if lit else np.full(3, rng.uniform(5, 30))
    solid = Solid(np.array([*at, -depth]), prism_sides(top, depth, body * 0.8, eye), [top])
    solid.faces.append(Face([densify(top, 10.0)], body))
    solid.faces.append(Face([densify(screen, 10.0)], glass, glossy=True))
    return solid


def _cup(at: np.ndarray, rng: np.random.Generator, eye: np.ndarray) -> Solid:
    """A cup standing on the table: slices of a slightly flared cylinder, a rim, the inside."""
    radius, height = rng.uniform(32, 45), rng.uniform(75, 105)
    r, g, b = colorsys.hsv_to_rgb(rng.random(), rng.uniform(0, 0.8), rng.uniform(0.3, 0.95))
    colour = 255 * np.array([b, g, r])
    side = np.array([eye[0] - at[0], eye[1] - at[1], 0.0])
    side /= max(float(np.linalg.norm(side)), 1e-9)
    solid = Solid(np.array([*at, -height / 2]))
    for t in np.linspace(0, 1, 12):
        ring = circle(at, radius * (0.9 + 0.1 * t), -height * t, 32)
        solid.faces.append(Face([ring], colour, side if t < 1 else UP.copy()))
        if t in (0, 1):
            solid.casts.append(ring)
    inside = rng.uniform(20, 90, 3) if rng.random() < 0.5 else colour * 0.7
    solid.faces.append(Face([circle(at, radius - 3, -height - 0.05, 32)], inside))
    return solid
