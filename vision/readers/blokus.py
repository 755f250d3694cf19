"""Blokus and Blokus Duo: each square is empty (light grey board), orange or violet.

A grid of points inside every square, on the plane of the pieces' tops, is sampled through the
pose from a 2x-averaged crop of the frame. Colours become reflectances against the mat's paper
and marker black, then are colour-balanced on the board's own frame around the squares (grey
plastic, always empty). Every point gets a *chroma* ``c = (b - g, r - g) / lightness`` relative
to the board's grey: shadows and dim light leave it alone, and glare (white light added by the
glossy plastic) pulls it towards grey without turning its hue much.

Per square: the share of *board-like* points (near grey, within the frame's noise), and for
each piece colour the chroma ``t`` of the points in that colour's hue sector, as a fraction of
the colour's own chroma. A square is empty when its points are board-like; a piece when its
most coloured points reach the piece's colour, or keep its colour difference under glare;
*unreadable* otherwise (skin: orange's hue, but paler; a sleeve or an object: another hue).

A hand of the board's own grey hides the grid lines: every square's four sides are sampled
across their line too. Unreadable squares, blobs of line-less empty squares reaching the
board's edge and covered tiles of the board's frame seed the hidden area, which grows through
suspect neighbours. See ``docs/vision/readers-blokus.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from engine import Observation
from engine.core import Content

from ..geometry import BoardGeometry, hex_bgr
from ..locate import BoardPose
from . import Reader
from .common import (
    CellSamples,
    MatReference,
    PointSet,
    Reference,
    Region,
    board_height,
    board_margin,
    grid_neighbours,
    grow_region,
    observation,
    row_quantile,
    sample_image,
    softmax,
)

#: The contents of a square, in the order of the probabilities.
CLASSES: tuple[Content, ...] = (None, "orange", "violet")
PIECES = ("orange", "violet")
#: A sensor level at which a channel is saturated (in the frame or its 2x2-averaged crop).
SATURATED = 250
#: Weights of a colour's three channels in its lightness (their mean).
THIRDS = np.full(3, 1.0 / 3.0)
#: A square's four sides, by their outward normals (board mm).
SIDES = ((1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0))
#: Points sampled along each grid line and beside it.
LINE_POINTS = 6
#: Where (mm across a square's side, outwards) the rows of points along it are: the board
#: beside the line first and last, and a few rows about the line in between.
LINE_OFFSETS = (-3.5, -1.8, -1.2, -0.6, 0.0, 0.6, 1.2, 1.8, 3.5)


def opponent(reflectance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per point: colour difference ``(b - g, r - g)`` (N x 2) and lightness (N)."""
    refl = np.asarray(reflectance, dtype=np.float64).reshape(-1, 3)
    d = np.column_stack([refl[:, 0] - refl[:, 1], refl[:, 2] - refl[:, 1]])
    return d, np.maximum(refl @ THIRDS, 0.03)


def chroma_of(reflectance: np.ndarray) -> np.ndarray:
    """Per point: chroma ``(b - g, r - g) / lightness`` (N x 2, unchanged by shadows)."""
    d, light = opponent(reflectance)
    return d / light[:, None]


class Evidence(NamedTuple):
    """What the points of every square (G of them) say."""

    #: how well each class explains each square (G x classes, 0..1)
    scores: np.ndarray
    #: share of the square's points that are foreign (neither grey nor a piece's hue)
    foreign: np.ndarray
    #: whether each piece's colour is there in full (G x pieces)
    solid: np.ndarray
    #: share of the square's points in a piece's full colour (the most of either piece)
    trace: np.ndarray
    #: median lightness of the square's points (reflectance)
    light: np.ndarray

    @property
    def kind(self) -> np.ndarray:
        """Per square, the index in ``CLASSES`` of the class that explains it best."""
        return self.scores.argmax(axis=1)

    @property
    def faded(self) -> np.ndarray:
        """Per square, whether it reads orange from a faded colour only (not in full)."""
        return (self.kind == 1) & ~self.solid[:, 0]


class BoardLevel(NamedTuple):
    """The empty board's colour per square (G x 3, camera units) and the print's black (3)."""

    board: np.ndarray
    black: np.ndarray


