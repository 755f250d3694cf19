"""``render_traced``: the same seeded scenes drawn by a path tracer (Mitsuba 3) instead of this
package's polygon painter, so that the readers are fitted and judged on light this package does
not model: interreflections, soft shadows of area lamps, Fresnel glare of broad windows on
glossy or lacquered pieces, the camera seeing the board's own wood on a piece's foot.

The scene's draws are :class:`~.vary.Variation`'s (colours, woods, stains, shapes, heights,
offsets, the camera's response) and :func:`~.pose.random_camera`'s pose; the light (a sun or
an area lamp of any size, a window, the room) and the materials (matte or lacquered wood,
rough or smooth plastic, a mat or a lacquered board) are drawn here, the held-out domain's
from wider ranges (:class:`~.domain.Domain`'s path-traced fields). A hand, when asked for or
drawn, is :func:`~.hands.hand_pose`'s outlines as low tents of skin and cloth, casting its own
shadow. Mitsuba is imported lazily (``pip install mitsuba``, in the ``[train]`` and ``[dev]``
extras): the referee never needs it.
"""

from __future__ import annotations

import itertools
import math
import tempfile
import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..geometry import BoardGeometry, load_geometry
from .camera import Camera
from .domain import Domain
from .hands import hand_colours, hand_pose
from .paint import UP, Solid, circle, clip_near
from .photo import Look, brightest, lamp_gains, respond, srgb_decode, srgb_encode
from .pieces import HEAD_FROM, ball_from, bell_profile, tile, token
from .pose import keep_centre, keep_points, random_camera, random_lamp
from .scene import DEFAULT_SIZE, HAND_CHANCE, Scene, _occlusion, _textures
from .textures import Texture, bgr, rgb, table_texture
from .vary import Variation

#: Games this renderer draws.
GAMES = ("gobsmacked", "gobblet", "blokus", "blokus-duo", "spectrangle")
#: Pixels round the mat and the pieces rendered at full quality; the rest of the frame (the
#: table) is rendered at a quarter of the resolution.
CROP_MARGIN = 32
#: Facets round a turned piece.
SEGMENTS = 48
#: Skin (a little sheen) and sleeve (cloth) of a hand.
HAND_FINISHES: dict[str, dict[str, Any]] = {
    "skin": {"type": "roughplastic", "alpha": 0.45},
    "sleeve": {"type": "diffuse"},
}
#: Pixels a side of one tile's artwork in the tiles' texture atlas (Spectrangle: about 5 a mm).
ATLAS_SLOT = 256


class TracerMissing(RuntimeError):
    """Mitsuba is not installed."""


@cache
def mitsuba() -> Any:
    """The ``mitsuba`` module in its ``scalar_rgb`` variant (:class:`TracerMissing` without
    it), rendering on this process's thread alone (:data:`RENDER_THREADS`)."""
    try:
        import drjit
        import mitsuba as mi
    except ImportError:
        raise TracerMissing(
            "path-traced scenes need Mitsuba 3: pip install -e '.[train]' (or pip install mitsuba)"
        ) from None
    mi.set_variant("scalar_rgb")
    drjit.set_thread_count(RENDER_THREADS)
    return mi


#: Threads a render runs on. Mitsuba's threads render the frame's blocks, and each adds its
#: block to the film as it finishes; where the pixel filter's reach overlaps two blocks, the
#: order of those sums changes from run to run, and so the linear picture's last bits. Most
#: renders still round to the same 8-bit picture, not all: one of Gobblet's 3750 training
#: scenes changed a patch between two runs, and the fit that learnt from it another network.
#: On one thread the order is the blocks': a seed renders one picture. A training run renders
#: on a process a core (:func:`vision.train.pool.parallel_map`), so it loses nothing; a
#: render in one process alone takes about 1.7 times as long on two cores.
RENDER_THREADS = 1


def linear(hex_color: str, factor: float = 1.0) -> list[float]:
    """Linear-light RGB reflectance of an sRGB ``#rrggbb`` times ``factor`` (at most 0.95)."""
    value = srgb_decode(np.array(rgb(hex_color)) / 255) * factor
    return np.clip(value, 0.0, 0.95).tolist()


def turned_mesh(
    profile: tuple[tuple[float, float], ...],
    centre: tuple[float, float],
    radius: float,
    z0: float,
    height: float,
    n: int = SEGMENTS,
) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (V x 3) and triangles (F x 3) of the solid of revolution of ``profile``
    ((height, radius) fractions, bottom up) standing on the plane ``z0`` (up is -z), its top
    closed by a fan."""
    rings = [circle(centre, r * radius, z0 - t * height, n) for t, r in profile]
    verts = np.concatenate([*rings, [[centre[0], centre[1], z0 - profile[-1][0] * height]]])
    faces = []
    for i in range(len(profile) - 1):
        for k in range(n):
            a, b = i * n + k, i * n + (k + 1) % n
            faces += [(a, b + n, b), (a, a + n, b + n)]
    last, tip = (len(profile) - 1) * n, len(verts) - 1
    faces += [(last + k, tip, last + (k + 1) % n) for k in range(n)]
    return verts, np.asarray(faces, dtype=np.uint32)


def faded_feet(
    profile: tuple[tuple[float, float], ...], vary: Variation
) -> list[tuple[tuple[float, float], ...]]:
    """The bands (each two levels, bottom up) of ``profile`` whose foot fades to the board's
    colour (:meth:`~.vary.Variation.foot_share`), one colour each: every band from the foot up
    to the first level wholly of the piece's colour (none without a fade)."""
    bands = []
    for below, above in itertools.pairwise(profile):
        if vary.foot_share(below[1]) <= 0:
            break
        bands.append((below, above))
    return bands


