"""The pieces of each game as 3D solids (faces in the board frame, mm), built from the geometry.

Gobblet: bells of revolution stacked from horizontal slices; Blokus: thin glossy square slabs;
Spectrangle: flat triangular tiles with three coloured triangles and the value in the centre;
Gobsmacked: round tokens standing out of the upright board's holes, with their motif.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import cv2
import numpy as np

from engine import data

from ..geometry import BoardGeometry
from .domain import CAREFUL_OFFSET_MM
from .paint import UP, Face, Solid, circle
from .textures import bgr
from .vary import Variation

#: Spectrangle colour names (observation spec) -> letters of the piece codes (engine data).
SPECTRANGLE_LETTERS = {
    "red": "R",
    "green": "G",
    "blue": "B",
    "yellow": "Y",
    "purple": "P",
    "white": "W",
}


def build_pieces(
    geometry: BoardGeometry,
    cells: dict[str, Any],
    eye: np.ndarray,
    rng: np.random.Generator,
    vary: Variation | None = None,
) -> list[Solid]:
    """One solid per occupied cell of ``cells`` (observation contents), seen from ``eye``;
    ``vary`` gives the scene's colours and artwork (None: the nominal ``look``)."""
    builder = {
        "gobblet": _bell,
        "blokus": _square,
        "blokus-duo": _square,
        "spectrangle": tile,
        "gobsmacked": token,
    }[geometry.game]
    z0 = -float(geometry.extra["board"]["thickness"])
    return [
        builder(
            geometry, name, content, z0, eye, rng if vary is None else vary.piece_rng(name), vary
        )
        for name, content in cells.items()
        if content is not None
    ]


