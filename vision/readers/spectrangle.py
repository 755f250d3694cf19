"""Spectrangle: each triangular cell is empty (the dark board) or holds one of the 36 tiles.

A tile's face is split into three triangles from its centre to its three edges, each in that
edge's colour. Every cell has three *regions* of sample points, one inside each of those
triangles, away from the value printed at the centre and from the tile's border; they are
sampled through the pose on the plane of the tiles' tops from a 2x-averaged crop of the frame.
Colours become reflectances against the mat's paper and marker black, and each point gets a
shadow-free chroma ``(b - g, r - g) / (b + g + r)`` and a log lightness.

Each region's median is scored against seven colour classes: the six edge colours (priors from
the geometry's ``look``, learned by :meth:`SpectrangleReader.calibrate`) and the empty board,
whose look is measured in every frame on the board's own frame around the cells. Glare (white
light from the glossy plastic) washes a colour out towards grey and makes it lighter, so the
median is of the darker half of a region's points (the least glared), and a colour may still be
washed out, at a cost; each class is widened by the median's pixel noise (a dark region's
chroma is noisy). A cell's probabilities are over ``empty`` and every way of laying one of the
36 real pieces on it (the sum of its three regions' scores), so an impossible mix of colours,
such as two board-coloured regions and a blue one, is never reported; each piece is then given
to at most one visible cell.

Points that fit no class, even washed out (skin, a sleeve), are *foreign*. A washed-out region
darker than any glare, or whose hue has turned off its colour's (glare keeps a colour's hue,
skin's is orange), is *pale*. Cells with a mostly foreign region, skin (a pale region that is
partly foreign or in a mix no content has, or two such washed-out regions in one cell), a pale
cell reading its neighbour's piece, and two neighbouring cells reading the same piece are
hidden; the hidden area grows through suspect neighbours (partly foreign, unsure, pale, or
white, the look of paper and light skin). Foreign points on the board's frame make the
observation occluded even when no cell is hidden. See ``docs/vision/readers-spectrangle.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import permutations
from typing import Any

import cv2
import numpy as np

from engine import Observation, data
from engine.core import Content

from ..geometry import BoardGeometry, hex_bgr
from ..locate import BoardPose
from . import Reader
from .common import (
    MIN_PROBABILITY,
    GaussianClasses,
    MatReference,
    PointSet,
    Region,
    board_height,
    chroma,
    polygon_grid,
)

#: Edge colours: observation names, in the order of the class models (the board is last).
COLOURS = ("red", "green", "blue", "yellow", "purple", "white")
LETTERS = {"red": "R", "green": "G", "blue": "B", "yellow": "Y", "purple": "P", "white": "W"}
BOARD = len(COLOURS)
SIDES = ("left", "right", "base")
#: Where a region's points lie in its triangle (centre to edge): ``s`` from the centre (0) to
#: the edge's middle (1), ``t`` across, as a share of ``s`` (the triangle spans ``|t| <= 1``).
RADII = (0.5, 0.63, 0.76)
ACROSS = (-0.55, -0.27, 0.0, 0.27, 0.55)
#: The smallest spread of a class's features (chroma, chroma, log lightness): sensor noise, and
#: light that varies across the board (shadows, glare) moving the lightness.
SPREAD = (0.02, 0.02, 0.3)
#: The spread of a class before calibration (the nominal colours are only a guess).
PRIOR_SPREAD = (0.035, 0.035, 0.4)
WHITE_SPREAD = (0.015, 0.015, 0.4)
#: A sensor level at which a channel is saturated (in the 2x2-averaged crop); a channel also
#: saturates at a lower level when at least ``CLIP_POINTS`` points share its highest level (to
#: within ``CLIP_MARGIN``).
SATURATED = 250
CLIP_POINTS = 6
CLIP_MARGIN = 4.0
#: Points a class needs to be learned from.
MIN_LEARN = 8
#: Clean points (neither saturated nor foreign) a region needs to be read from them alone.
MIN_CLEAN = 5
#: Distance (mm) of the frame's points from the cells (a tile's sides, seen at an angle, and
#: the tile itself, which stands above the board, must not reach them) and from the board's
#: outline (the mat's white paper must not bleed into them, through blur or JPEG colour).
CLEARANCE = 5.0
#: Glare (white light added by the glossy plastic) keeps a colour's opponent differences
#: ``(b - g, r - g)``; a washed-out point keeps at least this share of its colour's (less is
#: paler than any lit tile: skin).
KEPT = 0.3
#: How far (chroma) the board's look may drift from its calibrated one (white balance errors).
BOARD_DRIFT = 0.08
#: Log likelihood lost per unit of colour washed out by glare (glare is rarer than none).
GLARE_COST = 8.0
#: The most a colour's chroma may be washed out by glare (its share that is kept).
GLARE_KEPT = 0.1
#: The log lightness of glare at most (the camera saturates a little above the paper's white).
GLARE_LIGHT = 0.1
#: A region whose colour keeps less than this share of its chroma is washed out.
WASHED = 0.6
#: ...and it is pale (not glare) when its log lightness is this much below the dimmest glare
#: that washes the colour out that far (:func:`_dimmest_glare`).
PALE = 0.25
#: ...or when its hue has turned this many spreads off its colour's towards the side a
#: saturated channel cannot bend it (:meth:`SpectrangleReader._off_hue`): white light keeps a
#: colour's hue, skin's is its own (orange, between red and yellow).
OFF_HUE = 3.0
#: The part of a washed colour's hue spread that does not shrink with its chroma (the light's
#: tint against the paper's, JPEG colour).
HUE_FLOOR = 0.015
#: A cell whose likeliest content has less probability than this is unsure.
SURE = 0.9
#: A white region is only as white as the paper: a tinge of colour or a duller white is as
#: likely light skin or a white sleeve.
WHITE_CHROMA = 0.02
WHITE_LIGHT = -0.2
#: Log likelihood by which a cell's regions, each read alone, beat every real content when
#: they are not one (a mix of the board and a hand, say).
MIX_GAP = 12.0
#: Share of a region's points that hides its cell when foreign, and that lets a hidden
#: neighbour's area grow into it.
HIDE_AT = 0.6
GROW_AT = 0.4
#: Share of a pale region's points that, foreign, make it skin (a hand, not a washed tile).
PARTLY = 0.2
#: Regions of one cell that, washed out in a way no glare washes a colour, make it skin.
TINTED = 2
#: Share of a tile of the board's frame that, foreign, means something is over the board.
FRAME_COVERED = 0.5


def placements() -> tuple[tuple[str, str, str], ...]:
    """Every way of laying each real piece on a cell: (left, right, base) colour letters, each
    distinct order of each piece's colours (pieces are double-sided, so all orders)."""
    pieces = data.load("spectrangle")["pieces"]
    return tuple(dict.fromkeys(p for code in pieces for p in permutations(code)))


