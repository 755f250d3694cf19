"""A drawing as a list of simple shapes, written as SVG or painted with Pillow.

Each game's module (:mod:`firmware.diagram.blokus` ...) turns a position into a :class:`Drawing`;
the web page shows its SVG and ``referee diagram`` writes its SVG or PNG. Both come from the same
shapes, so the picture is the same drawing whatever the format. PNG is painted by Pillow (already
a dependency, pure Python wheels on a Pi): no SVG rasteriser, no Cairo.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from xml.sax.saxutils import escape, quoteattr

from PIL import Image, ImageDraw, ImageFont

Point = tuple[float, float]


@dataclass(frozen=True)
class Shape:
    """One shape: ``kind`` is ``polygon`` (``points``), ``circle`` (``points[0]`` the centre,
    ``r``), ``line`` (``points``) or ``text`` (``points[0]`` its centre, ``text``, ``size``).

    ``cell`` and ``content`` name the board cell drawn and what is on it (SVG ``data-``
    attributes, for the page and its tests)."""

    kind: str
    points: tuple[Point, ...]
    fill: str | None = None
    stroke: str | None = None
    width: float = 1.0
    r: float = 0.0
    text: str = ""
    size: float = 10.0
    cell: str | None = None
    content: str | None = None


@dataclass
class Drawing:
    """Shapes on a ``width`` x ``height`` canvas (user units = PNG pixels at scale 1)."""

    width: float
    height: float
    title: str = ""
    background: str = "#ffffff"
    shapes: list[Shape] = field(default_factory=list)

    def add(self, shape: Shape) -> None:
        """Append one shape (later shapes are drawn over earlier ones)."""
        self.shapes.append(shape)

    def polygon(self, points: Sequence[Point], fill: str | None, **kw: object) -> None:
        """Add a closed polygon."""
        self.add(Shape("polygon", tuple(points), fill=fill, **kw))  # type: ignore[arg-type]

    def rect(self, x: float, y: float, w: float, h: float, fill: str | None, **kw: object) -> None:
        """Add an axis-aligned rectangle (a four-point polygon)."""
        self.polygon(((x, y), (x + w, y), (x + w, y + h), (x, y + h)), fill, **kw)

    def circle(self, centre: Point, r: float, fill: str | None, **kw: object) -> None:
        """Add a circle of radius ``r``."""
        self.add(Shape("circle", (centre,), fill=fill, r=r, **kw))  # type: ignore[arg-type]

    def line(self, points: Sequence[Point], stroke: str, width: float = 1.0) -> None:
        """Add an open polyline."""
        self.add(Shape("line", tuple(points), stroke=stroke, width=width))

    def label(self, centre: Point, text: str, size: float, fill: str = "#222222") -> None:
        """Add a text centred on ``centre``."""
        self.add(Shape("text", (centre,), fill=fill, text=text, size=size))

    # ----------------------------------------------------------------- writers
    def to_svg(self) -> str:
        """The drawing as a standalone SVG document (no script, no external reference)."""
        w, h = _num(self.width), _num(self.height)
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" '
            f'width="{w}" height="{h}" role="img">',
            f"<title>{escape(self.title)}</title>",
            f'<rect width="{w}" height="{h}" fill="{self.background}"/>',
        ]
        out.extend(_svg(shape) for shape in self.shapes)
        out.append("</svg>")
        return "\n".join(out)

    def to_png(self, scale: float = 2.0) -> Image.Image:
        """The drawing painted by Pillow at ``scale`` pixels per unit (RGB)."""
        size = (max(1, round(self.width * scale)), max(1, round(self.height * scale)))
        image = Image.new("RGB", size, self.background)
        draw = ImageDraw.Draw(image)
        for shape in self.shapes:
            _paint(draw, shape, scale)
        return image


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _style(shape: Shape) -> str:
    fill = f'fill="{shape.fill}"' if shape.fill else 'fill="none"'
    if shape.stroke:
        return f'{fill} stroke="{shape.stroke}" stroke-width="{_num(shape.width)}"'
    return fill


def _data(shape: Shape) -> str:
    out = ""
    if shape.cell is not None:
        out += f" data-cell={quoteattr(shape.cell)}"
    if shape.content is not None:
        out += f" data-content={quoteattr(shape.content)}"
    return out


def _svg(shape: Shape) -> str:
    pts = " ".join(f"{_num(x)},{_num(y)}" for x, y in shape.points)
    if shape.kind == "polygon":
        return f'<polygon points="{pts}" {_style(shape)}{_data(shape)}/>'
    if shape.kind == "line":
        return (
            f'<polyline points="{pts}" fill="none" stroke="{shape.stroke}" '
            f'stroke-width="{_num(shape.width)}" stroke-linecap="round"/>'
        )
    (x, y) = shape.points[0]
    if shape.kind == "circle":
        return (
            f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{_num(shape.r)}" '
            f"{_style(shape)}{_data(shape)}/>"
        )
    return (
        f'<text x="{_num(x)}" y="{_num(y)}" font-size="{_num(shape.size)}" '
        f'font-family="sans-serif" text-anchor="middle" dominant-baseline="central" '
        f'fill="{shape.fill}">{escape(shape.text)}</text>'
    )


@cache
def _font(pixels: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(pixels)


def _paint(draw: ImageDraw.ImageDraw, shape: Shape, scale: float) -> None:
    pts = [(x * scale, y * scale) for x, y in shape.points]
    width = max(1, round(shape.width * scale)) if shape.stroke else 0
    if shape.kind == "polygon":
        draw.polygon(pts, fill=shape.fill, outline=shape.stroke, width=width)
    elif shape.kind == "line":
        draw.line(pts, fill=shape.stroke, width=width, joint="curve")
    elif shape.kind == "circle":
        (x, y), r = pts[0], shape.r * scale
        draw.ellipse(
            (x - r, y - r, x + r, y + r), fill=shape.fill, outline=shape.stroke, width=width
        )
    else:
        font = _font(max(6, round(shape.size * scale)))
        draw.text(pts[0], shape.text, fill=shape.fill, font=font, anchor="mm")
