"""``render_scene``: a seeded photo-like picture of a board position, with its ground truth.

The board frame is the world: the camera is posed over the mat (or in front of an upright board),
the mat and board are textured planes, pieces and a hand are 3D polygons projected through the
same distorted camera, and the light and the sensor are simulated last (:mod:`.photo`).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

import cv2
import numpy as np

from ..geometry import BoardGeometry, load_geometry
from ..placement import board_centre, rigid
from .camera import Camera
from .compose import apply_layer, background, board_sides, paste_plane, sheen
from .domain import Domain
from .hands import add_distractor, add_hand
from .paint import Painter, densify
from .photo import Look, develop, respond
from .pieces import build_pieces
from .pose import random_camera, random_lamp
from .textures import (
    Texture,
    board_texture,
    drawn_board_texture,
    face_texture,
    mat_texture,
    table_texture,
)
from .vary import UNVARIED_SET, Variation

DEFAULT_SIZE = (1280, 960)
#: The largest offset (mm, each axis) and turn (degrees) of a board put down on its mat.
MAX_BOARD_SHIFT = (3.0, 1.5)


#: Chance of a hand over the board in a scene whose seed decides.
HAND_CHANCE = 0.4
#: blur (half-resolution px) of shadows from a lamp of some size: only their edges' smoothing
AREA_SHADOW_SOFT = 0.5


@dataclass(frozen=True, eq=False)
class Scene:
    """A rendered picture and everything true about it.

    ``homography`` maps board millimetres on the playing surface (the board's top face, where
    the cells are) to *ideal* pixels, i.e. before lens distortion; ``marker_homography`` does the
    same for the plane of the markers (the mat, or the board face for upright boards). Use
    ``camera.project`` / ``camera.undistort`` to go between ideal and real image pixels.
    """

    game: str
    image: np.ndarray
    cells: dict[str, Any]
    hidden: frozenset[str]
    occluded: bool
    camera: Camera
    homography: np.ndarray
    marker_homography: np.ndarray
    surface_z: float
    seed: int
    hidden_markers: frozenset[int] = frozenset()
    params: dict[str, Any] = field(default_factory=dict)
    #: the camera in the mat's frame (the markers'); ``camera`` is in the board's frame,
    #: which differs when the board lies off its outline (``params["board_shift"]``)
    mat_camera: Camera | None = None

    def cell_centers(self) -> dict[str, tuple[float, float]]:
        """Real image pixel position of every cell's centre on the playing surface."""
        geometry = load_geometry(self.game)
        pts = np.array([[*c.center, self.surface_z] for c in geometry.cells])
        px = self.camera.project(pts)
        return {c.name: (float(x), float(y)) for c, (x, y) in zip(geometry.cells, px, strict=True)}

    def marker_quads(self) -> dict[int, np.ndarray]:
        """Real image corners (4x2) of every marker wholly inside the frame, by id."""
        camera = self.mat_camera or self.camera
        w, h = camera.size
        quads = {}
        for marker in load_geometry(self.game).markers:
            px = camera.project(np.column_stack([marker.corners(), np.zeros(4)]))
            if np.all((px >= 0) & (px <= (w - 1, h - 1))):
                quads[marker.id] = px
        return quads

    def observation(self) -> dict[str, Any]:
        """The observation JSON a perfect reader would report (hidden cells left out)."""
        cells = {k: v for k, v in self.cells.items() if k not in self.hidden}
        obs: dict[str, Any] = {"game": self.game, "cells": cells}
        if self.hidden:
            obs["partial"] = True
        if self.occluded:
            obs["occluded"] = True
        return obs


