"""Write the board geometry files ``hardware/boards/GAME.json`` (format: ``README.md`` here).

Run ``python hardware/boards/generate.py`` after changing a number below and commit the JSON it
writes. Every length is in millimetres, in the board's own frame (x right, y down, as seen from
the camera side). Values marked "assumption" are not from a measured box: correct them here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DICTIONARY = "DICT_4X4_50"
FILES = "abcdefghijklmnopqrstuvwxyz"

MARKER = 30.0  # side of a mat marker's black square
QUIET = 4.0  # white border printed around every marker
EDGE = 23.0  # distance of a mat marker's centre from the sheet's edge
STICKER = 22.0  # side of a sticker marker (Gobsmacked's board face)

Point = list[float]


def _r(value: float) -> float:
    return round(float(value), 3)


def _pt(x: float, y: float) -> Point:
    return [_r(x), _r(y)]


def _rect(x0: float, y0: float, x1: float, y1: float) -> list[Point]:
    return [_pt(x0, y0), _pt(x1, y0), _pt(x1, y1), _pt(x0, y1)]


def _marker(marker_id: int, x: float, y: float, size: float, rotation: float = 0.0) -> dict:
    return {"id": marker_id, "center": _pt(x, y), "size": size, "rotation_deg": rotation}


def _print(kind: str, ruler: Point, title: Point) -> dict[str, Any]:
    """How the printed sheet is laid out (``kind`` "mat" or "template")."""
    return {"kind": kind, "quiet_zone": QUIET, "ruler": ruler, "title": title}


def clearance(thickness: float) -> float:
    """White mat left between a marker's quiet zone and a board ``thickness`` mm thick, so that
    the board's edge cannot hide it from a camera tilted up to 35 degrees (plus half its view)."""
    return 4.0 + 1.5 * thickness


def band(thickness: float) -> float:
    """Width of the mat band around a board that holds the markers."""
    return math.ceil(EDGE + MARKER / 2 + QUIET + clearance(thickness))


def _ring_markers(first_id: int, width: float, height: float) -> list[dict]:
    """8 markers in the mat band: corners and edge middles, clockwise from the top-left."""
    a, bx, by = EDGE, width - EDGE, height - EDGE
    spots = [(a, a), (width / 2, a), (bx, a), (bx, height / 2)]
    spots += [(bx, by), (width / 2, by), (a, by), (a, height / 2)]
    return [_marker(first_id + i, x, y, MARKER) for i, (x, y) in enumerate(spots)]


def square_board(
    game: str,
    size: int,
    pitch: float,
    border: float,
    thickness: float,
    first_id: int,
    pieces: dict[str, Any],
    look: dict[str, Any],
) -> dict[str, Any]:
    """A square board of ``size`` x ``size`` cells lying on a mat with 8 markers around it."""
    board = size * pitch + 2 * border
    margin = band(thickness)
    mat = board + 2 * margin
    x0 = y0 = margin + border
    cells = []
    for rank in range(size):
        for file in range(size):
            left, top = x0 + file * pitch, y0 + (size - 1 - rank) * pitch
            polygon = _rect(left, top, left + pitch, top + pitch)
            cells.append({"name": f"{FILES[file]}{rank + 1}", "polygon": polygon})
    return {
        "game": game,
        "aruco_dictionary": DICTIONARY,
        "orientation": "flat",
        "markers": _ring_markers(first_id, mat, mat),
        "cells": cells,
        "mat": {"origin": [0.0, 0.0], "size": [mat, mat]},
        "print": _print("mat", _pt(2 * EDGE, mat - EDGE + 2), _pt(2 * EDGE, EDGE - 3)),
        "board": {
            "outline": _rect(margin, margin, margin + board, margin + board),
            "thickness": thickness,
        },
        "pieces": pieces,
        "look": look,
    }


def gobblet() -> dict[str, Any]:
    """Gobblet (Gigamic): wooden 4x4 board, squares about 55 mm, 12 bell pieces a side."""
    sizes = {"1": (24, 22), "2": (32, 30), "3": (40, 38), "4": (48, 46)}  # assumption
    pieces = {
        "shape": "bell",
        "sizes": {k: {"diameter": d, "height": h} for k, (d, h) in sizes.items()},
    }
    look = {
        "board": "#c49a63",
        "grid": "#7a5530",
        "pieces": {"white": "#e9d3a8", "black": "#2b2522"},
        "glossy": False,
    }
    return square_board("gobblet", 4, 55.0, 15.0, 10.0, 0, pieces, look)


def blokus(game: str, size: int, first_id: int, starts: list[str]) -> dict[str, Any]:
    """Blokus: 20 mm squares on a light grey board with a raised grid."""
    pieces = {"square": 19.4, "pitch": 20.0, "thickness": 2.6}
    look = {
        "board": "#c8cacb",
        "grid": "#e2e4e5",
        "pieces": {"orange": "#f2761c", "violet": "#7b3fb0"},
        "start_cells": starts,
        "glossy": True,
    }
    return square_board(game, size, 20.0, 10.0, 5.0, first_id, pieces, look)


