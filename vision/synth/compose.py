"""Compositing the scene's planes and light layers: table, mat, board slab, shadows, glare."""

from __future__ import annotations

import cv2
import numpy as np

from ..geometry import BoardGeometry
from .camera import Camera
from .paint import Face, Painter, Solid, densify, soften
from .textures import Texture, bgr


def background(camera: Camera, geometry: BoardGeometry, table: np.ndarray) -> np.ndarray:
    """The table (or wall) plane, rendered at a quarter of the resolution and scaled up."""
    w, h = camera.size
    cx, cy = (np.asarray(geometry.mat_origin) + np.asarray(geometry.mat_size) / 2).tolist()
    span = 8.0 * max(geometry.mat_size)
    n = table.shape[0]
    board_to_table = np.array(
        [
            [n / span, 0, (span / 2 - cx) * n / span],
            [0, n / span, (span / 2 - cy) * n / span],
            [0, 0, 1],
        ]
    )
    quarter = np.array([[0.25, 0, -0.375], [0, 0.25, -0.375], [0, 0, 1]])
    warp = quarter @ camera.homography(0.0) @ np.linalg.inv(board_to_table)
    small = cv2.warpPerspective(
        table, warp, (w // 4, h // 4), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def paste_plane(
    image: np.ndarray,
    camera: Camera,
    texture: Texture,
    z: float,
    outline: np.ndarray | None = None,
) -> None:
    """Draw ``texture`` lying on the plane at ``z`` through the distorted camera; with an
    ``outline`` (mm), only inside that polygon. The texture lookup is computed at half
    resolution and interpolated (it is smooth), then sampled at full resolution."""
    h, w = image.shape[:2]
    th, tw = texture.pixels.shape[:2]
    extent = np.array([[0, 0], [tw, 0], [tw, th], [0, th]]) / texture.px_per_mm + texture.origin
    ring = densify(extent if outline is None else outline, 10.0)
    px = camera.project(np.column_stack([ring, np.full(len(ring), z)]))
    lo = np.floor(px.min(axis=0)).astype(int) // 2 * 2
    hi = (np.ceil(px.max(axis=0)).astype(int) + 3) // 2 * 2
    x0, y0 = np.clip(lo, 0, (w - w % 2, h - h % 2))
    x1, y1 = np.clip(hi, 0, (w - w % 2, h - h % 2))
    if x1 <= x0 or y1 <= y0:
        return
    coarse = camera.ideal_grid(x0, y0, x1, y1)
    to_texture = texture.board_to_texture() @ np.linalg.inv(camera.homography(z))
    coarse = cv2.perspectiveTransform(coarse.reshape(-1, 1, 2), to_texture)
    maps = cv2.resize(coarse.reshape(((y1 - y0) // 2, (x1 - x0) // 2, 2)), (x1 - x0, y1 - y0))
    roi = image[y0:y1, x0:x1]
    if outline is None:
        cv2.remap(texture.pixels, maps, None, cv2.INTER_LINEAR, roi, cv2.BORDER_TRANSPARENT)
        return
    warped = cv2.remap(
        texture.pixels, maps, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    mask = np.zeros(roi.shape[:2], dtype=np.uint8)
    local = np.round((px - (x0, y0)) * 16).astype(np.int32)
    cv2.fillPoly(mask, [local], 255, cv2.LINE_8, 4)
    cv2.copyTo(warped, mask, roi)


def board_sides(
    painter: Painter, geometry: BoardGeometry, surface_z: float, board_color: str | None = None
) -> None:
    """The visible edges of the board's slab, between the mat and its top face (in
    ``board_color``, by default the ``look``'s)."""
    outline = np.asarray(geometry.extra["board"]["outline"], dtype=np.float64)
    top = np.column_stack([outline, np.full(len(outline), surface_z)])
    color = bgr(board_color or geometry.extra["look"]["board"]) * 0.72
    centre = top.mean(axis=0)
    for a, b in zip(top, np.roll(top, -1, axis=0), strict=True):
        normal = np.array([b[1] - a[1], a[0] - b[0], 0.0])
        normal /= np.linalg.norm(normal)
        if normal @ (a - centre) < 0:
            normal = -normal
        if painter.facing((a + b) / 2, normal):
            on_mat = np.array([1.0, 1.0, 0.0])
            quad = densify(np.array([a, b, b * on_mat, a * on_mat]), 10.0)
            painter.draw([Solid(centre, [Face([quad], color, normal)])])


def apply_layer(image: np.ndarray, layer: np.ndarray, sigma: float, darken: float | None) -> None:
    """Blur a half-resolution ``layer`` and apply it where it is set: darken by up to
    ``darken`` (a shadow; 0: not at all), or with ``darken=None`` add it as white light
    (glare). Clears it."""
    x, y, w, h = cv2.boundingRect(layer)
    if w == 0:
        return
    if darken == 0:
        layer[:] = 0
        return
    pad = int(3 * sigma) + 2
    lh, lw = layer.shape
    x0, y0, x1, y1 = max(x - pad, 0), max(y - pad, 0), min(x + w + pad, lw), min(y + h + pad, lh)
    soft = soften(layer[y0:y1, x0:x1], sigma)
    full = cv2.resize(soft, (2 * (x1 - x0), 2 * (y1 - y0)), interpolation=cv2.INTER_LINEAR)
    roi = image[2 * y0 : 2 * y1, 2 * x0 : 2 * x1]
    if darken is not None:
        factor = cv2.cvtColor(255 - (full * darken).astype(np.uint8), cv2.COLOR_GRAY2BGR)
        roi[:] = cv2.multiply(roi, factor, scale=1 / 255)
    else:
        roi[:] = cv2.add(roi, cv2.cvtColor(full, cv2.COLOR_GRAY2BGR))
    layer[:] = 0


def sheen(painter: Painter, geometry: BoardGeometry, surface_z: float) -> None:
    """A broad, faint reflection of the lamp on glossy boards (where the mirror angle is)."""
    if not geometry.extra["look"].get("glossy"):
        return
    eye, lamp = painter.camera.position, painter.lamp
    mirror = np.array([lamp[0], lamp[1], 2 * surface_z - lamp[2]])
    spot = eye + (mirror - eye) * ((surface_z - eye[2]) / (mirror[2] - eye[2]))
    h, w = painter.glare.shape
    cx, cy = painter.camera.project(spot[None])[0] / 2
    x, y = np.meshgrid(np.arange(0, w, 8, dtype=np.float32), np.arange(0, h, 8, dtype=np.float32))
    blob = 40 * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * (0.06 * w) ** 2))
    big = cv2.resize(blob.astype(np.uint8), (w, h), interpolation=cv2.INTER_LINEAR)
    painter.glare[:] = cv2.max(painter.glare, big)