def render_scene(
    game: str,
    cells: dict[str, Any],
    seed: int,
    *,
    size: tuple[int, int] = DEFAULT_SIZE,
    hand: bool | None = None,
    effects: bool = True,
    distortion: float | None = None,
    tilt_deg: float | None = None,
    max_tilt_deg: float = 35.0,
    board_shift: tuple[float, float, float] | None = None,
    domain: Domain = Domain.NOMINAL,
) -> Scene:
    """Render ``cells`` (observation contents; missing cells are empty) of ``game``.

    ``hand``: True/False forces a hand over the board or none, None lets the seed decide.
    ``effects=False`` skips light, blur, noise and JPEG (a clean render for geometry checks;
    :func:`~.photo.film` takes it through the scene's light and camera, ``params``, later).
    ``distortion`` fixes the radial coefficient (0 = ideal pinhole), ``tilt_deg`` the camera's
    angle from the board's normal; otherwise both are drawn from the seed. ``board_shift``
    ``(dx, dy, degrees)`` places a board that lies on a mat off its printed outline (moved
    ``dx, dy`` mm, turned about its centre; :func:`random_board_shift` draws one from a seed);
    by default it lies exactly on it. The cells' names and the truth keep to the board; the
    markers stay on the mat. ``domain`` sets the ranges of the randomisation (the camera's
    distance and tilt, ...); ``max_tilt_deg`` caps the domain's tilt.
    """
    if size[0] % 2 or size[1] % 2 or min(size) < 16:
        raise ValueError(f"image size must be even and at least 16 pixels, not {size}")
    geometry = load_geometry(game)
    unknown = set(cells) - set(geometry.cell_names)
    if unknown:
        raise ValueError(f"{game} has no cells {sorted(unknown)}")
    truth = {name: cells.get(name) for name in geometry.cell_names}
    upright = geometry.upright
    surface_z = -float(geometry.extra["board"]["thickness"])
    if board_shift is None or upright:
        board_shift = (0.0, 0.0, 0.0)
    options = (game, seed, size, distortion, tilt_deg, max_tilt_deg, domain)
    drawn = _draw(*options)
    vary = drawn.vary
    wants_hand = bool(drawn.chance < HAND_CHANCE) if hand is None else hand
    shadow = (1.5, 0.45) if vary is None else (vary.shadow_soft, vary.shadow_dark)
    if vary is not None and vary.lamp_deg > 0:
        shadow = (AREA_SHADOW_SOFT, vary.shadow_dark)  # the lamp's size softens them

    image = _set(options, tuple(board_shift)).copy()
    mat_camera = drawn.camera
    camera, lamp = _placed(mat_camera, drawn.lamp, geometry, board_shift)
    painter = _painter(image, camera, lamp, drawn.shiny, vary)
    try:
        solids = build_pieces(geometry, truth, camera.position, drawn.piece_rng, vary)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"a cell content is not a {game} piece: {exc!r}") from None
    painter.cast(solids, surface_z, _lamp_radius(lamp, geometry, vary))
    apply_layer(painter.image, painter.shadow, *shadow)
    if solids:
        depth = camera.depth(np.array([s.anchor for s in solids]))
        painter.draw([solids[i] for i in np.argsort(-depth, kind="stable")])
    sheen(painter, geometry, surface_z)
    if vary is not None:
        painter.glare[:] = cv2.multiply(painter.glare, vary.glare)
    apply_layer(painter.image, painter.glare, 1.5, None)
    hand_rng = drawn.hand_rng
    if vary is None:
        mask = add_hand(painter, geometry, surface_z, hand_rng, upright) if wants_hand else None
    else:
        mask = _varied_extras(painter, geometry, surface_z, hand_rng, wants_hand, vary)
    if effects and vary is not None:
        image = respond(image, drawn.look, vary.response, drawn.develop_rng)
    elif effects:
        image = develop(image, drawn.look, drawn.develop_rng)
    hidden, hidden_markers, occluded = _occlusion(geometry, camera, mat_camera, surface_z, mask)
    params = drawn.params
    params.update(
        lamp=lamp.tolist(),
        hand=wants_hand,
        look=drawn.look.__dict__,
        domain=domain.name,
        response=vary.response.__dict__ if vary is not None else None,
        broad_glare=vary is not None and vary.broad_glare,
        piece_set=UNVARIED_SET if vary is None else vary.piece_set,
        board_shift=tuple(board_shift),
    )
    return Scene(
        game=game,
        image=image,
        cells=truth,
        hidden=hidden,
        occluded=occluded,
        camera=camera,
        homography=camera.homography(surface_z),
        marker_homography=mat_camera.homography(0.0),
        surface_z=surface_z,
        seed=seed,
        hidden_markers=hidden_markers,
        params=params,
        mat_camera=mat_camera,
    )


@dataclass(frozen=True, eq=False)
class _Drawn:
    """What a scene's seed draws before its pieces (:func:`_draw`), in the order drawn."""

    vary: Variation | None
    camera: Camera
    params: dict[str, Any]
    lamp: np.ndarray
    chance: float
    hand_rng: np.random.Generator
    look: Look
    table: np.ndarray
    #: the pieces' Phong exponent (the variation's, when there is one)
    shiny: float
    piece_rng: np.random.Generator
    develop_rng: np.random.Generator


