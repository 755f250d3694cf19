"""Printable mats: the ArUco markers, board outline and cells of a geometry file at 1:1 scale.

A *mat* lies under the board and carries the markers around it; a *template* (games whose markers
are stickers on the board itself, such as Gobsmacked) shows the board's outline with every sticker
printed where it goes, to cut out. Both cover exactly the geometry's ``mat`` rectangle and carry a
100 mm ruler to check the print scale. ``referee mat GAME --out FILE.pdf`` calls :func:`cmd_mat`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .geometry import BoardGeometry, GeometryError, Marker, load_geometry

MM_PER_INCH = 25.4
_SHIFT = 4  # fixed-point bits for sub-pixel OpenCV drawing
_INK = (20, 20, 20)
_GUIDE = (140, 140, 140)
#: Length (mm) of each leg of the marks printed at the board's corners.
CORNER_MARK_MM = 10.0
_FAINT = (205, 205, 205)
_WHITE = (255, 255, 255)

Color = tuple[int, int, int]
Points = Sequence[Sequence[float]] | np.ndarray
#: A label: position (mm), text, height (mm), Pillow anchor, RGB colour.
Text = tuple[Sequence[float], str, float, str, Color]


class MatCanvas:
    """An RGB image of a rectangle of the board frame, drawn on in board millimetres."""

    def __init__(
        self,
        origin: Sequence[float],
        size: Sequence[float],
        px_per_mm: float,
        background: Color = _WHITE,
    ) -> None:
        self.scale = px_per_mm
        self.origin = np.asarray(origin, dtype=np.float64)
        w, h = (round(v * px_per_mm) for v in size)
        row = np.empty((w, 3), dtype=np.uint8)
        row[:] = background
        self.pixels = np.empty((h, w, 3), dtype=np.uint8)
        self.pixels[:] = row

    @classmethod
    def for_mat(cls, geometry: BoardGeometry, px_per_mm: float) -> MatCanvas:
        """A white canvas covering the geometry's mat rectangle."""
        return cls(geometry.mat_origin, geometry.mat_size, px_per_mm)

    def px(self, points_mm: Points) -> np.ndarray:
        """Pixel coordinates (pixel centres at integers) of points in board millimetres."""
        return (np.asarray(points_mm, dtype=np.float64) - self.origin) * self.scale - 0.5

    def _fixed(self, points_mm: Points) -> np.ndarray:
        return np.round(self.px(points_mm) * (1 << _SHIFT)).astype(np.int32)

    def line(self, points_mm: Points, color: Color, width_mm: float, closed: bool = True) -> None:
        """A line through ``points_mm``, ``width_mm`` thick (a closed outline by default)."""
        thickness = max(1, round(width_mm * self.scale))
        pts = [self._fixed(points_mm)]
        cv2.polylines(self.pixels, pts, closed, color, thickness, cv2.LINE_AA, _SHIFT)

    def dashed(self, points_mm: Points, color: Color, width_mm: float, dash_mm: float = 3) -> None:
        """A closed dashed outline through ``points_mm`` (a cutting line)."""
        pts = np.asarray(points_mm, dtype=np.float64)
        for a, b in zip(pts, np.roll(pts, -1, axis=0), strict=True):
            steps = max(1, round(float(np.linalg.norm(b - a)) / dash_mm))
            for i in range(0, steps, 2):
                ends = [a + (b - a) * i / steps, a + (b - a) * (i + 1) / steps]
                self.line(ends, color, width_mm, closed=False)

    def fill(self, points_mm: Points, color: Color) -> None:
        """Fill the polygon ``points_mm``."""
        cv2.fillPoly(self.pixels, [self._fixed(points_mm)], color, cv2.LINE_AA, _SHIFT)

    def marker(self, marker: Marker, dictionary: str, quiet_mm: float) -> None:
        """Paint ``marker`` (black border and bits) on a white quiet zone ``quiet_mm`` wide."""
        self.fill(quiet_square(marker, quiet_mm), _WHITE)
        bits = marker_bits(dictionary, marker.id)
        n = bits.shape[0]
        dst = self.px(marker.corners())
        h, w = self.pixels.shape[:2]
        x0, y0 = np.maximum(np.floor(dst.min(axis=0)).astype(int) - 1, 0)
        x1, y1 = np.minimum(np.ceil(dst.max(axis=0)).astype(int) + 2, (w, h))
        if x1 <= x0 or y1 <= y0:
            return
        src = np.float32([[-0.5, -0.5], [n - 0.5, -0.5], [-0.5, n - 0.5]])
        affine = cv2.getAffineTransform(src, np.float32(dst[[0, 1, 3]] - (x0, y0)))
        roi = self.pixels[y0:y1, x0:x1].copy()
        size = (int(x1 - x0), int(y1 - y0))
        cv2.warpAffine(bits, affine, size, roi, cv2.INTER_NEAREST, cv2.BORDER_TRANSPARENT)
        self.pixels[y0:y1, x0:x1] = roi

    def text(self, items: Sequence[Text]) -> None:
        """Write every ``(xy_mm, text, height_mm, anchor, color)``; anchors as in Pillow."""
        image = Image.fromarray(self.pixels)
        draw = ImageDraw.Draw(image)
        for xy_mm, text, height_mm, anchor, color in items:
            x, y = self.px([xy_mm])[0]
            font = ImageFont.load_default(size=max(6, round(height_mm * self.scale)))
            draw.text((float(x), float(y)), text, fill=color, font=font, anchor=anchor)
        self.pixels[:] = np.asarray(image)