def spectrangle() -> dict[str, Any]:
    """Spectrangle: 36 triangular cells in 6 rows on a triangular board (sizes: assumption)."""
    cell, margin, side_margin, top, thickness = 50.0, 15.0, 10.0, 10.0, 3.0
    root3 = math.sqrt(3.0)
    board_side = 6 * cell + 2 * margin * root3
    board_h = board_side * root3 / 2
    width = math.ceil(board_side + 2 * side_margin)
    height = math.ceil(top + board_h + band(thickness))
    cx = width / 2
    incentre_y = top + 2 * board_h / 3
    apex_y = incentre_y - 2 * (6 * cell * root3 / 2) / 3
    ch = cell * root3 / 2
    cells = []
    for row in range(6):
        ya, yb = apex_y + row * ch, apex_y + (row + 1) * ch
        for k in range(2 * row + 1):
            j = k // 2
            xl = cx + (j - row / 2) * cell
            if k % 2 == 0:
                polygon = [_pt(xl, ya), _pt(xl + cell / 2, yb), _pt(xl - cell / 2, yb)]
            else:
                polygon = [_pt(xl, ya), _pt(xl + cell, ya), _pt(xl + cell / 2, yb)]
            cells.append({"name": str(row * row + k), "polygon": polygon})
    base_y = top + board_h
    outline = [_pt(cx, top), _pt(cx + board_side / 2, base_y), _pt(cx - board_side / 2, base_y)]
    a = EDGE
    out = MARKER / 2 + QUIET + clearance(thickness)  # side markers' centres from the board
    mid_y, mid_dx = top + board_h / 2, board_side / 4
    markers = [
        _marker(24, a, a, MARKER),
        _marker(25, width - a, a, MARKER),
        _marker(26, cx + mid_dx + out * root3 / 2, mid_y - out / 2, MARKER, 60.0),
        _marker(27, width - a, height - a, MARKER),
        _marker(28, a, height - a, MARKER),
        _marker(29, cx - mid_dx - out * root3 / 2, mid_y - out / 2, MARKER, -60.0),
    ]
    return {
        "game": "spectrangle",
        "aruco_dictionary": DICTIONARY,
        "orientation": "flat",
        "markers": markers,
        "cells": cells,
        "mat": {"origin": [0.0, 0.0], "size": [float(width), float(height)]},
        "print": _print(
            "mat", _pt(2 * EDGE + 4, height - EDGE + 2), _pt(2 * EDGE + 124, height - 31)
        ),
        "board": {"outline": outline, "thickness": thickness},
        "pieces": {"tile_side": 47.0, "thickness": 3.0},
        "look": {
            "board": "#1d2a44",
            "grid": "#cfd6e6",
            "pieces": {
                "red": "#d7262e",
                "green": "#2f9e44",
                "blue": "#1f5fbf",
                "yellow": "#f2cf1d",
                "purple": "#7d3c98",
                "white": "#f4f4f0",
            },
            "tile_back": "#151515",
            "glossy": True,
        },
    }


def gobsmacked() -> dict[str, Any]:
    """Gobsmacked: an upright board of 3 rows x 8 holes with marker stickers on its face."""
    width, height, pitch, hole = 400.0, 220.0, 40.0, 32.0  # assumption
    cells = []
    for rank in range(3):
        for file in range(8):
            x, y = 60.0 + file * pitch, 165.0 - rank * pitch
            polygon = [
                _pt(x + hole / 2 * math.cos(t), y + hole / 2 * math.sin(t))
                for t in (2 * math.pi * i / 24 for i in range(24))
            ]
            cells.append({"name": f"{FILES[file]}{rank + 1}", "polygon": polygon})
    s = STICKER / 2 + QUIET + 4.0  # sticker centre from the board's edges
    spots = [(s, s), (width - s, s), (width - s, height - s), (260.0, height - s)]
    spots += [(140.0, height - s), (s, height - s)]
    markers = [_marker(30 + i, x, y, STICKER) for i, (x, y) in enumerate(spots)]
    return {
        "game": "gobsmacked",
        "aruco_dictionary": DICTIONARY,
        "orientation": "upright",
        "markers": markers,
        "cells": cells,
        "mat": {"origin": [-10.0, -10.0], "size": [width + 20, height + 20]},
        "print": _print("template", _pt(150.0, 56.0), _pt(45.0, 12.0)),
        "board": {"outline": _rect(0, 0, width, height), "thickness": 0.0},
        "pieces": {
            "token_diameter": 30.0,
            "thickness": 5.0,
            "motif": {
                "coverage": 0.6,
                "kinds": {
                    "black-circle": {"shape": "circle", "colour": "black"},
                    "black-square": {"shape": "square", "colour": "black"},
                    "white-circle": {"shape": "circle", "colour": "white"},
                    "white-square": {"shape": "square", "colour": "white"},
                    "shape-joker": {"shape": "circle-in-square", "colour": "red"},
                    "colour-joker": {"shape": "blob", "colour": "black-white"},
                },
            },
        },
        "look": {
            "board": "#2e6fa8",
            "grid": "#1b4a75",
            "hole": "#10161c",
            "score_track": {"rect": [40.0, 8.0, 360.0, 40.0], "count": 16},
            "pieces": {
                "face": "#8a8a88",
                "rim": "#5e5e5c",
                "black": "#141414",
                "white": "#f2f2ee",
                "red": "#c8262a",
            },
            "glossy": False,
        },
    }


def all_boards() -> list[dict[str, Any]]:
    """The geometry of every game, in the order of the observation spec."""
    return [
        gobsmacked(),
        spectrangle(),
        gobblet(),
        blokus("blokus", 12, 8, ["d9", "i4"]),
        blokus("blokus-duo", 14, 16, ["e10", "j5"]),
    ]


def dumps(geometry: dict[str, Any]) -> str:
    """JSON text with one marker or cell per line, so that diffs stay readable."""
    parts = []
    for key, value in geometry.items():
        if isinstance(value, list):
            items = ",\n  ".join(json.dumps(item) for item in value)
            parts.append(f"{json.dumps(key)}: [\n  {items}\n ]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{\n " + ",\n ".join(parts) + "\n}\n"


def main() -> None:
    """Write one JSON file per game next to this script."""
    for geometry in all_boards():
        path = HERE / f"{geometry['game']}.json"
        path.write_text(dumps(geometry), encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