def _toward(eye: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Unit vector parallel to the board plane from ``point`` towards the camera."""
    d = np.array([eye[0] - point[0], eye[1] - point[1], 0.0])
    n = np.linalg.norm(d)
    return d / n if n > 1e-9 else np.array([1.0, 0.0, 0.0])


def prism_sides(top: np.ndarray, depth: float, color: np.ndarray, eye: np.ndarray) -> list[Face]:
    """The visible vertical faces of a prism whose top polygon is ``top``, ``depth`` thick."""
    a, b = top, np.roll(top, -1, axis=0)
    mid = (a + b) / 2
    normals = np.column_stack([b[:, 1] - a[:, 1], a[:, 0] - b[:, 0], np.zeros(len(top))])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    normals *= np.sign(((mid - top.mean(axis=0)) * normals).sum(axis=1, keepdims=True))
    visible = ((eye - mid) * normals).sum(axis=1) > 0
    drop = -UP * depth
    return [
        Face([np.array([a[i], b[i], b[i] + drop, a[i] + drop])], color, normals[i])
        for i in np.flatnonzero(visible)
    ]


#: The round heads of the Gobblet profiles (:func:`bell_profile`), as fractions of the piece's
#: height: the ``bell``'s head radius, the ``knob`` ball's centre and radius, and how much of a
#: ``turned`` piece's height its head radius takes.
BELL_HEAD = 0.16
KNOB_BALL = (0.72, 0.28)
TURNED_HEAD_HEIGHT = 0.9


@cache
def bell_profile(
    shape: str = "bell", turned: tuple[float, float, float] = (0.1, 0.5, 0.5)
) -> tuple[tuple[float, float], ...]:
    """(height, radius) of a Gobblet piece as fractions of its height and base radius:
    ``bell`` (a flared foot, a waist and a round head), ``dome`` (a half egg on a low foot),
    ``cylinder`` (straight sides, a rounded top edge), ``knob`` (a thin neck, a big ball),
    ``turned`` (a foot of height ``turned[0]``, a neck narrowing to radius ``turned[1]``, a ball
    head of radius ``turned[2]``: any turned piece between a bell and a knob), ``trumpet`` (a
    thin foot a tenth as high, flaring up into a neck of 20-40 % of the base radius, the same
    ball head)."""
    levels = [(0.0, 1.0), (0.05, 1.0)]
    arc = [math.pi * (-0.5 + i / 8) for i in range(1, 8)]
    if shape == "bell":
        levels += [(0.05 + 0.65 * i / 11, 1 - 0.55 * (i / 11) ** 0.8) for i in range(1, 12)]
        head = BELL_HEAD
        levels += [(1 - head + head * math.sin(a), 0.45 * math.cos(a) + 0.02) for a in arc]
    elif shape == "dome":
        quarter = [math.pi / 2 * i / 10 for i in range(1, 10)]
        levels += [(0.08 + 0.92 * math.sin(a), 0.96 * math.cos(a)) for a in quarter]
        levels.append((1.0, 0.05))
    elif shape == "cylinder":
        levels += [(0.75, 0.86)]
        levels += [
            (0.75 + 0.25 * math.sin(a / 2 + math.pi / 4), 0.86 * math.cos(a / 2 + math.pi / 4))
            for a in arc
        ]
        levels.append((1.0, 0.1))
    elif shape in ("turned", "trumpet"):
        foot, neck, head = turned
        bend = 0.7
        if shape == "trumpet":
            # a thin, wide foot flaring up into a narrow neck (the radius falls fast, then
            # slowly): a foot of the board's own wood hardly stands out of the board
            foot, neck, bend = 0.1 * foot, 0.2 + 0.4 * (neck - 0.3), 0.35
            levels = [(0.0, 1.0)]
        levels += [(foot, 1.0)]
        top = 1.0 - head * TURNED_HEAD_HEIGHT
        levels += [
            (foot + (top - foot) * i / 6, 1 - (1 - neck) * (i / 6) ** bend) for i in range(1, 7)
        ]
        levels += [
            (top + TURNED_HEAD_HEIGHT * head * (1 + math.sin(a)) / 2, head * math.cos(a) + 0.02)
            for a in arc
        ]
    elif shape == "knob":
        levels += [(0.05 + 0.45 * i / 6, 1 - 0.7 * (i / 6) ** 0.6) for i in range(1, 7)]
        centre, ball = KNOB_BALL
        levels += [(centre + ball * math.sin(a), 0.58 * math.cos(a) + 0.02) for a in arc]
    else:
        raise ValueError(f"no Gobblet piece shape {shape!r}")
    return tuple(levels)


#: Where a Gobblet piece's head begins, as a fraction of its height (a stained set's dark
#: pieces may have a head of another shade: ``Variation.head``).
HEAD_FROM = 0.7


def ball_from(shape: str, turned: tuple[float, float, float]) -> float:
    """Where the ball of a Gobblet profile (:func:`bell_profile`) begins, as a fraction of the
    piece's height; a profile without a ball (``dome``, ``cylinder``) has a cap from
    :data:`HEAD_FROM`."""
    if shape in ("turned", "trumpet"):  # one ball head, drawn by the same branch
        return 1.0 - TURNED_HEAD_HEIGHT * turned[2]
    starts = {"bell": 1.0 - 2 * BELL_HEAD, "knob": KNOB_BALL[0] - KNOB_BALL[1]}
    return starts.get(shape, HEAD_FROM)


def _bell(
    geometry: BoardGeometry,
    name: str,
    content: Any,
    z0: float,
    eye: np.ndarray,
    rng: np.random.Generator,
    vary: Variation | None,
) -> Solid:
    """A Gobblet bell: horizontal slices of a solid of revolution, bottom to top."""
    spec = geometry.pieces["sizes"][str(content["size"])]
    radius, height = spec["diameter"] / 2, float(spec["height"])
    if vary is not None:
        height *= vary.piece_height
    cell = geometry.cell(name)
    offset = rng.normal(0, CAREFUL_OFFSET_MM if vary is None else vary.piece_offset_mm, 2)
    if vary is not None:
        # a piece stays on its cell, at most a little over its edge
        width = float(np.ptp(np.asarray(cell.polygon)[:, 0]))
        reach = max(1.2, (width - 2 * radius) / 2 + 2.0)
        offset = np.clip(offset, -reach, reach)
    cx, cy = np.asarray(cell.center) + offset
    look = geometry.extra["look"] if vary is None else vary.look
    base = bgr(look["pieces"][content["color"]]) * rng.uniform(0.92, 1.06)
    side = _toward(eye, np.array([cx, cy, z0]))
    profile = bell_profile() if vary is None else bell_profile(vary.bell, vary.turned)
    rings = np.ones(len(profile))
    if vary is not None:
        # turned wood seen from above: rings of the grain, a tone of the piece's own
        rings = vary.tone(rng) * (1 + vary.grain * rng.uniform(-1, 1, len(profile)))
    faceted = vary is not None and vary.domain.faceted
    ball = None
    if vary is not None and vary.head_color is not None and content["color"] == "black":
        ball = (ball_from(vary.bell, vary.turned), bgr(vary.head_color))
    solid = Solid(np.array([cx, cy, z0 - height / 2]))
    for i, (t, r) in enumerate(profile):
        t_next, r_next = profile[min(i + 1, len(profile) - 1)]
        slope = (r_next - r) * radius / max((t_next - t) * height, 1e-6)
        ring = circle((cx, cy), r * radius, z0 - t * height, 28)
        color = base if vary is None else np.minimum(base * rings[i], 255)
        if vary is not None and (share := vary.foot_share(r)) > 0:
            color = (1 - share) * color + share * bgr(vary.board)
        if vary is not None and content["color"] == "black" and t >= HEAD_FROM:
            color = color * vary.head
        glossy = ball is not None and t >= ball[0]
        if glossy:
            color = ball[1]
        if i + 1 == len(profile):
            solid.faces.append(Face([ring], color, UP.copy(), glossy))
        elif faceted:
            centre = np.array([cx, cy, z0 - t * height])
            solid.faces += _facets(ring, centre, slope, color, glossy)
        else:
            normal = side - UP * slope
            solid.faces.append(Face([ring], color, normal / np.linalg.norm(normal), glossy))
        if i % 3 == 0:
            solid.casts.append(ring)
    return solid


def _facets(
    ring: np.ndarray, centre: np.ndarray, slope: float, color: np.ndarray, glossy: bool = False
) -> list[Face]:
    """The band of a solid of revolution below ``ring`` (whose radius changes by ``slope`` mm
    per mm of height) as pie slices from ``centre``, each with its own outward normal, so that
    the side away from the lamp is darker than the side towards it (``glossy``: with the lamp's
    highlight)."""
    n, per = len(ring), 4
    faces = []
    for k in range(0, n, per):
        arc = ring[[(k + j) % n for j in range(per + 1)]]
        out = arc[per // 2] - centre
        normal = out / max(float(np.linalg.norm(out)), 1e-9) - UP * slope
        faces.append(
            Face([np.vstack([centre, arc])], color, normal / np.linalg.norm(normal), glossy)
        )
    return faces


#: A Blokus square's corners (TL, TR, BR, BL) and its sides' outward normals, in half-sides.
_SQUARE = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
_SQUARE_NORMALS = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])


def _square(
    geometry: BoardGeometry,
    name: str,
    content: Any,
    z0: float,
    eye: np.ndarray,
    rng: np.random.Generator,
    vary: Variation | None,
) -> Solid:
    """One Blokus square: a thin slab, its visible sides, a glossy top with a lighter inset
    (and with ``vary``, a bevel round the top, shaded by the lamp)."""
    spec = geometry.pieces
    half, depth = spec["square"] / 2, float(spec["thickness"])
    cx, cy = np.asarray(geometry.cell(name).center) + rng.normal(0, 0.25, 2)
    look = geometry.extra["look"] if vary is None else vary.look
    base = bgr(look["pieces"][content]) * rng.uniform(0.95, 1.04)
    if vary is not None:
        base = np.minimum(base * vary.tone(rng), 255)
    ztop = z0 - depth
    top = np.empty((4, 3))
    top[:, :2] = _SQUARE * half + (cx, cy)
    top[:, 2] = ztop
    inner = top.copy()
    inner[:, :2] = _SQUARE * (0.78 * half) + (cx, cy)
    inner[:, 2] = ztop - 0.05
    solid = Solid(np.array([cx, cy, ztop]), casts=[top])
    drop = -UP * depth
    for i, normal in enumerate(_SQUARE_NORMALS):
        a, b = top[i], top[(i + 1) % 4]
        if normal @ (eye - (a + b) / 2) > 0:
            solid.faces.append(Face([np.array([a, b, b + drop, a + drop])], base * 0.78, normal))
    glossy = bool(look.get("glossy", False))
    solid.faces.append(Face([top], base, glossy=glossy))
    if vary is not None and vary.bevel > 0:
        flat = top.copy()
        flat[:, :2] = _SQUARE * ((1 - vary.bevel) * half) + (cx, cy)
        flat[:, 2] = ztop - 0.03
        for i, normal in enumerate(_SQUARE_NORMALS):
            j = (i + 1) % 4
            tilted = (normal + UP) / math.sqrt(2)
            solid.faces.append(Face([np.array([top[i], top[j], flat[j], flat[i]])], base, tilted))
        solid.faces.append(Face([flat], base, glossy=glossy))
    solid.faces.append(Face([inner], np.minimum(base * 1.08 + 6, 255)))
    return solid


@cache
def _glyph(text: str) -> tuple[np.ndarray, ...]:
    """Outlines of ``text`` (Hershey simplex) in units of its height, centred on (0, 0)."""
    font, scale, thick = cv2.FONT_HERSHEY_SIMPLEX, 3.0, 7
    (w, h), _ = cv2.getTextSize(text, font, scale, thick)
    canvas = np.zeros((h + 40, w + 40), dtype=np.uint8)
    cv2.putText(canvas, text, (20, h + 20), font, scale, 255, thick, cv2.LINE_AA)
    contours, _ = cv2.findContours(canvas, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    centre = np.array([(w + 40) / 2, (h + 40) / 2])
    return tuple((c.reshape(-1, 2) - centre) / h for c in contours)


def _spectrangle_values() -> dict[str, int]:
    """Piece value by its sorted colour letters (from ``engine/data/spectrangle.json``)."""
    return {"".join(sorted(code)): int(v) for code, v in data.load("spectrangle")["pieces"].items()}


def tile(
    geometry: BoardGeometry,
    name: str,
    content: Any,
    z0: float,
    eye: np.ndarray,
    rng: np.random.Generator,
    vary: Variation | None,
) -> Solid:
    """A Spectrangle tile: a thin triangular slab, three coloured triangles, the value."""
    look = geometry.extra["look"] if vary is None else vary.look
    depth = float(geometry.pieces["thickness"])
    polygon = np.asarray(geometry.cell(name).polygon, dtype=np.float64)
    centre = polygon.mean(axis=0)
    cell_side = float(np.linalg.norm(polygon[1] - polygon[0]))
    a = math.radians(rng.normal(0, 1.5))
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    shrink = geometry.pieces["tile_side"] / cell_side
    corners = (polygon - centre) @ rot.T * shrink + centre + rng.normal(0, 0.4, 2)
    ztop = z0 - depth
    top = np.column_stack([corners, np.full(3, ztop)])
    mid = np.array([*corners.mean(axis=0), ztop])
    back = bgr(look["tile_back"])
    solid = Solid(mid.copy(), prism_sides(top, depth, back, eye), [top])
    for i, j in ((0, 1), (1, 2), (2, 0)):
        edge = _edge_name(polygon, i, j)
        color = bgr(look["pieces"][content[edge]]) * rng.uniform(0.96, 1.03)
        if vary is not None:
            color = np.minimum(color * vary.tone(rng), 255)
        triangle = np.array([mid, top[i], top[j]])
        solid.faces.append(Face([triangle], color, glossy=look.get("glossy", False)))
    letters = "".join(sorted(SPECTRANGLE_LETTERS[content[e]] for e in ("left", "right", "base")))
    value = _spectrangle_values().get(letters)
    if value is not None:
        up = (top[int(rng.integers(3))][:2] - mid[:2]) / cell_side
        up /= np.linalg.norm(up)
        right = np.array([-up[1], up[0]])
        z = ztop - 0.05
        dot, height = (4.2, 5.0) if vary is None else (vary.dot_mm, 5.0 * vary.label_scale)
        if dot > 0:
            solid.faces.append(Face([circle(mid, dot, z, 20)], bgr("#f4f4f0")))
        glyph = [
            np.column_stack([g @ np.stack([right, -up]) * height + mid[:2], np.full(len(g), z)])
            for g in _glyph(str(value))
        ]
        solid.faces.append(Face(glyph, bgr("#111111")))
    return solid


def _edge_name(polygon: np.ndarray, i: int, j: int) -> str:
    """``left``, ``right`` or ``base`` for the side from vertex ``i`` to ``j`` of a cell."""
    a, b = polygon[i], polygon[j]
    if abs(a[1] - b[1]) < 1e-6:
        return "base"
    others = [k for k in range(3) if abs(polygon[k][1] - polygon[(k + 1) % 3][1]) > 1e-6]
    mids = {k: (polygon[k][0] + polygon[(k + 1) % 3][0]) / 2 for k in others}
    return "left" if mids[i] == min(mids.values()) else "right"


@cache
def _blob(n: int = 40) -> np.ndarray:
    """The colour joker's shapeless blob (unit area), radius by angle from -90 to 270 degrees."""
    t = np.linspace(-np.pi / 2, 1.5 * np.pi, n + 1)
    r = 1 + 0.18 * np.sin(2 * t + 0.5) + 0.1 * np.sin(3 * t + 2) + 0.06 * np.sin(5 * t + 1)
    pts = np.column_stack([r * np.cos(t), r * np.sin(t)])
    x, y = pts[:, 0], pts[:, 1]
    area = 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    return pts / math.sqrt(area)


def token(
    geometry: BoardGeometry,
    name: str,
    content: Any,
    z0: float,
    eye: np.ndarray,
    rng: np.random.Generator,
    vary: Variation | None,
) -> Solid:
    """A Gobsmacked token standing out of its hole: rim, grey face and motif."""
    spec = geometry.pieces
    colors = (geometry.extra["look"] if vary is None else vary.look)["pieces"]
    radius, depth = spec["token_diameter"] / 2, float(spec["thickness"])
    motif = spec["motif"]["kinds"][content]
    coverage = spec["motif"]["coverage"] if vary is None else vary.coverage
    area = coverage * math.pi * radius**2
    rounding = 0.0 if vary is None else vary.rounding
    cx, cy = np.asarray(geometry.cell(name).center) + rng.normal(0, 0.4, 2)
    a = rng.uniform(0, 2 * math.pi)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    zf = z0 - depth

    def flat(points: np.ndarray) -> np.ndarray:
        return np.column_stack([points @ rot.T + (cx, cy), np.full(len(points), zf - 0.05)])

    def square(half: float) -> np.ndarray:
        if rounding <= 0:
            return flat(np.array([[-half, -half], [half, -half], [half, half], [-half, half]]))
        r = rounding * half
        pts = []
        for k, (sx, sy) in enumerate(((1, 1), (-1, 1), (-1, -1), (1, -1))):
            t = np.linspace(k * math.pi / 2, (k + 1) * math.pi / 2, 5)
            pts.append(
                (half - r) * np.array([sx, sy]) + r * np.column_stack([np.cos(t), np.sin(t)])
            )
        return flat(np.concatenate(pts))

    def ring(r: float) -> np.ndarray:
        return flat(circle((0, 0), r, 0, 32)[:, :2])

    side = _toward(eye, np.array([cx, cy, zf]))
    rim = bgr(colors["rim"])
    solid = Solid(np.array([cx, cy, zf]))
    solid.faces = [Face([circle((cx, cy), radius, z0 - d, 32)], rim, side) for d in (0, depth / 2)]
    face = (
        bgr(colors["face"])
        if vary is None
        else np.minimum(bgr(colors["face"]) * vary.tone(rng), 255)
    )
    solid.faces.append(Face([circle((cx, cy), radius, zf, 32)], face))
    solid.casts = [circle((cx, cy), radius, zf, 24)]
    shape = motif["shape"]
    if shape == "circle":
        solid.faces.append(Face([ring(math.sqrt(area / math.pi))], bgr(colors[motif["colour"]])))
    elif shape == "square":
        solid.faces.append(Face([square(math.sqrt(area) / 2)], bgr(colors[motif["colour"]])))
    elif shape == "circle-in-square":
        half, stroke = math.sqrt(area) / 2, 1.6
        red = bgr(colors["red"])
        solid.faces.append(Face([square(half), square(half - stroke)], red))
        solid.faces.append(Face([ring(half - 2.6), ring(half - 2.6 - stroke)], red))
    else:
        blob = _blob() * math.sqrt(area)
        half = len(blob) // 2
        solid.faces.append(Face([flat(blob[: half + 1])], bgr(colors["white"])))
        solid.faces.append(Face([flat(blob[half:])], bgr(colors["black"])))
    return solid