def split_profile(
    profile: tuple[tuple[float, float], ...], at: float
) -> tuple[tuple[tuple[float, float], ...], tuple[tuple[float, float], ...]]:
    """``profile`` cut at height fraction ``at``: the levels below and from it, sharing the
    ring where they meet (either may be empty)."""
    below = tuple(p for p in profile if p[0] < at)
    above = tuple(p for p in profile if p[0] >= at)
    if below and above:
        below = (*below, above[0])
    return below, above


def sensor_transform(camera: Camera) -> np.ndarray:
    """Mitsuba's camera-to-world matrix (4x4) of ``camera``: Mitsuba's camera looks along +z
    with +x left and +y up, OpenCV's with +x right and +y down."""
    out = np.eye(4)
    out[:3, :3] = camera.rotation.T @ np.diag([-1.0, -1.0, 1.0])
    out[:3, 3] = camera.position
    return out


def crop_box(
    camera: Camera, points: np.ndarray, margin: int = CROP_MARGIN
) -> tuple[int, int, int, int]:
    """The pixel box ``(x0, y0, x1, y1)`` round the projections of ``points`` (N x 3),
    ``margin`` wider, inside the image."""
    px = camera.project_ideal(points)
    w, h = camera.size
    x0, y0 = np.floor(px.min(axis=0)).astype(int) - margin
    x1, y1 = np.ceil(px.max(axis=0)).astype(int) + margin
    return max(0, int(x0)), max(0, int(y0)), min(w, int(x1)), min(h, int(y1))