def _draw(
    game: str,
    seed: int,
    size: tuple[int, int],
    distortion: float | None,
    tilt_deg: float | None,
    max_tilt_deg: float,
    domain: Domain,
) -> _Drawn:
    """The draws of :func:`render_scene` (its arguments of the same names) before its pieces;
    fresh random streams on every call."""
    geometry = load_geometry(game)
    rng = np.random.default_rng([seed, zlib.crc32(game.encode())])
    vary = None
    if domain.varied:
        vary_rng = np.random.default_rng([seed, zlib.crc32(game.encode()), 2])
        vary = Variation.draw(domain, geometry, vary_rng)
    camera, params = random_camera(
        geometry,
        size,
        rng,
        distortion,
        tilt_deg,
        min(max_tilt_deg, domain.max_tilt_deg),
        domain.zoom,
    )
    lamp = random_lamp(geometry, rng, geometry.upright)
    chance = rng.random()
    hand_rng = np.random.default_rng(rng.integers(2**63))
    look = Look.random(rng)
    table = table_texture(rng, geometry.upright)
    shiny = float(rng.uniform(300, 1500))
    piece_rng = np.random.default_rng(rng.integers(2**63))
    develop_rng = np.random.default_rng(rng.integers(2**63))
    if vary is not None:
        shiny = vary.shininess
    return _Drawn(
        vary, camera, params, lamp, chance, hand_rng, look, table, shiny, piece_rng, develop_rng
    )


@lru_cache(maxsize=1)
def _set(options: tuple[Any, ...], board_shift: tuple[float, float, float]) -> np.ndarray:
    """The picture (read-only) of the table, the mat and the board of :func:`render_scene`'s
    scene (``options``: :func:`_draw`'s arguments) before any piece: the same whatever the
    cells, so the boards of one game filmed at one table are painted on one copy of it."""
    geometry = load_geometry(options[0])
    drawn = _draw(*options)
    vary = drawn.vary
    image = background(drawn.camera, geometry, drawn.table)
    mat, board = _textures(geometry, vary)
    paste_plane(image, drawn.camera, mat, 0.0)
    if not geometry.upright:
        camera, lamp = _placed(drawn.camera, drawn.lamp, geometry, board_shift)
        painter = _painter(image, camera, lamp, drawn.shiny, vary)
        surface_z = -float(geometry.extra["board"]["thickness"])
        board_sides(painter, geometry, surface_z, None if vary is None else vary.board)
        outline = np.asarray(geometry.extra["board"]["outline"], dtype=np.float64)
        paste_plane(image, camera, board, surface_z, outline)
    image.flags.writeable = False
    return image


def _painter(
    image: np.ndarray, camera: Camera, lamp: np.ndarray, shiny: float, vary: Variation | None
) -> Painter:
    """The painter of ``image`` in the nominal look or in ``vary``'s."""
    if vary is None:
        return Painter(image, camera, lamp, shiny)
    return Painter(image, camera, lamp, shiny, vary.haze, vary.ambient, vary.relit)


def _lamp_radius(lamp: np.ndarray, geometry: BoardGeometry, vary: Variation | None) -> float:
    """The radius (mm) of the lamp ``vary``'s pieces' shadows come from (0: a point lamp): its
    angular radius seen from the board's centre."""
    if vary is None or vary.lamp_deg <= 0:
        return 0.0
    centre = np.array([*board_centre(geometry), 0.0])
    distance = float(np.linalg.norm(np.asarray(lamp, dtype=np.float64) - centre))
    return distance * math.tan(math.radians(vary.lamp_deg))


def _varied_extras(
    painter: Painter,
    geometry: BoardGeometry,
    surface_z: float,
    hand_rng: np.random.Generator,
    wants_hand: bool,
    vary: Variation,
) -> np.ndarray | None:
    """A phone or cup beside the board, then the hand, a second hand or an arm only, as
    ``vary`` says; return the mask of everything they cover (None: nothing)."""
    upright = geometry.upright
    masks = []
    if vary.distractor:
        masks.append(add_distractor(painter, geometry, vary.distractor, vary.over_mat, vary))
    if wants_hand:
        masks.append(add_hand(painter, geometry, surface_z, hand_rng, upright, vary, vary.arm_only))
        if vary.two_hands:
            other = np.random.default_rng(vary.rng.integers(2**63))
            masks.append(add_hand(painter, geometry, surface_z, other, upright, vary))
    if not masks:
        return None
    mask = masks[0]
    for other_mask in masks[1:]:
        mask = cv2.max(mask, other_mask)
    return mask


