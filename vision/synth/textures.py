"""Plane textures of the synthetic scenes: the printed mat, the board's top face, the table.

Every texture is a BGR image of a rectangle of the board frame at :data:`PX_PER_MM`; the mat and
the board are drawn once per game (cached), from the geometry file's numbers and ``look`` colours.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import cv2
import numpy as np

from engine import data

from ..geometry import BoardGeometry, load_geometry
from ..mat import MatCanvas, draw_mat, print_layout

#: Texture resolution (about what a 1280x960 camera sees of a 35 cm mat).
PX_PER_MM = 3.0


def rgb(hex_color: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` -> ``(r, g, b)``."""
    value = hex_color.lstrip("#")
    r, g, b = (int(value[i : i + 2], 16) for i in (0, 2, 4))
    return r, g, b


def bgr(hex_color: str) -> np.ndarray:
    """``"#rrggbb"`` -> float BGR array (0..255)."""
    r, g, b = rgb(hex_color)
    return np.array([b, g, r], dtype=np.float64)


def _scaled(color: tuple[int, int, int], factor: float) -> tuple[int, int, int]:
    r, g, b = (min(255, round(c * factor)) for c in color)
    return r, g, b


@dataclass(frozen=True, eq=False)
class Texture:
    """A BGR image of the board-frame rectangle starting at ``origin`` (mm)."""

    pixels: np.ndarray
    origin: tuple[float, float]
    px_per_mm: float

    def board_to_texture(self) -> np.ndarray:
        """3x3 map from board mm to texture pixel coordinates (pixel centres at integers)."""
        s = self.px_per_mm
        ox, oy = self.origin
        return np.array([[s, 0, -ox * s - 0.5], [0, s, -oy * s - 0.5], [0, 0, 1.0]])


def _finish(canvas: MatCanvas) -> Texture:
    pixels = cv2.cvtColor(canvas.pixels, cv2.COLOR_RGB2BGR)
    return Texture(pixels, (float(canvas.origin[0]), float(canvas.origin[1])), canvas.scale)


@cache
def mat_texture(game: str) -> Texture:
    """What lies on the board plane: the printed mat, or (upright games) the board's face."""
    geometry = load_geometry(game)
    if geometry.upright:
        return face_texture(geometry, geometry.extra["look"])
    canvas = MatCanvas.for_mat(geometry, PX_PER_MM)
    canvas.pixels[:] = draw_mat(geometry, PX_PER_MM)
    return _finish(canvas)


def face_texture(geometry: BoardGeometry, look: dict[str, Any]) -> Texture:
    """An upright board's face in the colours of ``look``."""
    return _finish(_face_canvas(geometry, look))


@cache
def board_texture(game: str) -> Texture:
    """The top face of a board lying on its mat (wood, plastic or card, with its grid)."""
    geometry = load_geometry(game)
    return drawn_board_texture(geometry, geometry.extra["look"])


def drawn_board_texture(
    geometry: BoardGeometry,
    look: dict[str, Any],
    grain_seed: int = 7,
    grain_tones: tuple[float, float] = (0.88, 1.04),
    bonus_light: float = 1.6,
    label_scale: float = 1.0,
) -> Texture:
    """:func:`board_texture` in the colours of ``look``, with the wood grain drawn from
    ``grain_seed`` in tones ``grain_tones`` of the board's colour (Gobblet), the bonus cells
    ``bonus_light`` times as light as the board and their labels ``label_scale`` times as high
    (Spectrangle)."""
    game = geometry.game
    outline = np.asarray(geometry.extra["board"]["outline"], dtype=np.float64)
    lo, hi = outline.min(axis=0), outline.max(axis=0)
    canvas = MatCanvas(lo, hi - lo, PX_PER_MM, rgb(look["board"]))
    grid = rgb(look["grid"])
    if game == "gobblet":
        _wood_grain(canvas, rgb(look["board"]), grain_seed, grain_tones)
    for cell in geometry.cells:
        if game.startswith("blokus"):
            shadow = _scaled(rgb(look["board"]), 0.8)
            canvas.line(np.asarray(cell.polygon) + 0.5, shadow, 0.6)
            canvas.line(cell.polygon, grid, 1.2)
        else:
            canvas.line(cell.polygon, grid, 1.2 if game == "gobblet" else 0.8)
    labels = []
    for name in look.get("start_cells", ()):
        cx, cy = geometry.cell(name).center
        circle = [(cx + 5 * np.cos(t), cy + 5 * np.sin(t)) for t in np.linspace(0, 6.28, 24)]
        canvas.line(circle, _scaled(rgb(look["board"]), 0.7), 1.0)
    bonus = data.load("spectrangle")["bonus"] if game == "spectrangle" else {}
    for name, factor in bonus.items():
        cell = geometry.cell(name)
        canvas.fill(cell.polygon, _scaled(rgb(look["board"]), bonus_light))
        canvas.line(cell.polygon, grid, 0.8)
        labels.append((cell.center, f"x{factor}", 8.0 * label_scale, "mm", grid))
    canvas.text(labels)
    return _finish(canvas)


