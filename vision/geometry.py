"""Board geometry files (``hardware/boards/GAME.json``): markers, cells and mat, in millimetres.

Frame: the board's own, as seen from the camera side, x to the right, y downwards, in mm.
A marker's ``rotation_deg`` turns it clockwise as seen from the camera (positive angles in a
y-down frame). Its corners are listed in OpenCV's ArUco order: top-left, top-right,
bottom-right, bottom-left of the unrotated marker.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

#: Where the geometry files of a source checkout live, and are edited.
SOURCE_BOARDS_DIR = Path(__file__).resolve().parent.parent / "hardware" / "boards"
#: Where an installed package keeps its copy of them (``setup.py`` maps ``hardware/boards`` to
#: the package ``vision.boards``).
PACKAGE_BOARDS_DIR = Path(__file__).resolve().parent / "boards"
#: The geometry files in use: the checkout's when there is one, else the installed copy.
BOARDS_DIR = SOURCE_BOARDS_DIR if SOURCE_BOARDS_DIR.is_dir() else PACKAGE_BOARDS_DIR


class GeometryError(ValueError):
    """A geometry file that is missing or malformed; the message says which and why."""


def hex_bgr(colour: str) -> np.ndarray:
    """``"#rrggbb"`` (sRGB, as the geometry files' ``look`` gives colours) -> BGR float array
    in 0..255."""
    value = colour.lstrip("#")
    r, g, b = (int(value[i : i + 2], 16) for i in (0, 2, 4))
    return np.array([b, g, r], dtype=np.float64)


@dataclass(frozen=True)
class Marker:
    """One ArUco marker printed on the mat or stuck on the board."""

    id: int
    center: tuple[float, float]
    size: float
    rotation_deg: float = 0.0

    def corners(self) -> np.ndarray:
        """The 4 corners (4x2 float32, mm) in ArUco order: TL, TR, BR, BL of the marker."""
        h = self.size / 2.0
        local = np.array([[-h, -h], [h, -h], [h, h], [-h, h]], dtype=np.float64)
        a = math.radians(self.rotation_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        return (local @ rot.T + np.asarray(self.center)).astype(np.float32)


@dataclass(frozen=True)
class Cell:
    """One cell (square, hole or triangle) of the board, named as in the observation spec."""

    name: str
    polygon: tuple[tuple[float, float], ...]

    @property
    def center(self) -> tuple[float, float]:
        """The polygon's vertex centroid (for squares, circles and triangles: its centre)."""
        pts = np.asarray(self.polygon, dtype=np.float64)
        cx, cy = pts.mean(axis=0)
        return float(cx), float(cy)


@dataclass(frozen=True)
class BoardGeometry:
    """Everything ``vision`` and the mat printer know about one game's physical board."""

    game: str
    aruco_dictionary: str
    markers: tuple[Marker, ...]
    cells: tuple[Cell, ...]
    mat_origin: tuple[float, float]
    mat_size: tuple[float, float]
    pieces: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def board_height(self) -> float:
        """Height of the playing surface above the markers' plane (``board.thickness``, mm; 0
        when the file gives none)."""
        return float(self.extra.get("board", {}).get("thickness", 0.0))

    @property
    def upright(self) -> bool:
        """Whether the board stands upright, its face the markers' plane (``orientation``)."""
        return self.extra.get("orientation") == "upright"

    @property
    def marker_ids(self) -> frozenset[int]:
        """The ids of this game's markers (each game has its own)."""
        return frozenset(m.id for m in self.markers)

    def marker(self, marker_id: int) -> Marker:
        """The marker with ``marker_id``; ``KeyError`` if the board has none."""
        for m in self.markers:
            if m.id == marker_id:
                return m
        raise KeyError(marker_id)

    def cell(self, name: str) -> Cell:
        """The cell called ``name``; ``KeyError`` if the board has none."""
        for c in self.cells:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def cell_names(self) -> tuple[str, ...]:
        """Cell names in file order."""
        return tuple(c.name for c in self.cells)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> BoardGeometry:
        """Build from the parsed JSON of a geometry file; :class:`GeometryError` if malformed."""
        try:
            markers = tuple(
                Marker(
                    int(m["id"]),
                    _xy(m["center"]),
                    float(m["size"]),
                    float(m.get("rotation_deg", 0.0)),
                )
                for m in obj["markers"]
            )
            cells = tuple(
                Cell(str(c["name"]), tuple(_xy(p) for p in c["polygon"])) for c in obj["cells"]
            )
            mat = obj["mat"]
            known = {"game", "aruco_dictionary", "markers", "cells", "mat", "pieces"}
            return cls(
                game=str(obj["game"]),
                aruco_dictionary=str(obj["aruco_dictionary"]),
                markers=markers,
                cells=cells,
                mat_origin=_xy(mat["origin"]),
                mat_size=_xy(mat["size"]),
                pieces=dict(obj.get("pieces", {})),
                extra={k: v for k, v in obj.items() if k not in known},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GeometryError(f"malformed geometry: {exc!r}") from None


def _xy(value: Any) -> tuple[float, float]:
    x, y = value
    return float(x), float(y)


@cache
def load_geometry(game: str, path: str | None = None) -> BoardGeometry:
    """The geometry of ``game`` from ``hardware/boards/GAME.json`` (or the file at ``path``)."""
    file = Path(path) if path is not None else BOARDS_DIR / f"{game}.json"
    try:
        obj = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GeometryError(f"cannot read {file}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise GeometryError(f"{file} is not valid JSON: {exc}") from None
    geometry = BoardGeometry.from_json(obj)
    if path is None and geometry.game != game:
        raise GeometryError(f"{file} describes {geometry.game!r}, not {game!r}")
    return geometry


def available_games() -> tuple[str, ...]:
    """Games with a geometry file in :data:`BOARDS_DIR` (``hardware/boards``)."""
    return tuple(sorted(p.stem for p in BOARDS_DIR.glob("*.json")))