def _textures(geometry: BoardGeometry, vary: Variation | None) -> tuple[Texture, Texture | None]:
    """The mat (or an upright board's face) and the top face of a board lying on it, in the
    nominal look or in ``vary``'s."""
    game = geometry.game
    upright = geometry.upright
    if vary is None:
        return mat_texture(game), None if upright else board_texture(game)
    look = {**vary.look, "board": vary.board}
    if upright:
        return face_texture(geometry, look), None
    grain = (1 - vary.grain, 1 + vary.grain / 3)
    board = drawn_board_texture(
        geometry, look, vary.grain_seed, grain, vary.bonus_light, vary.label_scale
    )
    return mat_texture(game), board


@cache
def _samples(game: str) -> tuple[np.ndarray, np.ndarray]:
    """Points inside every cell (mm) and the index of the cell each belongs to."""
    geometry = load_geometry(game)
    pts, owner = [], []
    for i, cell in enumerate(geometry.cells):
        poly = np.asarray(cell.polygon, dtype=np.float64)
        c = poly.mean(axis=0)
        mids = (poly + np.roll(poly, -1, axis=0)) / 2
        cloud = np.concatenate(
            [c[None], c + 0.5 * (poly - c), c + 0.85 * (poly - c), c + 0.85 * (mids - c)]
        )
        pts.append(cloud)
        owner += [i] * len(cloud)
    return np.concatenate(pts), np.asarray(owner)


def random_board_shift(seed: int, game: str) -> tuple[float, float, float]:
    """A hand-placed board's offset from its outline on the mat (up to ``MAX_BOARD_SHIFT``),
    from a random stream of its own (the rest of a seed's scene is drawn as without it)."""
    rng = np.random.default_rng([seed, zlib.crc32(game.encode()), 1])
    dx, dy = rng.uniform(-MAX_BOARD_SHIFT[0], MAX_BOARD_SHIFT[0], 2)
    return float(dx), float(dy), float(rng.uniform(-MAX_BOARD_SHIFT[1], MAX_BOARD_SHIFT[1]))


def _placed(
    camera: Camera, lamp: np.ndarray, geometry: BoardGeometry, shift: tuple[float, float, float]
) -> tuple[Camera, np.ndarray]:
    """The camera and the lamp in the frame of a board placed ``shift`` off its outline."""
    placement = rigid(*shift, board_centre(geometry))
    xy = np.linalg.solve(placement, np.array([lamp[0], lamp[1], 1.0]))[:2]
    return camera.moved(placement), np.array([*xy, lamp[2]])


def _occlusion(
    geometry: BoardGeometry,
    camera: Camera,
    mat_camera: Camera,
    surface_z: float,
    mask: np.ndarray | None,
) -> tuple[frozenset[str], frozenset[int], bool]:
    """Cells (``camera``: the board's frame) and markers (``mat_camera``: the mat's) with any
    sample point under the hand, and whether the hand is over the board at all."""
    if mask is None:
        return frozenset(), frozenset(), False
    h, w = mask.shape

    def covered(points: np.ndarray, z: float, camera: Camera = camera) -> np.ndarray:
        px = np.round(camera.project(np.column_stack([points, np.full(len(points), z)])))
        x, y = px[:, 0].astype(int), px[:, 1].astype(int)
        ok = (x >= 0) & (x < w) & (y >= 0) & (y < h)
        hit = np.zeros(len(points), dtype=bool)
        hit[ok] = mask[y[ok], x[ok]] > 127
        return hit

    pts, owner = _samples(geometry.game)
    hit = covered(pts, surface_z)
    hidden = frozenset(geometry.cells[i].name for i in np.unique(owner[hit]))
    markers = set()
    for m in geometry.markers:
        corners = m.corners().astype(np.float64)
        cloud = np.concatenate([corners, corners.mean(axis=0)[None]])
        if covered(cloud, 0.0, mat_camera).any():
            markers.add(m.id)
    outline = densify(np.asarray(geometry.extra["board"]["outline"], dtype=np.float64), 5.0)
    board = np.zeros_like(mask)
    px = camera.project(np.column_stack([outline, np.full(len(outline), surface_z)]))
    cv2.fillPoly(board, [np.round(px * 16).astype(np.int32)], 255, cv2.LINE_8, 4)
    occluded = bool(hidden) or bool(cv2.countNonZero(cv2.bitwise_and(board, mask)))
    return hidden, frozenset(markers), occluded