def _wood_grain(
    canvas: MatCanvas, base: tuple[int, int, int], seed: int, tones: tuple[float, float]
) -> None:
    """Faint wavy grain lines of the board's colour times ``tones`` (a fixed seed: the same
    board in every scene)."""
    rng = np.random.default_rng(seed)
    h, w = canvas.pixels.shape[:2]
    x = np.linspace(0, w, 40)
    for y0 in np.arange(0, h, 6.0):
        tone = _scaled(base, float(rng.uniform(*tones)))
        y = y0 + 4 * np.sin(x / w * 6 + rng.uniform(0, 6)) + rng.normal(0, 0.4, x.size)
        pts = np.round(np.column_stack([x, y]) * 16).astype(np.int32)
        cv2.polylines(canvas.pixels, [pts], False, tone, int(rng.integers(1, 4)), cv2.LINE_AA, 4)


def _face_canvas(geometry: BoardGeometry, look: dict[str, Any]) -> MatCanvas:
    """An upright board's face: colour, score track, holes and the marker stickers."""
    outline = np.asarray(geometry.extra["board"]["outline"], dtype=np.float64)
    lo, hi = outline.min(axis=0), outline.max(axis=0)
    canvas = MatCanvas(lo, hi - lo, PX_PER_MM, rgb(look["board"]))
    grid = rgb(look["grid"])
    labels = []
    track = look.get("score_track")
    if track:
        x0, y0, x1, y1 = track["rect"]
        n = int(track["count"])
        step = (x1 - x0) / n
        for i in range(n):
            box = [(x0 + i * step, y0), (x0 + (i + 1) * step, y0), (x0 + (i + 1) * step, y1)]
            canvas.line([*box, (x0 + i * step, y1)], grid, 0.8)
            labels.append(((x0 + (i + 0.5) * step, (y0 + y1) / 2), str(i), 6.0, "mm", grid))
    hole = rgb(look["hole"])
    for cell in geometry.cells:
        pts = np.asarray(cell.polygon)
        centre = pts.mean(axis=0)
        canvas.fill(centre + (pts - centre) * 1.08, grid)
        canvas.fill(pts, hole)
        canvas.fill(centre + (pts - centre) * 0.9 + (0, -1.5), _scaled(hole, 0.6))
    quiet = float(print_layout(geometry)["quiet_zone"])
    for marker in geometry.markers:
        canvas.marker(marker, geometry.aruco_dictionary, quiet)
    canvas.text(labels)
    return canvas


def table_texture(rng: np.random.Generator, upright: bool) -> np.ndarray:
    """A small random BGR texture of the table (or the wall behind an upright board)."""
    n = 128
    kinds = ("wall", "plain") if upright else ("wood", "wood", "plain", "cloth")
    kind = kinds[int(rng.integers(len(kinds)))]
    palettes = {
        "wood": ((70, 110, 160), (40, 70, 110), (110, 150, 190), (90, 120, 150)),
        "plain": ((200, 200, 200), (60, 60, 60), (150, 160, 165), (235, 235, 230)),
        "cloth": ((40, 90, 40), (120, 60, 30), (60, 40, 90), (110, 110, 120)),
        "wall": ((215, 220, 225), (180, 200, 210), (200, 190, 180), (230, 230, 225)),
    }
    palette = palettes[kind]
    base = np.array(palette[int(rng.integers(len(palette)))], dtype=np.float32)
    base *= rng.uniform(0.85, 1.1, 3).astype(np.float32)
    tone = np.ones((n, n), dtype=np.float32)
    if kind == "wood":
        rows = np.arange(n, dtype=np.float32)[:, None]
        phase = rng.uniform(0, 6.3)
        tone += 0.12 * np.sin(rows * rng.uniform(0.3, 0.9) + phase + np.linspace(0, 2, n)[None])
        tone += rng.normal(0, 0.05, (n, 1)).astype(np.float32)
    tone += rng.normal(0, 0.03 if kind != "cloth" else 0.06, (n, n)).astype(np.float32)
    return np.clip(tone[..., None] * base, 0, 255).astype(np.uint8)