def marker_bits(dictionary: str, marker_id: int) -> np.ndarray:
    """The marker as an RGB image with one pixel per module, black border included."""
    aruco = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary))
    n = aruco.markerSize + 2
    marker = cv2.aruco.generateImageMarker(aruco, marker_id, n, borderBits=1)
    return cv2.cvtColor(marker, cv2.COLOR_GRAY2RGB)


def quiet_square(marker: Marker, quiet_mm: float) -> np.ndarray:
    """The corners (mm) of the marker's white quiet zone, ``quiet_mm`` beyond its black border."""
    corners = marker.corners().astype(np.float64)
    centre = corners.mean(axis=0)
    return centre + (corners - centre) * (1 + 2 * quiet_mm / marker.size)


def print_layout(geometry: BoardGeometry) -> dict[str, Any]:
    """The ``print`` entry of a geometry file, with defaults for a file that has none."""
    h = geometry.mat_size[1]
    ox, oy = geometry.mat_origin
    layout: dict[str, Any] = {"kind": "mat", "quiet_zone": 4.0}
    layout.update(ruler=(ox + 10, oy + h - 10), title=(ox + 10, oy + 10))
    layout.update(geometry.extra.get("print", {}))
    return layout


def _ruler(canvas: MatCanvas, origin: Sequence[float]) -> list[Text]:
    """Draw a 100 mm scale-check ruler (baseline from ``origin`` rightwards, ticks upwards);
    return its labels."""
    x0, y0 = origin
    canvas.line([(x0, y0), (x0 + 100, y0)], _INK, 0.3, closed=False)
    for mm in range(101):
        length = 4.0 if mm % 10 == 0 else 2.5 if mm % 5 == 0 else 1.5
        canvas.line([(x0 + mm, y0), (x0 + mm, y0 - length)], _INK, 0.15, closed=False)
    labels: list[Text] = [((x0 + mm, y0 - 4.6), str(mm), 2.5, "mb", _INK) for mm in (0, 50, 100)]
    labels.append(((x0 + 50, y0 + 1.2), "must measure 100 mm", 3.0, "mt", _INK))
    return labels