class _Builder:
    """The Mitsuba scene dictionary of one scene, its textures written into ``folder``."""

    def __init__(self, folder: Path, geometry: BoardGeometry, vary: Variation) -> None:
        self.mi = mitsuba()
        self.folder, self.geometry, self.vary = folder, geometry, vary
        self.surface_z = -float(geometry.extra["board"]["thickness"])
        self.shapes: dict[str, Any] = {}
        #: the pieces' meshes: vertices, triangles, finish, linear colour, smooth shading
        self.parts: list[tuple[np.ndarray, np.ndarray, str, list[float], bool]] = []
        #: the flat pieces' prisms (:meth:`slabs`: vertices, triangles, texture coordinates)
        #: and their atlas
        self.tiled: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.atlas: np.ndarray | None = None
        self.tops: list[np.ndarray] = []

    def _texture(self, texture: Texture, name: str) -> Any:
        path = self.folder / f"{name}.png"
        cv2.imwrite(str(path), texture.pixels)
        return self._bitmap(path)

    def _bitmap(self, path: Path, **options: Any) -> Any:
        """The Mitsuba bitmap texture of the image file ``path``, loaded once: the scene may be
        loaded again and again (:func:`_load`)."""
        return self.mi.load_dict({"type": "bitmap", "filename": str(path), **options})

    def rectangle(self, name: str, lo: np.ndarray, size: np.ndarray, z: float, bsdf: dict) -> None:
        """A rectangle at ``z`` from corner ``lo`` (x, y mm) of ``size``."""
        T = self.mi.ScalarTransform4f
        cx, cy = lo + size / 2
        self.shapes[name] = {
            "type": "rectangle",
            "to_world": T().translate([float(cx), float(cy), z])
            @ T().scale([float(size[0]) / 2, float(size[1]) / 2, 1.0]),
            "bsdf": {"type": "twosided", "bsdf": bsdf},
        }

    def planes(self, mat: Texture, board: Texture | None, rng: np.random.Generator) -> None:
        """The mat (an upright board's face), the board lying on it if any (its top face
        textured, its sides of its colour; lacquered by chance) and the table (the wall
        behind an upright board)."""
        px = mat.pixels.shape[1::-1]
        self.rectangle(
            "mat",
            np.asarray(mat.origin),
            np.asarray(px) / mat.px_per_mm,
            0.0,
            {"type": "diffuse", "reflectance": self._texture(mat, "mat")},
        )
        if board is None:
            self._table(np.asarray(mat.origin) + np.asarray(px) / mat.px_per_mm / 2, rng)
        else:
            self._table(self._board(board, rng), rng)

    def _board(self, board: Texture, rng: np.random.Generator) -> np.ndarray:
        """The board lying on the mat, from its top face's texture; returns its centre."""
        size = np.asarray(board.pixels.shape[1::-1]) / board.px_per_mm
        top = self._texture(board, "board")
        domain = self.vary.domain
        finish = (
            {
                "type": "roughplastic",
                "diffuse_reflectance": top,
                "alpha": rng.uniform(*domain.lacquer_alpha),
            }
            if rng.random() < domain.board_lacquer
            else {"type": "diffuse", "reflectance": top}
        )
        side = linear(self.vary.board, 0.8)
        outline = np.asarray(self.geometry.extra["board"]["outline"], dtype=np.float64)
        T = self.mi.ScalarTransform4f
        cx, cy = np.asarray(board.origin) + size / 2
        if len(outline) == 4:  # the board is its texture's rectangle
            self.rectangle("board", np.asarray(board.origin), size, self.surface_z, finish)
            half = [float(size[0]) / 2 - 0.05, float(size[1]) / 2 - 0.05, -self.surface_z / 2]
            self.shapes["board-sides"] = {
                "type": "cube",
                "to_world": T().translate([float(cx), float(cy), self.surface_z / 2])
                @ T().scale(half),
                "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": side}},
            }
        else:  # a board of another outline (Spectrangle's triangle), cut out of its texture
            verts, faces = prism_mesh(outline, 0.0, -self.surface_z)
            n = len(outline)  # the top: the first n vertices and n - 2 triangles
            uv = (verts[:n, :2] - np.asarray(board.origin)) / size
            top = self.mi.load_dict({"type": "twosided", "bsdf": finish})
            self.shapes["board"] = mesh(self.mi, "board", verts[:n], faces[: n - 2], uv, top)
            walls = {"type": "diffuse", "reflectance": _rgb(side)}
            sides = self.mi.load_dict({"type": "twosided", "bsdf": walls})
            self.shapes["board-sides"] = mesh(
                self.mi, "board-sides", verts[n:], faces[n - 2 :] - n, None, sides
            )
        return np.array([cx, cy])

    def _table(self, centre: np.ndarray, rng: np.random.Generator) -> None:
        """The table round the mat (the wall behind an upright board), centred on ``centre``."""
        cx, cy = centre
        T = self.mi.ScalarTransform4f
        table = table_texture(rng, self.geometry.upright)
        path = self.folder / "table.png"
        cv2.imwrite(str(path), cv2.resize(table, (512, 512)))
        self.shapes["table"] = {
            "type": "rectangle",
            "to_world": T().translate([float(cx), float(cy), 0.5]) @ T().scale([3000, 3000, 1]),
            "bsdf": {
                "type": "twosided",
                "bsdf": {
                    "type": "diffuse",
                    "reflectance": self._bitmap(path, to_uv=T().scale([12, 12, 1])),
                },
            },
        }

    def part(
        self, verts: np.ndarray, faces: np.ndarray, finish: str, colour: list[float], smooth: bool
    ) -> None:
        """A piece's mesh in ``finish`` (a key of :func:`piece_finishes`) and ``colour``
        (linear RGB), shaded smoothly or face by face."""
        self.parts.append((verts, faces, finish, colour, smooth))
        self.tops.append(verts[verts[:, 2].argmin()])

    def meshes(self, finishes: dict[str, dict[str, Any]]) -> None:
        """Every part as a mesh, the parts of one finish sharing one BSDF whose colour is a
        palette texture (a Mitsuba rough plastic takes a twentieth of a second to build, so
        one per piece would cost more than the render); the flat pieces (tiles, tokens) share
        the ``body`` finish coloured by their atlas."""
        mi = self.mi
        for key, finish in finishes.items():
            parts = [p for p in self.parts if p[2] == key]
            if not parts:
                continue
            palette = np.asarray([[p[3] for p in parts]], dtype=np.float32)
            bsdf = mi.load_dict({"type": "twosided", "bsdf": _bsdf(finish, _raw(mi, palette))})
            for k, (verts, faces, _, _, smooth) in enumerate(parts):
                uv = np.tile([(k + 0.5) / len(parts), 0.5], (len(verts), 1))
                self.shapes[f"{key}-{k}"] = mesh(mi, f"{key}-{k}", verts, faces, uv, bsdf, smooth)
        if self.atlas is not None:
            colours = _raw(mi, self.atlas, "bilinear")
            bsdf = mi.load_dict({"type": "twosided", "bsdf": _bsdf(finishes["body"], colours)})
            for k, (verts, faces, uv) in enumerate(self.tiled):
                self.shapes[f"tile-{k}"] = mesh(mi, f"tile-{k}", verts, faces, uv, bsdf)

    def gobblet(self, cells: dict[str, Any]) -> None:
        """Every piece of ``cells`` as a turned mesh, its head apart when it is another shade
        or material (:class:`~.vary.Variation`'s stained and painted heads)."""
        vary, geometry = self.vary, self.geometry
        profile = bell_profile(vary.bell, vary.turned)
        for name, content in cells.items():
            if content is None:
                continue
            rng = vary.piece_rng(name)
            spec = geometry.pieces["sizes"][str(content["size"])]
            radius = spec["diameter"] / 2
            height = float(spec["height"]) * vary.piece_height
            cell = geometry.cell(name)
            width = float(np.ptp(np.asarray(cell.polygon)[:, 0]))
            reach = max(1.2, (width - 2 * radius) / 2 + 2.0)
            offset = np.clip(rng.normal(0, vary.piece_offset_mm, 2), -reach, reach)
            centre = tuple(np.asarray(cell.center) + offset)
            tone = rng.uniform(0.92, 1.06) * vary.tone(rng)
            colour = vary.look["pieces"][content["color"]]
            head: tuple[str, list[float]] | None = None
            cut = HEAD_FROM
            if content["color"] == "black" and vary.head_color is not None:
                cut = ball_from(vary.bell, vary.turned)
                head = ("head", linear(vary.head_color))
            elif content["color"] == "black" and vary.head != 1.0:
                head = ("body", linear(colour, tone * vary.head))
            parts = split_profile(profile, cut) if head is not None else (profile, ())
            body, board = np.asarray(linear(colour, tone)), np.asarray(linear(vary.board))
            feet = faded_feet(parts[0], vary)
            shares = [vary.foot_share((below[1] + above[1]) / 2) for below, above in feet]
            fades = [("body", ((1 - s) * body + s * board).tolist()) for s in shares]
            looks = [*fades, ("body", body.tolist()), head]
            parts = [*feet, parts[0][len(feet) :], parts[1]]
            for part, look in zip(parts, looks, strict=True):
                if len(part) >= 2 and look is not None:
                    verts, faces = turned_mesh(part, centre, radius, self.surface_z, height)
                    self.part(verts, faces, look[0], look[1], smooth=True)

    def squares(self, cells: dict[str, Any]) -> None:
        """Every Blokus square of ``cells`` as a thin box of its colour, a little off its cell's
        centre."""
        spec, vary = self.geometry.pieces, self.vary
        half, depth = spec["square"] / 2, float(spec["thickness"])
        for name, content in cells.items():
            if content is None:
                continue
            rng = vary.piece_rng(name)
            centre = np.asarray(self.geometry.cell(name).center) + rng.normal(0, 0.25, 2)
            tone = rng.uniform(0.95, 1.04) * vary.tone(rng)
            verts, faces = box_mesh(centre, half, self.surface_z, depth)
            self.part(verts, faces, "body", linear(vary.look["pieces"][content], tone), False)

    def slabs(
        self, cells: dict[str, Any], eye: np.ndarray, draw: Callable[..., Solid], sides: str
    ) -> None:
        """Every flat piece of ``cells`` as a thin prism over its top's outline: its top is
        the painter's artwork (``draw``, from the same draws) in one texture atlas
        (Spectrangle's tiles, :func:`~.pieces.tile`: three coloured thirds, the value's disc
        and figure; Gobsmacked's tokens, :func:`~.pieces.token`: the face and its motif), its
        sides of the colour ``sides`` (the tiles' back, the tokens' rim)."""
        z0 = self.surface_z
        placed = [(n, c) for n, c in cells.items() if c is not None]
        if not placed:
            return
        columns = math.ceil(math.sqrt(len(placed) + 1))
        rows = math.ceil((len(placed) + 1) / columns)
        atlas = np.zeros((rows * ATLAS_SLOT, columns * ATLAS_SLOT, 3), np.float32)
        size = np.array([columns, rows]) * ATLAS_SLOT
        back = bgr(sides)
        atlas[-ATLAS_SLOT:, -ATLAS_SLOT:] = back  # the last slot: the sides
        back_uv = (size - ATLAS_SLOT / 2) / size
        for k, (name, content) in enumerate(placed):
            rng = self.vary.piece_rng(name)
            solid = draw(self.geometry, name, content, z0, eye, rng, self.vary)
            top = solid.casts[0]
            corner = np.array([k % columns, k // columns]) * ATLAS_SLOT
            lo = top[:, :2].min(axis=0) - 1.0
            scale = (ATLAS_SLOT - 1) / float(np.ptp(top[:, :2], axis=0).max() + 2.0)
            slot = atlas[corner[1] : corner[1] + ATLAS_SLOT, corner[0] : corner[0] + ATLAS_SLOT]
            slot[:] = back
            for face in solid.faces:
                if np.allclose(face.normal, UP):  # the top's artwork, not a side
                    pts = [
                        np.round((p[:, :2] - lo) * scale * 16).astype(np.int32)
                        for p in face.polygons
                    ]
                    cv2.fillPoly(slot, pts, face.color.tolist(), cv2.LINE_AA, 4)
            verts, faces = prism_mesh(top[:, :2], z0, float(self.geometry.pieces["thickness"]))
            uv = np.tile(back_uv, (len(verts), 1))
            uv[: len(top)] = ((top[:, :2] - lo) * scale + corner + 0.5) / size
            self.tiled.append((verts, faces, uv))
            self.tops.append(top[0])
        rgb_atlas = np.clip(atlas[..., ::-1] / 255.0, 0.0, 1.0)
        self.atlas = np.clip(srgb_decode(rgb_atlas), 0.0, 0.95).astype(np.float32)

    def hand(
        self,
        skin: list[np.ndarray],
        sleeve: list[np.ndarray],
        skin_bgr: np.ndarray,
        sleeve_bgr: np.ndarray,
    ) -> None:
        """A hand of :func:`~.hands.hand_pose`'s outlines, each a low tent (:func:`tent_mesh`)
        of its colour (BGR 0-255, :func:`~.hands.hand_colours`); it casts its own shadow."""
        for finish, outlines, tint in (("skin", skin, skin_bgr), ("sleeve", sleeve, sleeve_bgr)):
            colour = srgb_decode(np.asarray(tint)[::-1] / 255.0).tolist()
            for outline in outlines:
                self.parts.append((*tent_mesh(outline), finish, colour, True))

    def hand_mask(self, camera: Camera) -> np.ndarray:
        """The coverage mask (uint8, 255 = covered) of the hands' parts seen by ``camera``."""
        w, h = camera.size
        mask = np.zeros((h, w), dtype=np.uint8)
        for verts, faces, finish, _, _ in self.parts:
            if finish in HAND_FINISHES:
                px = np.round(camera.project(verts) * 16).astype(np.int32)
                cv2.fillPoly(mask, list(px[faces]), 255, cv2.LINE_8, 4)
        return mask


def tent_mesh(outline: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of a convex 3D ``outline`` (N x 3, in order) closed by a fan
    round its centre, raised towards the camera (-z) by a third of the outline's mean
    reach (at most 20 mm): a rounded finger, palm or sleeve once smoothly shaded."""
    centre = outline.mean(axis=0)
    reach = float(np.linalg.norm(outline - centre, axis=1).mean())
    apex = centre - np.array([0.0, 0.0, min(20.0, reach / 3)])
    verts = np.vstack([outline, apex])
    n = len(outline)
    faces = np.column_stack([np.arange(n), (np.arange(n) + 1) % n, np.full(n, n)])
    return verts, faces.astype(np.uint32)


def prism_mesh(outline: np.ndarray, z0: float, depth: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of the upright prism over the convex ``outline`` (N x 2, mm)
    standing ``depth`` high on the plane ``z0`` (up is -z): its top first (the outline's N
    vertices, a fan of N - 2 triangles), then its sides, each with vertices of its own."""
    n = len(outline)
    lid = np.column_stack([outline, np.full(n, z0 - depth)])
    foot = np.column_stack([outline, np.full(n, z0)])
    verts, faces = [lid], [(0, i, i + 1) for i in range(1, n - 1)]
    for i in range(n):
        j = (i + 1) % n
        verts.append(np.array([lid[i], lid[j], foot[j], foot[i]]))
        a = n + 4 * i
        faces += [(a, a + 1, a + 2), (a, a + 2, a + 3)]
    return np.concatenate(verts), np.asarray(faces, dtype=np.uint32)


def mesh(
    mi: Any,
    name: str,
    verts: np.ndarray,
    faces: np.ndarray,
    uv: np.ndarray | None,
    bsdf: Any,
    smooth: bool = False,
) -> Any:
    """A Mitsuba mesh of ``verts`` and ``faces`` in ``bsdf`` (a loaded BSDF), with texture
    coordinates ``uv`` (V x 2, or None), shaded smoothly or face by face."""
    props = mi.Properties()
    props["bsdf"] = bsdf
    out = mi.Mesh(
        name,
        len(verts),
        len(faces),
        has_vertex_normals=smooth,
        has_vertex_texcoords=uv is not None,
        props=props,
    )
    params = mi.traverse(out)
    params["vertex_positions"] = np.asarray(verts, np.float32).ravel()
    params["faces"] = np.asarray(faces, np.uint32).ravel()
    if uv is not None:
        params["vertex_texcoords"] = np.asarray(uv, np.float32).ravel()
    params.update()
    if smooth:
        out.recompute_vertex_normals()
    return out


def _raw(mi: Any, image: np.ndarray, filter_type: str = "nearest") -> dict[str, Any]:
    """A Mitsuba bitmap texture of the linear RGB ``image`` (H x W x 3)."""
    return {
        "type": "bitmap",
        "bitmap": mi.Bitmap(np.ascontiguousarray(image, dtype=np.float32)),
        "filter_type": filter_type,
        "raw": True,
    }


def box_mesh(
    centre: np.ndarray, half: float, z0: float, depth: float
) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (8 x 3) and triangles (12 x 3) of a square box of half side ``half`` standing
    ``depth`` high on the plane ``z0`` (up is -z)."""
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=np.float64) * half + centre
    verts = np.vstack([np.column_stack([corners, np.full(4, z)]) for z in (z0, z0 - depth)])
    faces = [(4, 5, 6), (4, 6, 7), (0, 2, 1), (0, 3, 2)]  # top, bottom
    for i in range(4):
        j = (i + 1) % 4
        faces += [(i, j, j + 4), (i, j + 4, i + 4)]
    return verts, np.asarray(faces, dtype=np.uint32)


def _rgb(value: list[float]) -> dict[str, Any]:
    return {"type": "rgb", "value": value}


def _bsdf(finish: dict[str, Any], colours: dict[str, Any]) -> dict[str, Any]:
    """The Mitsuba BSDF of ``finish`` coloured by the texture ``colours``."""
    if finish["type"] == "diffuse":
        return {"type": "diffuse", "reflectance": colours}
    if finish["type"] == "principled":
        return {**finish, "base_color": colours}
    return {**finish, "diffuse_reflectance": colours}


def happens(rng: np.random.Generator, chance: float) -> bool:
    """Whether an event of ``chance`` happens; no random number is drawn for chance 0, so a
    domain without the event draws everything else as before."""
    return chance > 0 and rng.random() < chance


def piece_finishes(vary: Variation, rng: np.random.Generator) -> dict[str, dict[str, Any]]:
    """The materials of a set: its ``body`` (matte or lacquered wood for a wooden set; rough,
    satin or smooth plastic otherwise, never matte for a glossy ``look``; a glossy body is
    by the domain's ``principled`` chance a GGX base under a clear coat) and the glossy
    ``head`` of painted balls."""
    domain = vary.domain
    head = {"type": "roughplastic", "alpha": float(rng.uniform(0.04, 0.2))}
    body: dict[str, Any]
    if vary.wooden_set:
        if rng.random() < 0.5:
            body = {"type": "diffuse"}
        else:
            body = {"type": "roughplastic", "alpha": float(rng.uniform(*domain.wood_alpha))}
    else:
        kind = rng.random()
        if kind < 0.2:
            body = {"type": "plastic"}
        elif kind < 0.85 or vary.look.get("glossy", False):
            body = {"type": "roughplastic", "alpha": float(rng.uniform(*domain.plastic_alpha))}
        else:
            body = {"type": "diffuse"}
    if body["type"] != "diffuse" and happens(rng, domain.principled):
        body = {
            "type": "principled",
            "roughness": float(rng.uniform(0.1, 0.7)),
            "specular": float(rng.uniform(0.3, 0.8)),
            "clearcoat": float(rng.uniform(0.0, 1.0)),
            "clearcoat_gloss": float(rng.uniform(0.3, 1.0)),
            "sheen": float(rng.uniform(0.0, 0.5)),
        }
    return {"body": body, "head": head}


#: How many times a key lamp is drawn at most to keep it out of the camera's view (:func:`_lamp`).
LAMP_DRAWS = 100


def _lamp(
    geometry: BoardGeometry,
    rng: np.random.Generator,
    mi: Any,
    target: np.ndarray,
    domain: Domain,
    camera: Camera,
) -> dict[str, Any]:
    """A white key light: a sun, or an area lamp of any size (hard to soft shadows), as
    strong and as large as ``domain`` draws them, out of ``camera``'s view. A lamp panel in
    view shows the camera its dark back (one of 1.2 m under the camera hid the whole board):
    no photographer takes that picture, so such a lamp is drawn again, from the same stream
    (every other scene draws the numbers it always did)."""
    for _ in range(LAMP_DRAWS):
        light = _drawn_lamp(geometry, rng, mi, target, domain)
        if "to_world" not in light or not panel_in_view(np.array(light["to_world"].matrix), camera):
            return light
    raise RuntimeError(f"no key lamp out of the camera's view in {LAMP_DRAWS} draws")


def _drawn_lamp(
    geometry: BoardGeometry, rng: np.random.Generator, mi: Any, target: np.ndarray, domain: Domain
) -> dict[str, Any]:
    """One draw of :func:`_lamp`, wherever the camera is."""
    T = mi.ScalarTransform4f
    if rng.random() < domain.sun:
        up, turn = math.radians(rng.uniform(35, 85)), rng.uniform(0, 2 * math.pi)
        return {
            "type": "directional",
            "direction": [
                math.cos(up) * math.cos(turn),
                math.cos(up) * math.sin(turn),
                math.sin(up),
            ],
            "irradiance": _rgb([rng.uniform(*domain.lamp_power)] * 3),
        }
    lamp = random_lamp(geometry, rng, geometry.upright)
    side = float(np.exp(rng.uniform(*np.log(domain.lamp_size_mm))))
    distance = float(np.linalg.norm(lamp - target))
    radiance = rng.uniform(*domain.lamp_power) * distance**2 / (side * side) / math.pi
    return {
        "type": "rectangle",
        "to_world": T().look_at(origin=lamp.tolist(), target=target.tolist(), up=[0, 1, 0])
        @ T().scale([side / 2, side / 2, 1]),
        "emitter": {"type": "area", "radiance": _rgb([radiance] * 3)},
    }


def panel_in_view(to_world: np.ndarray, camera: Camera) -> bool:
    """Whether any of a Mitsuba rectangle (``to_world``, 4 x 4, maps the square -1..1 at
    z 0 onto it) lies in ``camera``'s frame, in front of it. The tracer renders the
    ideal pinhole picture, so the panel's outline, cut where it passes behind the camera, is
    projected without the lens's distortion."""
    square = np.array([[-1, -1, 0, 1], [1, -1, 0, 1], [1, 1, 0, 1], [-1, 1, 0, 1]], np.float64)
    front = clip_near((square @ to_world.T)[:, :3], camera, 1.0)  # 1 mm in front of the camera
    if len(front) < 3:
        return False
    outline = camera.project_ideal(front).astype(np.float32)
    w, h = camera.size
    frame = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    area, _ = cv2.intersectConvexConvex(cv2.convexHull(outline), frame)
    return area > 0


def emitted(light: dict[str, Any]) -> dict[str, Any]:
    """The RGB value a light of :func:`lights` emits: an area emitter's radiance or a sun's
    irradiance."""
    return light["emitter"]["radiance"] if "emitter" in light else light["irradiance"]


def _tint(light: dict[str, Any], kelvin: float) -> None:
    """Colour ``light`` (a sun or an area emitter) like a black body at ``kelvin``."""
    gains = lamp_gains(kelvin)[::-1]
    value = emitted(light)
    value["value"] = [float(v * g) for v, g in zip(value["value"], gains, strict=True)]


def lights(
    geometry: BoardGeometry,
    rng: np.random.Generator,
    mi: Any,
    target: np.ndarray,
    camera: Camera,
    domain: Domain = Domain.TRAIN,
) -> dict[str, Any]:
    """The light of one room: the room all round, a key light (:func:`_lamp`, out of
    ``camera``'s view), by chance a window to one side (broad reflections), and by
    ``domain``'s chances a second key light and a lamp and window of different colours (the
    camera's response tints them all)."""
    T = mi.ScalarTransform4f
    room = _rgb([rng.uniform(*domain.room_light)] * 3)
    out: dict[str, Any] = {"room": {"type": "constant", "radiance": room}}
    out["key"] = _lamp(geometry, rng, mi, target, domain, camera)
    if rng.random() < domain.window:
        turn, reach = rng.uniform(0, 2 * math.pi), rng.uniform(900, 1600)
        window = target + np.array(
            [reach * math.cos(turn), reach * math.sin(turn), -rng.uniform(300, 900)]
        )
        out["window"] = {
            "type": "rectangle",
            "to_world": T().look_at(origin=window.tolist(), target=target.tolist(), up=[0, 0, -1])
            @ T().scale([rng.uniform(300, 700), rng.uniform(400, 800), 1]),
            "emitter": {"type": "area", "radiance": _rgb([rng.uniform(0.3, 2.0)] * 3)},
        }
    if happens(rng, domain.second_lamp):
        out["second-key"] = _lamp(geometry, rng, mi, target, domain, camera)
    if happens(rng, domain.mixed_light):
        lamp_k, window_k = rng.uniform(*domain.lamp_kelvin), rng.uniform(*domain.window_kelvin)
        for name, light in out.items():
            if name != "room":
                _tint(light, window_k if name == "window" else lamp_k)
    return out


def render_traced(
    game: str,
    cells: dict[str, Any],
    seed: int,
    *,
    domain: Domain = Domain.TRAIN,
    spp: int = 8,
    size: tuple[int, int] = DEFAULT_SIZE,
    hand: bool | None = False,
    effects: bool = True,
) -> Scene:
    """Path-trace ``cells`` (observation contents; missing cells are empty) of ``game`` with
    ``domain``'s draws for ``seed`` and ``spp`` samples a pixel. ``hand``: True/False a hand
    over the board or none, None lets the seed decide (as :func:`~.scene.render_scene` does,
    4 scenes in 10; a second hand or an arm only by the domain's chances). A hand's draws
    come from a stream of their own: the rest of the scene is the same with or without it.
    ``effects=False``: the exposed picture before the camera's response (its curve, noise and
    JPEG; :func:`~.photo.film` takes it through them)."""
    if game not in GAMES:
        raise ValueError(f"the path tracer draws {', '.join(GAMES)}, not {game}")
    if not domain.varied:
        raise ValueError(f"the path tracer draws a varied domain's scenes, not {domain.name}'s")
    mi = mitsuba()
    geometry = load_geometry(game)
    unknown = set(cells) - set(geometry.cell_names)
    if unknown:
        raise ValueError(f"{game} has no cells {sorted(unknown)}")
    truth = {name: cells.get(name) for name in geometry.cell_names}
    rng = np.random.default_rng([seed, zlib.crc32(game.encode()), 3])
    vary_rng = np.random.default_rng([seed, zlib.crc32(game.encode()), 2])
    vary = Variation.draw(domain, geometry, vary_rng)
    camera, params = random_camera(geometry, size, rng, 0.0, None, domain.max_tilt_deg, domain.zoom)
    keep, target = keep_points(game), keep_centre(game)
    with tempfile.TemporaryDirectory(prefix="traced-") as folder:
        build = _Builder(Path(folder), geometry, vary)
        mat, board = _textures(geometry, vary)
        build.planes(mat, board, rng)
        finishes = {**piece_finishes(vary, rng), **HAND_FINISHES}
        if game == "gobblet":
            build.gobblet(truth)
        elif game == "spectrangle":
            build.slabs(truth, camera.position, tile, vary.look["tile_back"])
        elif game == "gobsmacked":
            build.slabs(truth, camera.position, token, vary.look["pieces"]["rim"])
        else:
            build.squares(truth)
        hand_rng = np.random.default_rng([seed, zlib.crc32(game.encode()), 4])
        wants_hand = bool(hand_rng.random() < HAND_CHANCE) if hand is None else hand
        if wants_hand:
            for arm_only in (vary.arm_only, *((False,) if vary.two_hands else ())):
                _, skin, sleeve = hand_pose(
                    geometry, camera, build.surface_z, hand_rng, geometry.upright, arm_only
                )
                build.hand(skin, sleeve, *hand_colours(vary))
        build.meshes(finishes)
        scene_dict: dict[str, Any] = {
            "type": "scene",
            "integrator": {"type": "path", "max_depth": 6},
            **build.shapes,
            **lights(geometry, rng, mi, target, camera, domain),
        }
        box = crop_box(camera, np.concatenate([keep, *([build.tops] if build.tops else [])]))
        image = _render(mi, scene_dict, camera, box, spp, seed)
    look = Look.random(rng)
    photo = exposed(image, box)
    if effects:
        photo = respond(photo, look, vary.response, rng)
    surface_z = build.surface_z
    mask = build.hand_mask(camera) if wants_hand else None
    hidden, hidden_markers, occluded = _occlusion(geometry, camera, camera, surface_z, mask)
    params.update(
        domain=domain.name,
        renderer="mitsuba",
        spp=spp,
        hand=wants_hand,
        look=look.__dict__,
        response=vary.response.__dict__,
        piece_set=vary.piece_set,
    )
    return Scene(
        game=game,
        image=photo,
        cells=truth,
        hidden=hidden,
        occluded=occluded,
        camera=camera,
        homography=camera.homography(surface_z),
        marker_homography=camera.homography(0.0),
        surface_z=surface_z,
        seed=seed,
        params=params,
        mat_camera=camera,
        hidden_markers=hidden_markers,
    )


def exposed(image: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The BGR uint8 sRGB picture of linear RGB ``image``, exposed to put the 97th percentile
    of ``box``'s brightest channel at 85 % (the camera's own response comes after)."""
    x0, y0, x1, y1 = box
    level = float(np.percentile(brightest(image[y0:y1, x0:x1]), 97))
    srgb = np.round(255 * srgb_encode(0.85 * image / max(level, 1e-6)))
    return np.ascontiguousarray(srgb[..., ::-1], dtype=np.uint8)


#: How many times a scene is loaded at most to get its lights in order (:func:`_load`).
LOADS = 2000


def _load(mi: Any, scene_dict: dict[str, Any]) -> Any:
    """The Mitsuba scene of ``scene_dict``, its emitting shapes listed in the order of their
    ids. Mitsuba (3.9) lists them in an order that changes from one load to the next, and a
    path picks the light it samples by that order, so one scene and seed rendered other noise
    each time, and a bench run read a few cells otherwise than the last. Loaded again until
    the order is the ids', a seed renders one picture; a few loads for most scenes, some tens
    for three lamps. (The other order that changed, the threads' sums of the pixel filter's
    overlap, is fixed by rendering on one thread, :data:`RENDER_THREADS`.)"""
    for _ in range(LOADS):
        scene = mi.load_dict(scene_dict)
        ids = [shape.id() for shape in scene.shapes() if shape.is_emitter()]
        if ids == sorted(ids):
            return scene
    raise RuntimeError(f"Mitsuba did not list the lights {sorted(ids)} in order in {LOADS} loads")


def _render(
    mi: Any,
    scene_dict: dict[str, Any],
    camera: Camera,
    box: tuple[int, int, int, int],
    spp: int,
    seed: int,
) -> np.ndarray:
    """Linear RGB (H x W x 3, float32) of ``camera``'s frame: ``box`` at ``spp`` samples a
    pixel, the rest at a quarter of the resolution."""
    w, h = camera.size
    hfov = math.degrees(2 * math.atan(w / 2 / camera.focal))
    to_world = mi.ScalarTransform4f(sensor_transform(camera).tolist())

    def sensor(width: int, height: int, crop: dict[str, int], samples: int) -> dict[str, Any]:
        return {
            "type": "perspective",
            "fov": hfov,
            "fov_axis": "x",
            "to_world": to_world,
            "film": {
                "type": "hdrfilm",
                "width": width,
                "height": height,
                "pixel_format": "rgb",
                **crop,
            },
            "sampler": {"type": "independent", "sample_count": samples, "seed": seed % 2**31},
        }

    scene = _load(mi, scene_dict)
    small = np.asarray(mi.render(scene, sensor=mi.load_dict(sensor(w // 4, h // 4, {}, 2))))
    image = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    x0, y0, x1, y1 = box
    crop = {"crop_offset_x": x0, "crop_offset_y": y0, "crop_width": x1 - x0, "crop_height": y1 - y0}
    image[y0:y1, x0:x1] = np.asarray(mi.render(scene, sensor=mi.load_dict(sensor(w, h, crop, spp))))
    return image.astype(np.float32)
