"""Drawing 3D polygons into the camera image, with a point lamp for shading, shadows and glare.

Polygons are given in the board frame (mm, N x 3) and projected through the real (distorted)
camera, so long edges should be densified first (:func:`densify`). Shadows and glare go into
half-resolution layers that the scene blurs and applies at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from .camera import Camera

_SHIFT = 4
_ONE = 1 << _SHIFT
UP = np.array([0.0, 0.0, -1.0])


def densify(points: np.ndarray, step: float) -> np.ndarray:
    """The closed polygon ``points`` (N x D) with extra vertices at most ``step`` apart."""
    pts = np.asarray(points, dtype=np.float64)
    out = []
    for a, b in zip(pts, np.roll(pts, -1, axis=0), strict=True):
        n = max(1, int(np.ceil(np.linalg.norm(b - a) / step)))
        out.append(a + (b - a) * (np.arange(n)[:, None] / n))
    return np.concatenate(out)


def clip_near(polygon: np.ndarray, camera: Camera, near: float) -> np.ndarray:
    """The part of the 3D ``polygon`` at least ``near`` mm in front of the camera
    (Sutherland-Hodgman against that plane); may be empty."""
    depth = camera.depth(polygon) - near
    if (depth >= 0).all():
        return polygon
    out = []
    n = len(polygon)
    for i in range(n):
        j = (i + 1) % n
        a, b, da, db = polygon[i], polygon[j], depth[i], depth[j]
        if da >= 0:
            out.append(a)
        if (da >= 0) != (db >= 0):
            out.append(a + (b - a) * (da / (da - db)))
    return np.array(out).reshape(-1, 3)


def circle(centre: Sequence[float], radius: float, z: float, n: int = 24) -> np.ndarray:
    """A horizontal circle (n x 3) around ``centre`` (x, y) at height coordinate ``z``."""
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    x, y = centre[0] + radius * np.cos(t), centre[1] + radius * np.sin(t)
    return np.column_stack([x, y, np.full(n, z)])


@dataclass
class Face:
    """One flat part of a solid: a polygon (or several, filled together), colour and normal."""

    polygons: list[np.ndarray]
    color: np.ndarray
    normal: np.ndarray = field(default_factory=lambda: UP.copy())
    glossy: bool = False


@dataclass
class Solid:
    """A piece or a hand: faces drawn in order, the polygons that cast its shadow."""

    anchor: np.ndarray
    faces: list[Face] = field(default_factory=list)
    casts: list[np.ndarray] = field(default_factory=list)


#: brightness of a face square to the lamp (ambient plus the lamp's share)
LIT = 1.12


class Painter:
    """Projects and fills faces into ``image`` (BGR uint8, modified in place). ``haze`` (0..1)
    is the share of full white a veiling reflection adds to every face of a solid (the sheen of
    plastic or varnish that lifts black pieces and motifs towards grey); ``ambient`` the share
    of light from all round, the lamp giving the rest up to :data:`LIT` (:meth:`lambert`).
    ``relative``: faces are shaded relative to a face parallel to the board at the same place,
    so that a piece's face that lies flat is exactly as light as the board of its colour (the
    board's texture is drawn unlit): a piece of the board's own material stands out from it
    only by its shading and shadows, as under a real lamp."""

    def __init__(
        self,
        image: np.ndarray,
        camera: Camera,
        lamp: np.ndarray,
        shiny: float,
        haze: float = 0.0,
        ambient: float = 0.62,
        relative: bool = False,
    ) -> None:
        self.image = image
        self.camera = camera
        self.lamp = np.asarray(lamp, dtype=np.float64)
        self.shiny = shiny
        self.haze = haze
        self.ambient = ambient
        self.relative = relative
        self.diffuse = round(LIT - ambient, 9)  # 0.5 exactly for the nominal 0.62
        h, w = image.shape[:2]
        self.shadow = np.zeros((h // 2, w // 2), dtype=np.uint8)
        self.glare = np.zeros((h // 2, w // 2), dtype=np.uint8)

    def fixed(self, polygons: Sequence[np.ndarray], scale: float = 1.0) -> list[np.ndarray]:
        """Fixed-point pixel coordinates of 3D ``polygons`` (one projection for all of them),
        ``scale``d (0.5 for the half-resolution layers), for OpenCV's sub-pixel drawing."""
        if not polygons:
            return []
        px = self.camera.project(np.concatenate(polygons)) * (scale * _ONE)
        ends = np.cumsum([len(p) for p in polygons])[:-1]
        return np.split(np.round(px).astype(np.int32), ends)

    def facing(self, point: np.ndarray, normal: np.ndarray) -> bool:
        """Whether a face through ``point`` with outward ``normal`` faces the camera."""
        return float(normal @ (self.camera.position - point)) > 0

    def _unit_to(self, target: np.ndarray, points: np.ndarray) -> np.ndarray:
        d = target - points
        return d / np.linalg.norm(d, axis=1, keepdims=True)

    def lambert(self, points: np.ndarray, normals: np.ndarray) -> np.ndarray:
        """Ambient plus diffuse light on faces at ``points`` (F x 3) with unit ``normals``."""
        cos = (normals * self._unit_to(self.lamp, points)).sum(axis=1)
        return self.ambient + self.diffuse * np.maximum(cos, 0.0)

    def specular(self, points: np.ndarray, normals: np.ndarray) -> np.ndarray:
        """Blinn-Phong highlight (0..1) of the lamp on glossy faces at ``points``."""
        half = self._unit_to(self.lamp, points) + self._unit_to(self.camera.position, points)
        half /= np.linalg.norm(half, axis=1, keepdims=True)
        return np.maximum((normals * half).sum(axis=1), 0.0) ** self.shiny

    def shade(self, points: np.ndarray, normals: np.ndarray) -> np.ndarray:
        """The factor of faces' colours at ``points``: :meth:`lambert`, or (``relative``) that
        over the light on a face parallel to the board at the same points."""
        shade = self.lambert(points, normals)
        if self.relative:
            shade = shade / self.lambert(points, np.broadcast_to(UP, normals.shape))
        return shade

    def draw(self, solids: Sequence[Solid]) -> None:
        """Draw the solids in order, faces shaded by the lamp; note glossy faces' glare."""
        faces = [face for solid in solids for face in solid.faces]
        if not faces:
            return
        firsts = [f.polygons[0] for f in faces]
        starts = np.cumsum([0] + [len(p) for p in firsts[:-1]])
        centres = (
            np.add.reduceat(np.concatenate(firsts), starts)
            / np.array([len(p) for p in firsts])[:, None]
        )
        normals = np.array([f.normal for f in faces])
        shade = self.shade(centres, normals)
        projected = iter(self.fixed([p for f in faces for p in f.polygons]))
        for face, k in zip(faces, shade, strict=True):
            pts = [next(projected) for _ in face.polygons]
            c = tuple(float(v) for v in np.clip(face.color * k + 255 * self.haze, 0, 255))
            cv2.fillPoly(self.image, pts, c, cv2.LINE_AA, _SHIFT)
        glossy = [i for i, f in enumerate(faces) if f.glossy]
        if not glossy:
            return
        levels = 230 * self.specular(centres[glossy], normals[glossy])
        for i, level in zip(glossy, levels, strict=True):
            if level >= 4:
                c, polys = centres[i], faces[i].polygons
                outer = self.fixed(polys, 0.5)
                spot = self.fixed([c + 0.5 * (p - c) for p in polys], 0.5)
                cv2.fillPoly(self.glare, outer, 0.3 * float(level), cv2.LINE_AA, _SHIFT)
                cv2.fillPoly(self.glare, spot, float(level), cv2.LINE_AA, _SHIFT)

    def cast(self, solids: Sequence[Solid], plane_z: float, lamp_radius: float = 0.0) -> None:
        """Add the shadows that ``solids`` cast from the lamp on the plane at ``plane_z``; with
        ``lamp_radius`` (mm), the lamp is a disc of that radius: the mean of the hard shadows
        from :data:`LAMP_POINTS` points spread over it (sharp where a solid meets the plane,
        softer the higher its caster)."""
        polygons = [p for solid in solids for p in solid.casts]
        if not polygons:
            return
        if lamp_radius <= 0:
            self._cast_from(self.lamp, polygons, plane_z, self.shadow)
            return
        total = np.zeros(self.shadow.shape, dtype=np.float32)
        one = np.zeros_like(self.shadow)
        for dx, dy in lamp_disc(LAMP_POINTS) * lamp_radius:
            one[:] = 0
            self._cast_from(self.lamp + np.array([dx, dy, 0.0]), polygons, plane_z, one)
            total += one
        darker = np.round(total / LAMP_POINTS).astype(np.uint8)
        np.maximum(self.shadow, darker, out=self.shadow)

    def _cast_from(
        self, lamp: np.ndarray, polygons: list[np.ndarray], plane_z: float, layer: np.ndarray
    ) -> None:
        """Fill ``layer`` where ``polygons`` shadow the plane at ``plane_z`` from the point
        ``lamp``."""
        lz = lamp[2]
        grounds = []
        for polygon in polygons:
            dz = polygon[:, 2:3] - lz
            t = np.where(np.abs(dz) > 1e-6, (plane_z - lz) / np.where(dz == 0, 1, dz), 1.0)
            grounds.append(lamp + (polygon - lamp) * t)
        for pts in self.fixed(grounds, 0.5):
            cv2.fillPoly(layer, [pts], 255, cv2.LINE_AA, _SHIFT)


#: points of a lamp disc whose hard shadows are averaged (``Painter.cast``)
LAMP_POINTS = 12


def lamp_disc(n: int) -> np.ndarray:
    """``n`` points spread evenly over the unit disc (a sunflower spiral), n x 2."""
    k = np.arange(n) + 0.5
    r = np.sqrt(k / n)
    angle = k * math.pi * (3 - math.sqrt(5))
    return np.column_stack([r * np.cos(angle), r * np.sin(angle)])


def soften(layer: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur of a single-channel layer; large ``sigma`` blurs a smaller copy (fast)."""
    factor = max(1, int(sigma / 2))
    if factor == 1:
        return cv2.GaussianBlur(layer, (0, 0), sigma)
    h, w = layer.shape[:2]
    small = cv2.resize(
        layer, (max(1, w // factor), max(1, h // factor)), interpolation=cv2.INTER_AREA
    )
    small = cv2.GaussianBlur(small, (0, 0), sigma / factor)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