class BlokusReader(Reader):
    """Reads the 144 (Blokus) or 196 (Blokus Duo) squares: empty, orange or violet.

    Options: ``step_mm`` (sample pitch, 2), ``inset_mm`` (samples' distance from a square's
    edges, 2), ``sharpness`` (how fast probabilities follow the scores, 25), ``readable``
    (best score below which a square cannot be read, 0.5).
    """

    games = ("blokus", "blokus-duo")

    #: Quantile of a square's points that speaks for a piece (its most coloured part).
    TOP = 0.85
    #: ``t x lightness`` of a piece's colour under glare, at least (the colour's own
    #: lightness is about 0.5 of the paper's).
    KEPT = 0.4
    #: Chroma (fraction of the piece's) at the ``TOP`` quantile of a piece seen in full.
    SOLID = 0.75
    #: ... or, under glare, its colour difference kept to at least this fraction of the
    #: piece's (pale skin has orange's hue but much less of its colour difference).
    GLARE = 0.8
    #: ... but not below this chroma: glare that washes out more of a colour saturates the
    #: camera (pale skin has its colour difference and less chroma).
    WASHED = 0.4
    #: Share of an empty square's points in a piece's full colour that makes it doubtful.
    TRACE = 0.05
    #: Orange turned yellow by glare: green-blue difference within these fractions of
    #: orange's (pale skin has at most about 0.6 of it), red-green under this fraction of
    #: its green-blue (orange's own is about 1.4, skin's more).
    YELLOW_GB = (0.7, 1.5)
    YELLOW_RG = 0.5
    #: Share of a piece's points in its full colour below which, in the shade, it is skin: a
    #: piece in shadow keeps its colour in every point.
    PATCHY = 0.5
    #: A piece darker than this fraction of its own lightness (relative to the board's) is
    #: in the shade.
    SHADED = 0.75
    #: How far (relative) a frame tile's white balance may stray from the other tiles'.
    GAIN_SPREAD = 0.04
    #: An empty square darker than this fraction of the typical empty one is doubtful (a
    #: shadow dims the board less; a dark sleeve or dark skin has the board's lack of hue).
    DARK = 0.5
    #: Line-less empty squares, connected and reaching the board's edge, that make an arm.
    ARM_SQUARES = 3
    #: The smallest colour error (sensor levels) of any point: quantisation, JPEG.
    FLOOR_LEVELS = 2.5

    def __init__(
        self,
        geometry: BoardGeometry,
        *,
        step_mm: float = 2.0,
        inset_mm: float = 2.0,
        sharpness: float = 25.0,
        readable: float = 0.5,
        **options: Any,
    ) -> None:
        super().__init__(geometry, **options)
        surface = board_height(geometry)
        top = surface + float(geometry.pieces.get("thickness", 0.0))
        self.samples = CellSamples.of_cells(geometry, step_mm, inset_mm=inset_mm, height_mm=top)
        self.margin = _margin_tiles(geometry, surface)
        self.lines = _grid_lines(geometry, surface)
        self.mat = MatReference(geometry)
        self.sharpness = sharpness
        self.readable = readable
        look = geometry.extra.get("look", {})
        self.board = hex_bgr(look.get("board", "#c8cacb")) / 255.0
        self.grey = chroma_of(self.board)[0]
        #: a square's grid line is seen when it is this much lighter than the board beside it
        #: (a quarter of the contrast the geometry's colours give)
        grid = hex_bgr(look.get("grid", "#ffffff")) / 255.0
        self.line_contrast = 0.25 * abs(float(grid.mean() / self.board.mean()) - 1.0)
        #: the board's colour (per channel, relative to its own) halfway to the grid lines'
        self.glare_rise = 0.5 * (1.0 + grid / np.maximum(self.board, 1e-3))
        nominal = np.vstack([hex_bgr(look["pieces"][p]) / 255.0 for p in PIECES])
        #: each piece colour's chroma relative to the board's grey (learned by calibrate)
        self.colours = chroma_of(nominal) - self.grey
        #: orange's green-blue difference (reflectance), which glare does not take away
        self.orange_gb = float(nominal[0, 1] - nominal[0, 0])
        #: each piece colour's lightness as a fraction of the board's
        self.piece_light = nominal.mean(axis=1) / self.board.mean()
        pitch = float(geometry.pieces.get("pitch", 20.0))
        centres = np.array([geometry.cell(n).center for n in self.samples.names])
        self.neighbours = grid_neighbours(self.samples.names, centres, pitch)
        near = np.array(
            [
                [m in self.neighbours[n] or m == n for m in self.samples.names]
                for n in self.samples.names
            ],
            dtype=np.float64,
        )
        self._around = near
        self._centres = self.samples.points.centres
        tiles = self.margin.centres
        gap = np.linalg.norm(centres[:, None] - tiles[None], axis=2)
        self._tile_weights = 1.0 / (gap / pitch + 1.0) ** 4
        index = {tuple(np.round(c, 3)): i for i, c in enumerate(centres)}
        self._across = np.array(
            [
                [index.get(tuple(np.round(c + np.asarray(n) * pitch, 3)), -1) for n in SIDES]
                for c in centres
            ]
        )
        self._edge = frozenset(n for n in self.samples.names if len(self.neighbours[n]) < 8)
        self._next_to_tile = [
            [
                n
                for n, c in zip(self.samples.names, centres, strict=True)
                if np.abs(c - tile).max() <= 15.0 + pitch
            ]
            for tile in tiles
        ]

    # ----------------------------------------------------------------- reading
    def read(self, frame: np.ndarray, pose: BoardPose) -> Observation:
        """Every visible square's content, with probabilities; hands and objects left out."""
        return self._observe(frame, pose)[0]

    def _observe(self, frame: np.ndarray, pose: BoardPose) -> tuple[Observation, np.ndarray]:
        """The observation :meth:`read` gives and the sample points' balanced reflectances."""
        refl, tol, margin, level = self._measure(frame, pose)
        evidence = self._scores(refl, tol)
        hidden = self._hidden(evidence, margin >= 0.5, self._lined(frame, pose, level))
        obs = observation(
            self.game,
            self.samples.names,
            CLASSES,
            softmax(self.sharpness * evidence.scores),
            hidden,
            occluded=bool(hidden) or bool(np.any(margin >= 0.5)),
        )
        return obs, refl

    def _lined(self, frame: np.ndarray, pose: BoardPose, level: BoardLevel) -> np.ndarray:
        """Per square and side, whether the grid line along it is in view (lighter than the
        board on both sides of it) or cannot be (glare): an empty square shows its lines, a
        hand or a sleeve of the board's own colour does not. The line is looked for a little
        either side of where the pose puts it (lens distortion, a pose a pixel off)."""
        g, k = len(self.samples.names), len(LINE_OFFSETS)
        colours = sample_image(frame, self.lines.image_points(pose)).reshape(g, 4, k, -1, 3)
        grey = row_quantile((colours @ THIRDS).reshape(-1, LINE_POINTS), 0.5).reshape(g, 4, k)
        rise = grey[:, :, 1:-1].max(axis=2) - 0.5 * (grey[:, :, 0] + grey[:, :, -1])
        # glare that saturates a channel of the board beside a line and lifts its other
        # channels past halfway to the lines' colour leaves a line nothing to rise above:
        # there the lines cannot be seen, which says nothing of a hand (pale skin saturating
        # its red keeps its blue well below that)
        sides = colours[:, :, [0, -1]].transpose(0, 1, 2, 4, 3).reshape(-1, LINE_POINTS)
        beside = row_quantile(sides, 0.5).reshape(g, 4, 2, 3).min(axis=2)
        glare = level.black + (level.board - level.black)[:, None] * self.glare_rise
        blind = (beside.max(axis=2) >= SATURATED) & (beside >= glare).all(axis=2)
        # a line is as much lighter as the board is light where it lies, which the board's
        # frame nearby shows: a dark sleeve's noise is no line, however faint the sleeve
        expected = self.line_contrast * (level.board @ THIRDS)[:, None]
        # a washed-out or blurred frame shows every line fainter: compare with this frame's
        # typical square, most of which are in view
        typical = max(float(np.median(rise.max(axis=1))), 0.0)
        return blind | (rise >= np.minimum(expected, 0.3 * typical))

    def _hidden(self, evidence: Evidence, tiles: np.ndarray, lined: np.ndarray) -> frozenset[str]:
        """Squares under a hand or an object: the unreadable ones (:meth:`_unreadable`), and
        every suspect one (:meth:`_suspect`) connected to them, to a covered tile of the
        board's frame or to a blob of line-less squares reaching the board's edge (an arm of
        the board's own grey). What the hidden squares enclose is hidden too."""
        names = self.samples.names
        empty = evidence.kind == 0
        empty_light = float(np.median(evidence.light[empty])) if empty.any() else 0.0
        foreign_like = self._unreadable(evidence, empty_light)
        unlined = empty & ~lined.any(axis=1)
        suspect = foreign_like | unlined | self._suspect(evidence, lined, empty_light)
        seeds = {names[i] for i in np.flatnonzero(foreign_like)}
        for tile in np.flatnonzero(tiles):
            seeds.update(n for n in self._next_to_tile[tile] if suspect[names.index(n)])
        # an arm of the board's own colour: a blob of line-less squares reaching the edge
        blank = {names[i] for i in np.flatnonzero(unlined)}
        for name in blank & self._edge:
            blob = grow_region({name}, blank, self.neighbours)
            if len(blob) >= self.ARM_SQUARES:
                seeds |= blob
        hidden = grow_region(seeds, {names[i] for i in np.flatnonzero(suspect)}, self.neighbours)
        return hidden | self._enclosed(hidden)

    def _unreadable(self, evidence: Evidence, empty_light: float) -> np.ndarray:
        """Per square, whether it cannot be read: no class fits, many foreign points, a
        piece's colour faded or patchy in the shade, or both pieces' colours in full.

        A piece clearly darker than its own plastic (``SHADED``; ``empty_light`` is the
        typical empty square's lightness) is in a shadow, which keeps its colour in every
        point, and glare fades a colour by adding white, which makes it lighter: a faded or
        patchy piece colour that dark is neither but skin (dark, or shaded). A square holds
        one piece: both colours in full on it is skin beside a piece."""
        kind = evidence.kind
        dim = kind > 0
        shade = self.SHADED * self.piece_light[kind[dim] - 1] * empty_light
        dim[dim] = evidence.light[dim] < shade
        murky = dim & (evidence.faded | (evidence.trace < self.PATCHY))
        unfit = (evidence.scores.max(axis=1) < 0.3) | (evidence.foreign >= 0.3)
        return unfit | murky | evidence.solid.all(axis=1)

    def _suspect(self, evidence: Evidence, lined: np.ndarray, empty_light: float) -> np.ndarray:
        """Per square, whether it may be under something: partly foreign, poorly explained,
        explained by two classes (part board, part a fingertip), an orange piece read only
        from its glare-faded colour (pale skin looks like that; a glare spot alone touches no
        covered square), an empty square missing the lines it shares with two empty
        neighbours (two empty squares side by side show the line between them), or one with
        a trace of a piece's full colour (a piece peeping out from under a pale fingertip) or
        darker than half the typical empty square (a dark sleeve, dark skin)."""
        scores = evidence.scores
        empty = evidence.kind == 0
        torn = np.sort(scores, axis=1)[:, -2] >= 0.5
        unclear = torn | (evidence.foreign >= 0.1) | (scores.max(axis=1) < 0.75)
        across = np.where(self._across >= 0, empty[np.maximum(self._across, 0)], False)
        seamless = empty & (np.sum(across & ~lined, axis=1) >= 2)
        darker = evidence.light < self.DARK * empty_light
        odd = empty & ((evidence.trace >= self.TRACE) | darker)
        return evidence.faded | unclear | seamless | odd

    def _enclosed(self, hidden: frozenset[str]) -> frozenset[str]:
        """Squares cut off from the board's edge by ``hidden`` ones (4-connected): a hand has
        no hole, so what it surrounds is under the palm, however piece-like it looks."""
        if not hidden:
            return frozenset()
        names = self.samples.names
        open_ = np.array([n not in hidden for n in names])
        reached = open_ & (self._across < 0).any(axis=1)
        while True:
            nxt = reached.copy()
            for side in range(4):
                across = self._across[:, side]
                nxt |= open_ & (across >= 0) & reached[np.maximum(across, 0)]
            if (nxt == reached).all():
                break
            reached = nxt
        return frozenset(n for n, o, r in zip(names, open_, reached, strict=True) if o and not r)

    def _measure(
        self, frame: np.ndarray, pose: BoardPose
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, BoardLevel]:
        """Every sample point's reflectance (N x 3), colour-balanced on the board's frame, and
        the chroma distance within which it is board-like (N: 0.12, or 4 noise spreads at its
        lightness; any distance for a point the camera saturated, whose colour is lost); per
        tile of the board's frame, its share of points that are not board-like (something
        over the board's edge); and per square, the colour (camera units) the empty board
        has there: the frame's board-like tiles, carried over by the mat's light field."""
        ref = self.mat.measure(frame, pose)
        points, margin = self.samples.points, self.margin
        cells_px = points.image_points(pose)
        margin_px = margin.image_points(pose)
        region = Region.around(frame, np.vstack([cells_px, margin_px]))
        raw_cells, raw_rim = region.sample(cells_px), region.sample(margin_px)
        cells = ref.normalise(raw_cells, self._centres, points.owner)
        rim = ref.normalise(raw_rim, margin.centres, margin.owner)
        balance = self._balance(rim)
        cells = cells * balance[points.owner]
        rim = self._unclip(rim * balance[margin.owner], raw_rim)
        d, light = opponent(rim)
        # pixel noise: spread of differences between neighbouring points (the light's slow
        # changes across the board cancel out)
        step = np.abs(np.diff(d, axis=0))
        noise = max(float(np.max(1.4826 * np.median(step, axis=0) / np.sqrt(2.0))), 0.005)

        def tolerance(group: PointSet, light: np.ndarray) -> np.ndarray:
            span = np.maximum((ref.white_at(group.centres) - ref.black).mean(axis=1), 1.0)
            error = np.maximum(noise, self.FLOOR_LEVELS / span)[group.owner]
            return np.maximum(0.12, 4.0 * error / light)

        off = np.linalg.norm(d / light[:, None] - self.grey, axis=1)
        rim_foreign = (off > 1.5 * tolerance(margin, light)) & ~_clipped(raw_rim)
        _, light = opponent(cells)
        tol = np.where(_clipped(raw_cells), np.inf, tolerance(points, light))
        covered = margin.group_mean(rim_foreign)
        return cells, tol, covered, self._board_level(ref, margin.group_median(raw_rim), covered)

    def _board_level(self, ref: Reference, rim: np.ndarray, covered: np.ndarray) -> BoardLevel:
        """Per square, the empty board's BGR (camera units) there: the board's frame tiles
        (their median BGR ``rim``) that nothing covers give the board's reflectance against
        the paper, and the mat's light field carries it to every square (the geometry's
        nominal board colour when no tile is free)."""
        black = float(ref.black.mean())
        free = covered < 0.5
        ratio = float(self.board.mean())
        if free.any():
            paper = (ref.white_at(self.margin.centres[free]) - ref.black).mean(axis=1)
            ratio = float(np.median((rim[free].mean(axis=1) - black) / np.maximum(paper, 1.0)))
        return BoardLevel(ref.black + ratio * (ref.white_at(self._centres) - ref.black), ref.black)

    def _unclip(self, refl: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """``refl`` (N x 3, balanced) with every channel the camera saturated replaced by what
        the board's grey would give it beside the point's other channels: a saturated channel
        is not measured (nor is the paper's white in it, if that saturates too), so a bright
        board saturating one channel stays grey, and a colour is told by its other channels
        (skin's blue below its green)."""
        saturated = _saturated(raw)
        partly = saturated.any(axis=1) & ~saturated.all(axis=1)
        if not partly.any():
            return refl
        fair = ~saturated[partly]
        ratio = refl[partly] / np.maximum(self.board, 1e-3)
        level = (ratio * fair).sum(axis=1) / fair.sum(axis=1)
        grey = level[:, None] * self.board
        out = refl.copy()
        out[partly] = np.where(saturated[partly], grey, refl[partly])
        return out

    def _balance(self, rim: np.ndarray) -> np.ndarray:
        """Per square (G x 3), the channel gains that make the board's frame grey near it:
        each tile of the frame whose points are mostly board-like gives its gains, and a
        square takes the tiles' gains weighted by closeness (the light's colour and a
        channel nearly saturated on one side of the board are local)."""
        margin = self.margin
        board_like = np.linalg.norm(chroma_of(rim) - self.grey, axis=1) <= 0.25
        counts = margin.group_reduce(board_like.astype(np.float64))
        sums = margin.group_reduce(rim * board_like[:, None])
        good = counts >= 0.5 * np.diff(margin.starts)
        if not good.any():
            return np.ones((len(self.samples.names), 3))
        gains = self.board / np.maximum(sums[good] / counts[good][:, None], 1e-3)
        gains /= gains.mean(axis=1, keepdims=True)
        # the light's colour changes slowly across the board: a tile whose gains stand out
        # from the others' is not the board (pale skin or a grey sleeve over the frame) and
        # would make what covers the squares beside it look grey
        off = np.abs(gains - np.median(gains, axis=0)).max(axis=1)
        usual = off <= max(self.GAIN_SPREAD, 3.0 * 1.4826 * float(np.median(off)))
        weights = self._tile_weights[:, good][:, usual]
        return weights @ gains[usual] / weights.sum(axis=1, keepdims=True)

    def _scores(self, refl: np.ndarray, tol: np.ndarray) -> Evidence:
        """How well each class explains each square (G x classes, 0..1), and the share of
        each square's points that are foreign (far from grey and from both colours' lines),
        whether each piece's colour is there in full (G x pieces: its chroma, or under
        glare its colour difference; not only faded, as pale skin looks), the share of
        points in a piece's full colour and the median lightness.

        Empty: the share of board-like points. A piece: its colour evidence (see
        :meth:`_evidence`) mapped to 0..1, times the share of points not foreign."""
        g = len(self.samples.names)
        d, light = opponent(refl)
        rel = d / light[:, None] - self.grey
        board = np.linalg.norm(rel, axis=1) <= tol
        near = board.copy()
        lit = self._local_light(light.reshape(g, -1), board.reshape(g, -1))
        evidence, solid, trace = [], [], np.zeros(g)
        for colour in self.colours:
            length2 = float(colour @ colour)
            t = rel @ colour / length2
            off = np.abs(rel @ np.array([-colour[1], colour[0]])) / length2
            near |= (off <= 0.45) & (t > 0.1)
            top, kept = self._evidence(t.reshape(g, -1), light.reshape(g, -1) / lit)
            evidence.append(np.where(top >= 0.3, np.maximum(top, kept), top))
            solid.append((top >= self.SOLID) | ((kept >= self.GLARE) & (top >= self.WASHED)))
            trace = np.maximum(trace, (t >= self.SOLID).reshape(g, -1).mean(axis=1))
        # glare on orange compresses the camera's brightest channel, red, first: the piece
        # turns yellow but keeps its green-blue difference, which pale skin never has
        yellowed = self._yellowed(refl, lit)
        evidence[0] = np.where(yellowed, 1.0, evidence[0])
        solid[0] = solid[0] | yellowed
        foreign = 1.0 - near.reshape(g, -1).mean(axis=1)
        pieces = np.clip((np.column_stack(evidence) - 0.55) / 0.2, 0.0, 1.0)
        empty = board.reshape(g, -1).mean(axis=1)
        scores = np.column_stack([empty, pieces * (1.0 - foreign)[:, None]])
        median_light = row_quantile(light.reshape(g, -1), 0.5)
        return Evidence(scores, foreign, np.column_stack(solid), trace, median_light)

    def _yellowed(self, refl: np.ndarray, lit: np.ndarray) -> np.ndarray:
        """Per square, whether most of its points are orange turned yellow by glare: their
        green-blue difference (reflectance, against the neighbourhood's light ``lit``)
        that of orange within ``YELLOW_GB``, and their red-green difference under
        ``YELLOW_RG`` of it (but not below grey: that is green)."""
        g = len(self.samples.names)
        refl = refl.reshape(g, -1, 3) / lit[:, :, None]
        gb = refl[..., 1] - refl[..., 0]
        rg = refl[..., 2] - refl[..., 1]
        low, high = self.YELLOW_GB
        points = (
            (gb >= low * self.orange_gb)
            & (gb <= high * self.orange_gb)
            & (rg <= self.YELLOW_RG * gb)
            & (rg >= 0.0)
        )
        return points.mean(axis=1) >= 0.5

    def _local_light(self, light: np.ndarray, board: np.ndarray) -> np.ndarray:
        """Per square (G x 1), how much brighter than the board's average its neighbourhood's
        board-like points are (at least 1: a shadow next to a hand must not brighten it)."""
        sums = self._around @ (light * board).sum(axis=1)
        counts = self._around @ board.sum(axis=1)
        overall = (light * board).sum() / max(board.sum(), 1)
        local = np.where(counts > 0, sums / np.maximum(counts, 1), overall)
        return np.maximum(local / max(overall, 1e-3), 1.0)[:, None]

    def _evidence(self, t: np.ndarray, light: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A piece's colour evidence per square, from each point's chroma ``t`` as a fraction
        of the piece's (G x K: 0 grey, 1 the piece's colour) and its lightness: the larger of
        the ``TOP`` quantile of ``t`` (a piece in any light) and, where ``t`` says the hue
        is there at all, of ``t x lightness`` over the colour's own (glare adds white light,
        which lowers the chroma but keeps this colour difference). Skin, orange's hue but
        paler and darker, stays below both."""
        top = row_quantile(t, self.TOP)
        return top, row_quantile(t * light, self.TOP) / self.KEPT

    # ----------------------------------------------------------------- calibration
    def calibrate(self, frame: np.ndarray, pose: BoardPose, known: Mapping[str, Content]) -> None:
        """Learn the pieces' real colours from the squares of ``known`` that this frame shows
        and reads the same way (their most coloured points), so that chroma is measured
        against the real plastic under the real light; a square read otherwise (a hand, a
        misplaced piece) teaches nothing."""
        obs, refl = self._observe(frame, pose)
        points = self.samples.points
        index = {n: i for i, n in enumerate(self.samples.names)}
        for k, piece in enumerate(PIECES):
            rows = [
                index[n]
                for n, c in known.items()
                if c == piece and n in index and obs.cells.get(n) == piece
            ]
            if len(rows) < 2:
                continue
            pts = np.concatenate([refl[points.starts[i] : points.starts[i + 1]] for i in rows])
            d, light = opponent(pts)
            rel = d / light[:, None] - self.grey
            t = rel @ self.colours[k] / float(self.colours[k] @ self.colours[k])
            strong = rel[t >= max(0.5, float(np.percentile(t, 70)))]
            if len(strong) >= 8:
                self.colours[k] = 0.5 * self.colours[k] + 0.5 * np.median(strong, axis=0)


def _saturated(colours: np.ndarray) -> np.ndarray:
    """Per point and channel (N x 3), whether the camera saturated it."""
    return np.asarray(colours).reshape(-1, 3) >= SATURATED


def _clipped(colours: np.ndarray) -> np.ndarray:
    """Points (N) so bright that the camera saturated a channel while the others are high too:
    nearly white, of a colour that cannot be told (bright board, glare)."""
    colours = np.asarray(colours)
    b, g, r = colours[:, 0], colours[:, 1], colours[:, 2]
    high = np.maximum(np.maximum(b, g), r)
    low = np.minimum(np.minimum(b, g), r)
    return (high >= SATURATED) & (low >= 0.7 * SATURATED)


def _grid_lines(geometry: BoardGeometry, height: float) -> PointSet:
    """Per square and side (right, left, down, up), rows of ``LINE_POINTS`` points along the
    side, at ``LINE_OFFSETS`` across it: the board inside, around the grid line, outside."""
    along = np.linspace(-0.35, 0.35, LINE_POINTS)
    groups = []
    for cell in geometry.cells:
        poly = np.asarray(cell.polygon, dtype=np.float64)
        centre, half = poly.mean(axis=0), (poly.max(axis=0) - poly.min(axis=0)) / 2
        for normal in SIDES:
            n = np.asarray(normal)
            reach = float(np.abs(n) @ half)
            tangent = np.array([-n[1], n[0]]) * 2 * float(np.abs(n[::-1]) @ half)
            for offset in LINE_OFFSETS:
                groups.append(centre + n * (reach + offset) + along[:, None] * tangent)
    return PointSet.from_groups(groups, height)


def _margin_tiles(geometry: BoardGeometry, height: float, tile_mm: float = 15.0) -> PointSet:
    """Points of the board's frame around the squares, grouped in tiles of ``tile_mm``."""
    pts = board_margin(geometry, 2.0, inset_mm=1.5, clearance_mm=5.0)
    keys = np.floor(pts / tile_mm).astype(np.int64)
    groups = [pts[(keys == key).all(axis=1)] for key in np.unique(keys, axis=0)]
    return PointSet.from_groups([g for g in groups if len(g) >= 4], height)