class SpectrangleReader(Reader):
    """Reads the 36 triangular cells: empty, or the (left, right, base) colours of a tile.

    Options: ``sharpness`` (how far the region scores are trusted, 0.5: the regions of one
    tile are not independent views), ``foreign_sigma`` (Mahalanobis distance beyond which a
    point fits no class, 4).
    """

    games = ("spectrangle",)

    def __init__(
        self,
        geometry: BoardGeometry,
        *,
        sharpness: float = 0.5,
        foreign_sigma: float = 4.0,
        **options: Any,
    ) -> None:
        super().__init__(geometry, **options)
        self.sharpness = sharpness
        self.foreign_sigma = foreign_sigma
        self.names = tuple(c.name for c in geometry.cells)
        surface = board_height(geometry)
        top = surface + float(geometry.pieces.get("thickness", 0.0))
        self.regions = PointSet.from_groups(
            [_region(np.asarray(c.polygon), side) for c in geometry.cells for side in SIDES], top
        )
        self.frame = _frame_tiles(geometry, surface)
        self.mat = MatReference(geometry)
        look = geometry.extra.get("look", {})
        nominal = np.vstack(
            [hex_bgr(look["pieces"][c]) for c in COLOURS] + [hex_bgr(look.get("board", "#222"))]
        )
        self.classes = GaussianClasses(_features(nominal / 255.0), SPREAD, rate=0.3)
        self.classes.covs[:] = np.diag(PRIOR_SPREAD) ** 2
        # a white edge is the paper's white, which defines the colour balance
        self.classes.covs[COLOURS.index("white")] = np.diag(WHITE_SPREAD) ** 2
        self.layouts = placements()
        letters = {v: i for i, v in enumerate(LETTERS.values())}
        self._layout_index = np.array([[letters[c] for c in p] for p in self.layouts])
        self._piece_of = np.array(["".join(sorted(p)) for p in self.layouts])
        self._contents: tuple[Content, ...] = (None, *self.layouts)
        # cells sharing an edge have centres side / sqrt(3) apart; a tile of the board's frame
        # touches the cells whose centres are within about a side of its own
        first = np.asarray(geometry.cells[0].polygon, dtype=np.float64)
        side = float(np.linalg.norm(first[1] - first[0]))
        centres = np.array([c.center for c in geometry.cells])
        gap = np.linalg.norm(centres[:, None] - centres[None], axis=2)
        self._neighbours = (gap > 0) & (gap <= 0.6 * side)
        self._frame_near = [
            np.flatnonzero(np.linalg.norm(centres - t, axis=1) <= 0.9 * side)
            for t in self.frame.centres
        ]

    # ----------------------------------------------------------------- reading
    def read(self, frame: np.ndarray, pose: BoardPose) -> Observation:
        """Every visible cell's content, with probabilities; cells under a hand left out."""
        seen = self._measure(frame, pose)
        classes = self._classes_for(seen.rim)
        region_ll, foreign, tinted, dull = self._region_scores(seen, classes)
        rim_foreign = self._frame_foreign(seen.rim, classes, seen.noise)
        probs, mixed = self._cell_probabilities(region_ll)
        best = probs.argmax(axis=1)
        first = np.where(best > 0, self._piece_of[np.maximum(best - 1, 0)], "")
        pale = tinted | dull
        pale_cells = pale.reshape(-1, 3).any(axis=1)
        unsure = pale_cells | (probs.max(axis=1) < SURE) | mixed
        # skin: a pale region that is partly foreign too, or in a mix no real content has, or
        # a cell mostly washed out in a way no glare washes a colour
        skin = (pale & (foreign >= PARTLY)).reshape(-1, 3).any(axis=1) | (pale_cells & mixed)
        skin |= tinted.reshape(-1, 3).sum(axis=1) >= TINTED
        hidden = self._hidden(first, foreign, rim_foreign, unsure, pale_cells, skin)
        visible = ~np.isin(self.names, list(hidden))
        probs = self._pieces_once(probs, visible)
        return self._observation(probs, hidden, bool(hidden) or bool(rim_foreign.any()))

    def _measure(self, frame: np.ndarray, pose: BoardPose) -> _Seen:
        """What the frame shows at the regions' and the board frame's points."""
        ref = self.mat.measure(frame, pose)
        cells_px = self.regions.image_points(pose)
        rim_px = self.frame.image_points(pose)
        crop = Region.around(frame, np.vstack([cells_px, rim_px]))
        raw = crop.sample(cells_px)
        cells = ref.normalise(raw, self.regions.points)
        rim = ref.normalise(crop.sample(rim_px), self.frame.points)
        return _Seen(_features(cells), _features(rim), _saturated(raw), ref.noise)

    def _classes_for(self, rim: np.ndarray) -> GaussianClasses:
        """The calibrated classes with the empty board's look measured on this frame's frame
        tiles: the median of the tiles whose median looks like the board (a sleeve over part
        of the frame is left out), and the robust spread of those medians (like a region's,
        a tile's median is free of most pixel noise)."""
        classes = self.classes.copy()
        tiles = self.frame.group_median(rim)
        near = np.linalg.norm(tiles[:, :2] - self.classes.means[BOARD, :2], axis=1)
        good = tiles[near <= max(BOARD_DRIFT, float(np.min(near)))]
        centre = np.median(good, axis=0)
        spread = 1.4826 * np.median(np.abs(good - centre), axis=0)
        classes.means[BOARD] = centre
        classes.covs[BOARD] = np.diag(np.maximum(1.5 * spread, SPREAD)) ** 2
        return classes

    def _region_scores(
        self, seen: _Seen, classes: GaussianClasses
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per region (R x classes) the log likelihood of its median under each class (each
        class widened by the median's own pixel noise); per region the share of its points
        that fit no class; whether it is *tinted*: its likeliest colour there only washed out,
        and yet darker than even the dimmest glare would make it or turned off the colour's
        hue (skin can look like glare on red or yellow); and whether it is *dull*: white but
        greyer or duller than paper. Both are *pale*."""
        far = self._foreign(seen.cells, classes, seen.noise) & ~seen.clipped
        median, used = self._region_medians(seen, far)
        noise = _median_noise(median, used, seen.noise)
        ll = _log_likelihood(classes, median, noise)
        best = ll.argmax(axis=1)
        mu = classes.means[best]
        size2 = (mu[:, :2] ** 2).sum(axis=1)
        kept = np.clip(
            np.einsum("nd,nd->n", median[:, :2], mu[:, :2]) / np.maximum(size2, 1e-6), 0.05, 1.0
        )
        dim = median[:, 2] < _dimmest_glare(mu[:, 2], kept) - PALE
        off = self._off_hue(classes, best, median, kept, noise) > OFF_HUE
        tinted = (kept < WASHED) & (size2 >= 0.01) & (dim | off)
        white = best == COLOURS.index("white")
        dull = (np.abs(median[:, :2]).max(axis=1) > WHITE_CHROMA) | (median[:, 2] < WHITE_LIGHT)
        return ll, far.reshape(self.regions.groups, -1).mean(axis=1), tinted, white & dull

    @staticmethod
    def _off_hue(
        classes: GaussianClasses,
        best: np.ndarray,
        median: np.ndarray,
        kept: np.ndarray,
        noise: np.ndarray,
    ) -> np.ndarray:
        """Per region, how many spreads its hue has turned off its likeliest colour's, on the
        side a saturated channel cannot bend it (0 on the other). White light shrinks a
        colour's chroma towards grey along its own hue, and with it the colour's own spread
        (``kept`` of it); a saturated brightest channel bends the hue, but only one way (away
        from that channel). Skin's hue (orange) lies off every colour's, so a hand read as a
        washed-out red or yellow turns the other way."""
        mu = classes.means[:, :2]
        axis = mu / np.maximum(np.linalg.norm(mu, axis=1, keepdims=True), 1e-6)
        across = np.column_stack([-axis[:, 1], axis[:, 0]])
        side = np.sign(np.einsum("kd,kd->k", _clip_bend(classes.means), across))
        turn = -side[best] * np.einsum("nd,nd->n", median[:, :2], across[best])
        spread2 = np.einsum("kd,kde,ke->k", across, classes.covs[:, :2, :2], across)[best]
        tol2 = kept**2 * spread2 + HUE_FLOOR**2 + noise[:, 0]
        return np.maximum(turn, 0.0) / np.sqrt(tol2)

    def _region_medians(self, seen: _Seen, foreign: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per region (R x 3) the median features of its least glared points
        (:func:`_least_glared`), leaving out the foreign ones (a fingertip over part of it)
        and those where the camera saturated some channels but not all (their hue is lost),
        when enough others remain; and how many points each median is of."""
        values = seen.cells.reshape(self.regions.groups, -1, 3)
        bad = (seen.clipped | foreign).reshape(self.regions.groups, -1)
        return _least_glared(values, bad & ((~bad).sum(axis=1) >= MIN_CLEAN)[:, None])

    def _foreign(
        self,
        features: np.ndarray,
        classes: GaussianClasses,
        noise: float,
        among: range = range(BOARD + 1),
    ) -> np.ndarray:
        """Points (N) that fit no class of ``among``, even glare-washed: such a point's chroma
        lies between its colour's and grey, while its opponent differences (chroma x
        lightness, which added white light keeps) stay near the colour's. A dark point's
        chroma is noisier (the pixel ``noise`` over its lightness), so it may stray further."""
        x, light = features[:, :2], np.exp(features[:, 2])
        jitter2 = (np.sqrt(2.0) * noise / (3.0 * np.maximum(light, 0.02))) ** 2
        near = _chroma_distance(classes, features, jitter2, list(among))
        fits = near.min(axis=1) <= self.foreign_sigma
        for k in among:
            mu = classes.means[k]
            size = float(np.linalg.norm(mu[:2]))
            if size < 0.1:
                continue
            axis = mu[:2] / size
            along = x @ axis
            spread = np.sqrt(classes.covs[k][0, 0] + jitter2)
            across = np.abs(x @ np.array([-axis[1], axis[0]])) / spread
            kept = along * light / (size * np.exp(mu[2]))
            fits |= (across <= 3.0) & (along >= 0.1 * size) & (kept >= KEPT)
        return ~fits

    def _frame_foreign(self, rim: np.ndarray, classes: GaussianClasses, noise: float) -> np.ndarray:
        """Per tile of the board's frame, whether many of its points are not board-like."""
        off = self._foreign(rim, classes, noise, range(BOARD, BOARD + 1))
        return self.frame.group_mean(off.astype(np.float64)) >= FRAME_COVERED

    def _cell_probabilities(self, region_ll: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per cell (C x 1 + layouts) the probabilities of empty, then of every layout of a real
        piece; and whether its regions' own likeliest colours are far from any real content (a
        mix such as board, board and white: a hand over part of an empty cell)."""
        ll = region_ll.reshape(len(self.names), 3, -1)
        sides = np.arange(3)
        layout = ll[:, sides, self._layout_index].sum(axis=2)  # C x layouts
        empty = ll[:, :, BOARD].sum(axis=1, keepdims=True)
        contents = np.hstack([empty, layout])
        mixed = ll.max(axis=2).sum(axis=1) - contents.max(axis=1) > MIX_GAP
        logits = self.sharpness * contents
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        return probs / probs.sum(axis=1, keepdims=True), mixed

    def _pieces_once(self, probs: np.ndarray, visible: np.ndarray) -> np.ndarray:
        """``probs`` with each piece given to at most one ``visible`` cell, the surest of it
        (a hidden cell, whose reading is a hand's look, claims none): from the surest cell
        on, a piece already given away is removed from a cell's contents."""
        probs = probs.copy()
        taken: set[str] = set()
        for i in np.argsort(-probs.max(axis=1)):
            if not visible[i]:
                continue
            best = int(probs[i].argmax())
            if best > 0 and self._piece_of[best - 1] in taken:
                probs[i, 1:][np.isin(self._piece_of, list(taken))] = 0.0
                probs[i] /= probs[i].sum()
                best = int(probs[i].argmax())
            if best > 0:
                taken.add(self._piece_of[best - 1])
        return probs

    def _hidden(
        self,
        first: np.ndarray,
        foreign: np.ndarray,
        rim_foreign: np.ndarray,
        unsure: np.ndarray,
        pale: np.ndarray,
        skin: np.ndarray,
    ) -> frozenset[str]:
        """Cells under a hand or an object.

        Seeds: a cell with a region too foreign to read, or ``skin`` (two signs of a hand in
        it); among the other cells that are sure of what they read, one piece read on two
        neighbouring cells (a hand is one blob of one look, and every piece exists once); a
        ``pale`` cell reading the piece a neighbour reads (one of the two is a hand: the pale
        one); partly foreign cells next to a covered stretch of the board's frame. From them
        the hidden area grows through *suspect* cells: partly foreign, reading a piece that
        another cell reads too, or ``unsure`` (pale, a mix of looks no real content has, or no
        content clearly likeliest)."""
        share = foreign.reshape(len(self.names), 3).max(axis=1)
        hidden = (share >= HIDE_AT) | skin
        seen = np.where(hidden | unsure, "", first)
        pieces, counts = np.unique(seen[seen != ""], return_counts=True)
        doubled = np.isin(seen, pieces[counts > 1])
        same = (seen[:, None] == seen[None]) & doubled[:, None]
        hidden |= (same & self._neighbours).any(axis=1)
        # a pale cell reading the piece a neighbour reads: one of the two is a hand, the pale one
        read = np.where(hidden | (unsure & ~pale), "", first)
        twin = (read[:, None] == read[None]) & (read != "")[:, None] & self._neighbours
        hidden |= pale & twin.any(axis=1)
        suspect = (share >= GROW_AT) | doubled | unsure
        for tile in np.flatnonzero(rim_foreign):
            near = self._frame_near[tile]
            hidden[near[suspect[near]]] = True
        while True:
            grown = hidden | (suspect & self._neighbours[hidden].any(axis=0))
            if (grown == hidden).all():
                break
            hidden = grown
        return frozenset(self.names[i] for i in np.flatnonzero(hidden))

    def _observation(
        self, probs: np.ndarray, hidden: frozenset[str], occluded: bool
    ) -> Observation:
        """The observation: per visible cell its likeliest content and the contents with a
        probability of at least :data:`MIN_PROBABILITY`, renormalised (``vision.decode``
        gives any other content that probability)."""
        cells: dict[str, Content] = {}
        confidence: dict[str, float] = {}
        probabilities: dict[str, Mapping[Content, float]] = {}
        for i, name in enumerate(self.names):
            if name in hidden:
                continue
            keep = np.flatnonzero(probs[i] >= MIN_PROBABILITY)
            p = probs[i, keep] / probs[i, keep].sum()
            contents = [self._contents[j] for j in keep]
            best = int(p.argmax())
            cells[name] = contents[best]
            confidence[name] = float(p[best])
            probabilities[name] = dict(zip(contents, p.tolist(), strict=True))
        return Observation(
            game=self.game,
            cells=cells,
            partial=bool(hidden),
            occluded=occluded,
            confidence=confidence,
            probabilities=probabilities,
        )

    # ----------------------------------------------------------------- calibration
    def calibrate(self, frame: np.ndarray, pose: BoardPose, known: Mapping[str, Content]) -> None:
        """Learn the edge colours' real look from the regions of the tiles in ``known``, and the
        empty board's from its empty cells (which picks the frame's tiles that show the board;
        its spread is measured in every frame). Points far from the others of their class
        (glare, a saturated channel) are left out."""
        seen = self._measure(frame, pose)
        per_region = seen.cells.reshape(self.regions.groups, -1, 3)
        usable = ~seen.clipped.reshape(self.regions.groups, -1)
        index = {n: i for i, n in enumerate(self.names)}
        samples: dict[int, list[np.ndarray]] = {}
        for name, content in known.items():
            if name not in index:
                continue
            for side in range(3):
                cls = BOARD if content is None else COLOURS.index(_colour(content[side]))
                region = 3 * index[name] + side
                samples.setdefault(cls, []).append(per_region[region][usable[region]])
        for cls, found in samples.items():
            points = np.concatenate(found)
            if len(points) < MIN_LEARN:
                continue  # hardly any usable point (glare, a hand): nothing to learn
            centre = np.median(points, axis=0)
            spread = np.maximum(1.4826 * np.median(np.abs(points - centre), axis=0), 0.01)
            typical = (np.abs(points - centre) <= 3.0 * spread).all(axis=1)
            if typical.sum() >= MIN_LEARN:
                self.classes.learn(cls, points[typical])


def _log_likelihood(
    classes: GaussianClasses, features: np.ndarray, noise: np.ndarray
) -> np.ndarray:
    """Log likelihood (N x classes) of features under every class, each colour allowed to be
    washed out by glare: chroma ``f`` times the colour's (``f`` from ``GLARE_KEPT`` to 1, as
    the features say), lightness ``1 / f`` times (up to ``GLARE_LIGHT``), at a cost of
    ``GLARE_COST x (1 - f)``. Each class's spread is widened by the features' own
    measurement ``noise`` (N x 3 variances)."""
    x = np.asarray(features, dtype=np.float64)
    widen = noise[:, :, None] * np.eye(3)
    out = np.empty((len(x), len(classes.means)))
    for k, (mu, cov) in enumerate(zip(classes.means, classes.covs, strict=True)):
        size2 = float(mu[:2] @ mu[:2])
        if size2 >= 0.01:
            f = np.clip(x[:, :2] @ mu[:2] / size2, GLARE_KEPT, 1.0)
            light = np.minimum(mu[2] - np.log(f), GLARE_LIGHT)
            mean = np.column_stack([f * mu[0], f * mu[1], light])
        else:
            f, mean = np.ones(len(x)), mu[None]
        d = x - mean
        total = cov + widen
        maha = np.einsum("nd,nde,ne->n", d, np.linalg.inv(total), d)
        out[:, k] = -0.5 * (maha + np.log(np.linalg.det(total))) - GLARE_COST * (1.0 - f)
    return out


def _dimmest_glare(light: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The lowest log lightness at which glare leaves a colour of log lightness ``light`` only
    ``kept`` of its chroma. Glare mixes the light's white into the colour: added on top of it
    (a specular reflection), lightness grows by ``1 / kept``; with the energy kept (the share
    reflected at the surface no longer reaching the pigment), reflectance ``r`` becomes
    ``(1 - a) r + a`` and lightness only ``r / (kept + r (1 - kept))``: the least it can be."""
    return light - np.log(kept + np.exp(light) * (1.0 - kept))


def _clip_bend(means: np.ndarray) -> np.ndarray:
    """Per class (of features K x 3) the way (chroma, K x 2) its colour's chroma moves when its
    brightest channel saturates: that channel's reflectance lowered a little."""
    light = np.exp(means[:, 2])
    opponent = means[:, :2] * 3.0 * light[:, None]  # (b - g, r - g)
    green = light - opponent.sum(axis=1) / 3.0
    bgr = np.column_stack([green + opponent[:, 0], green, green + opponent[:, 1]])
    lowered = bgr.copy()
    lowered[np.arange(len(bgr)), bgr.argmax(axis=1)] *= 0.9
    return chroma(lowered) - chroma(bgr)


def _least_glared(values: np.ndarray, bad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group (G, of features G x K x 3) the median features of the darker half of its
    points, leaving out ``bad`` ones (G x K), and how many points that is. Glare adds white
    light, which makes a point lighter and greyer, so the darker points keep the most of the
    colour (a shadow darkens without changing the chroma)."""
    light = np.where(bad, np.nan, values[..., 2])
    drop = bad | (light > np.nanmedian(light, axis=1, keepdims=True))
    return np.nanmedian(np.where(drop[..., None], np.nan, values), axis=1), (~drop).sum(axis=1)


def _median_noise(median: np.ndarray, used: np.ndarray, noise: float) -> np.ndarray:
    """Per median of features (N x 3, each of ``used`` points) the variance (N x 3) the
    camera's pixel ``noise`` (reflectance) leaves in it: chroma divides channel differences by
    the lightness, so a dark colour's chroma is the noisier (a median of n points has pi / 2n
    times a point's variance)."""
    light = np.exp(median[:, 2])
    point = (noise / np.maximum(light, 0.02))[:, None] ** 2 * np.array([2 / 9, 2 / 9, 1 / 3])
    return point * (np.pi / (2.0 * np.maximum(used, 1)))[:, None]


def _chroma_distance(
    classes: GaussianClasses, features: np.ndarray, jitter2: np.ndarray, among: list[int]
) -> np.ndarray:
    """Distance (N x ``among``) of the features' chroma alone (what a shadow cannot explain)
    to the classes ``among``, in class spreads widened by each point's own noise (variance
    ``jitter2``, N)."""
    x = np.asarray(features)[:, None, :2]
    mu = classes.means[among, :2][None]
    var = np.diagonal(classes.covs[among], axis1=1, axis2=2)[None, :, :2] + jitter2[:, None, None]
    return np.sqrt((((x - mu) ** 2) / var).sum(axis=2))


@dataclass(frozen=True)
class _Seen:
    """One frame at the reader's points: features (chroma, log lightness) of the regions'
    points (``cells``) and of the board frame's (``rim``), which region points the camera
    saturated in some channels but not all (``clipped``), and its pixel noise (reflectance
    units)."""

    cells: np.ndarray
    rim: np.ndarray
    clipped: np.ndarray
    noise: float


def _saturated(raw: np.ndarray) -> np.ndarray:
    """Points (N, of camera colours N x 3) with some channels but not all saturated: at the
    channel's highest level in the frame, shared by several points (the sensor clips before
    the white balance gains, so a clipped channel need not read 255)."""
    top = raw.max(axis=0)
    at_top = raw >= top - CLIP_MARGIN
    clips = (at_top.sum(axis=0) >= CLIP_POINTS) | (top >= SATURATED)
    clipped = at_top & clips
    return clipped.any(axis=1) & ~clipped.all(axis=1)


def _colour(letter: str) -> str:
    """The colour name of an edge letter."""
    return next(name for name, code in LETTERS.items() if code == letter)


def _features(reflectance: np.ndarray) -> np.ndarray:
    """Per colour (N x 3 reflectance, BGR): chroma (2, unchanged by shadows) and log lightness."""
    refl = np.asarray(reflectance, dtype=np.float64)
    light = np.log(np.maximum(refl.mean(axis=1), 0.02))
    return np.column_stack([chroma(refl), light])


def _region(polygon: np.ndarray, side: str) -> np.ndarray:
    """Sample points (K x 2 mm) in the triangle from the cell's centre to its ``side`` edge."""
    a, b = _edge(polygon, side)
    centre = polygon.mean(axis=0)
    mid = (a + b) / 2
    half = (b - a) / 2
    return np.array([centre + s * (mid - centre) + s * t * half for s in RADII for t in ACROSS])


def _edge(polygon: np.ndarray, side: str) -> tuple[np.ndarray, np.ndarray]:
    """The end points of a cell's ``left``, ``right`` or ``base`` edge (the spec: the base is
    the horizontal edge, left and right the slanted ones by their middles' x)."""
    edges = [(polygon[i], polygon[(i + 1) % 3]) for i in range(3)]
    base = min(edges, key=lambda e: abs(e[0][1] - e[1][1]))
    slanted = sorted((e for e in edges if e is not base), key=lambda e: e[0][0] + e[1][0])
    return {"base": base, "left": slanted[0], "right": slanted[1]}[side]


def _frame_tiles(
    geometry: BoardGeometry, height: float, tile_mm: float = 25.0, size: int = 8
) -> PointSet:
    """Points of the board's frame around the cells (the board's own colour, always empty),
    in tiles of ``tile_mm``, ``size`` points each (spread over the tile; equal sizes make
    per-tile medians fast)."""
    outline = np.asarray(geometry.extra["board"]["outline"], dtype=np.float64)
    pts = polygon_grid(outline, 2.5, CLEARANCE)
    cells = np.concatenate([np.asarray(c.polygon) for c in geometry.cells]).astype(np.float32)
    hull = cv2.convexHull(cells)
    clear = np.array([cv2.pointPolygonTest(hull, (float(x), float(y)), True) for x, y in pts])
    pts = pts[clear <= -CLEARANCE]
    keys = np.floor(pts / tile_mm).astype(np.int64)
    groups = [pts[(keys == key).all(axis=1)] for key in np.unique(keys, axis=0)]
    kept = [g[np.linspace(0, len(g) - 1, size).round().astype(int)] for g in groups]
    return PointSet.from_groups(
        [k for k, g in zip(kept, groups, strict=True) if len(g) >= size], height
    )