def _corner_marks(outline: np.ndarray, leg_mm: float = CORNER_MARK_MM) -> list[np.ndarray]:
    """At every corner of ``outline``, the two ``leg_mm`` stubs of its sides that meet there
    (where to put the board's corners)."""
    marks = []
    for k, corner in enumerate(outline):
        before, after = outline[k - 1], outline[(k + 1) % len(outline)]
        a = corner + (before - corner) / np.linalg.norm(before - corner) * leg_mm
        b = corner + (after - corner) / np.linalg.norm(after - corner) * leg_mm
        marks.append(np.array([a, corner, b]))
    return marks


def draw_mat(geometry: BoardGeometry, px_per_mm: float) -> np.ndarray:
    """The mat (or sticker template) of ``geometry`` as an RGB uint8 array at ``px_per_mm``."""
    canvas = MatCanvas.for_mat(geometry, px_per_mm)
    layout = print_layout(geometry)
    template = layout["kind"] == "template"
    quiet = float(layout["quiet_zone"])
    outline = geometry.extra.get("board", {}).get("outline")
    if outline and template:
        canvas.line(outline, _INK, 0.4)
    elif outline:
        # corner marks only: a printed line along the board's sides would look like the
        # board's own edge to the referee wherever the board lies a little off its place
        for corner in _corner_marks(np.asarray(outline, dtype=np.float64)):
            canvas.line(corner, _GUIDE, 0.4, closed=False)
    grid = _GUIDE if template else _FAINT
    for cell in geometry.cells:
        canvas.line(cell.polygon, grid, 0.2)
    for marker in geometry.markers:
        canvas.marker(marker, geometry.aruco_dictionary, quiet)
        if template:
            canvas.dashed(quiet_square(marker, quiet), _GUIDE, 0.25)
    labels = _ruler(canvas, layout["ruler"])
    labels += [(cell.center, cell.name, 3.0, "mm", grid) for cell in geometry.cells]
    tx, ty = layout["title"]
    labels.append(((tx, ty), geometry.game.upper(), 7.0, "lm", _INK))
    if template:
        notes = ("sticker template: cut out along the dashed lines,", "stick each where printed")
    else:
        notes = ("print at 100 % (no fit to page),", "place the board's corners on the grey marks")
    labels += [((tx, ty + 5.0 + 4.0 * i), note, 3.0, "lt", _INK) for i, note in enumerate(notes)]
    canvas.text(labels)
    return canvas.pixels


def render_mat(geometry: BoardGeometry, dpi: float) -> Image.Image:
    """The printable mat of ``geometry`` at ``dpi`` (an RGB image covering its mat rectangle)."""
    return Image.fromarray(draw_mat(geometry, dpi / MM_PER_INCH))


def save_mat(game: str, out_path: str | Path, dpi: int = 300) -> Path:
    """Write ``game``'s mat to ``out_path`` (``.png`` or ``.pdf``) at true 1:1 scale."""
    path = Path(out_path)
    if dpi <= 0:
        raise ValueError(f"dpi must be positive, not {dpi}")
    suffix = path.suffix.lower()
    if suffix not in (".png", ".pdf"):
        raise ValueError(f"{path.name}: the mat is written as .png or .pdf, not {suffix!r}")
    image = render_mat(load_geometry(game), dpi)
    if suffix == ".pdf":
        image.save(path, "PDF", resolution=float(dpi), quality=95, subsampling=0)
    else:
        image.save(path, "PNG", dpi=(dpi, dpi))
    return path


def cmd_mat(args: argparse.Namespace) -> int:
    """``referee mat GAME --out FILE.pdf|FILE.png [--dpi N]``: print-ready mat of a game."""
    dpi = int(getattr(args, "dpi", None) or 300)
    try:
        path = save_mat(args.game, args.out, dpi=dpi)
    except (GeometryError, ValueError) as exc:
        print(f"referee: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"referee: cannot write {args.out}: {exc.strerror}", file=sys.stderr)
        return 2
    w, h = load_geometry(args.game).mat_size
    print(f"wrote {path} ({w:g} x {h:g} mm at {dpi} dpi): print at 100 %, check the 100 mm ruler")
    return 0
