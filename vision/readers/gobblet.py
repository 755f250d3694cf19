"""Gobblet: the visible top of every square's stack, white or black, size 1 to 4.

The board's top face is sampled into a small top-down image (0.8 px/mm). Every pixel gets two
log-likelihood ratios, "white piece rather than what else it could be" and "black piece rather
than ...", from colours made independent of the light: log-chroma against the mat's paper, and
lightness against the board's own wood nearby. A piece is a tall bell, so in that top-down image
its silhouette is the union of its horizontal slices, each projected from the camera onto the
board: a disk pushed away from the point under the camera by its height (parallax). For every
square and every (colour, size) the evidence is summed over that predicted silhouette, allowing
the piece to sit a little off-centre.

A hand is a large blob of pixels that look like skin, like nothing the board holds, like the
grid's lines away from them, or like a piece where the reading paints none, as long as one blob
reaches beyond the pieces; a hand of the wood's own colour is found by the grid lines it hides.
A piece the fit pulls far off its square's centre next to the hand is stretched by a finger of
its colour, and hidden. See ``docs/vision/readers-gobblet.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from engine import Observation, new_game
from engine.core import Content

from ..geometry import BoardGeometry, hex_bgr
from ..locate import BoardPose, estimate_intrinsics
from . import Reader
from .common import (
    MatReference,
    Reference,
    board_height,
    board_margin,
    observation,
    sample_image,
    softmax,
)

#: A bell's outline: (height, radius) as fractions of the piece's height and base radius, from
#: the base up (a flared base, a body narrowing to a neck, a round head). A modelling choice:
#: a geometry file may give its own as ``pieces.profile``.
BELL_PROFILE = ((0.0, 1.0), (0.06, 1.0), (0.35, 0.74), (0.7, 0.46), (0.86, 0.46), (1.0, 0.28))
COLOURS = ("white", "black")
#: Points along each side of a square where its grid line is looked for.
SIDE_POINTS = 8


@dataclass(frozen=True, eq=False)
class TopDown:
    """A top-down image of a board area: pixel ``(u, v)`` shows board mm
    ``origin + (u + 0.5, v + 0.5) / px_per_mm`` on the plane of the pose it is sampled with."""

    origin: tuple[float, float]
    size: tuple[int, int]
    px_per_mm: float

    #: the pose is evaluated every STEP pixels and interpolated in between (it is smooth)
    STEP = 16

    def sample(self, frame: np.ndarray, pose: BoardPose) -> np.ndarray:
        """The area's pixels (h x w x 3 uint8), bilinear, through ``pose`` (lens included)."""
        w, h = self.size
        s = self.STEP
        # coarse samples at the centres of s x s blocks, one block beyond every edge, so that
        # resizing by exactly s interpolates them onto every pixel (cv2.resize aligns centres)
        gw, gh = -(-w // s) + 2, -(-h // s) + 2
        centre = (s - 1) / 2 + 0.5
        u, v = np.meshgrid((np.arange(gw) - 1) * s + centre, (np.arange(gh) - 1) * s + centre)
        mm = np.column_stack([u.ravel(), v.ravel()]) / self.px_per_mm + self.origin
        coarse = pose.to_image(mm).astype(np.float32).reshape(gh, gw, 2)
        fine = cv2.resize(coarse, (gw * s, gh * s))[s : s + h, s : s + w]
        maps, frac = cv2.convertMaps(fine, None, cv2.CV_16SC2)
        return cv2.remap(frame, maps, frac, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    def to_px(self, points_mm: np.ndarray) -> np.ndarray:
        """Board mm -> continuous pixel coordinates (pixel ``u`` spans ``[u, u + 1)``)."""
        return (np.asarray(points_mm, dtype=np.float64) - self.origin) * self.px_per_mm


@dataclass
class Palette:
    """How things look against the board's wood, the colour reference that is always in view
    and never clipped (the paper may be, in bright light): log-chroma offsets
    ``(log b/g, log r/g)`` from the wood's, and log-lightness against the wood's, of the pieces
    (``white``, ``black``), the board's ``grid`` lines, the mat's ``paper`` and the two ends of
    the range of ``skin`` tones.
    Starts from the geometry's ``look`` colours; :meth:`GobbletReader.calibrate` refines the
    pieces'."""

    chroma: dict[str, np.ndarray]
    lightness: dict[str, float]

    @classmethod
    def from_look(cls, look: Mapping[str, Any]) -> Palette:
        """Nominal colours of the geometry file (sRGB against white paper) and of skin."""
        board = hex_bgr(look["board"])
        colours = {c: hex_bgr(look["pieces"][c]) for c in COLOURS}
        colours["paper"] = np.full(3, 255.0)
        colours["grid"] = hex_bgr(look["grid"])
        colours.update(zip(("skin", "dark skin"), map(np.asarray, SKIN_TONES), strict=True))
        return cls(
            {c: _log_chroma(v) - _log_chroma(board) for c, v in colours.items()},
            {c: float(np.log(v.mean() / board.mean())) for c, v in colours.items()},
        )


def _log_chroma(bgr: np.ndarray) -> np.ndarray:
    b, g, r = np.maximum(np.asarray(bgr, dtype=np.float64), 1e-3)
    return np.array([np.log(b / g), np.log(r / g)])


@dataclass(frozen=True)
class Silhouettes:
    """Every (square, size) bell silhouette as rows of pixel runs in a :class:`TopDown` image:
    group ``g = square * sizes + size_index`` covers, on row ``v[i]``, pixels ``a[i]..b[i]-1``
    for ``starts[g] <= i < starts[g + 1]``."""

    v: np.ndarray
    a: np.ndarray
    b: np.ndarray
    starts: np.ndarray
    groups: int

    @classmethod
    def build(
        cls,
        centres_px: np.ndarray,
        camera_px: tuple[float, float, float],
        bells: np.ndarray,
        profile: np.ndarray,
    ) -> Silhouettes:
        """``centres_px``: the squares' centres (S x 2 px); ``camera_px``: the point under the
        camera (px) and its height (mm); ``bells``: (radius px, height mm) per size; ``profile``:
        (height fraction, radius fraction) slices."""
        cx, cy, cz = camera_px
        under = np.array([cx, cy])
        k = cz / (cz - profile[None, :, 0] * bells[:, 1:2])  # sizes x slices: parallax scale
        rho = bells[:, 0:1] * profile[None, :, 1] * k
        q = under + (centres_px[:, None, None, :] - under) * k[None, :, :, None]
        n_groups = len(centres_px) * len(bells)
        q = q.reshape(n_groups, -1, 2)
        rho = np.broadcast_to(rho[None], (len(centres_px), *rho.shape)).reshape(n_groups, -1)
        top = np.floor((q[:, :, 1] - rho).min(axis=1)).astype(np.int64)
        rows = np.ceil((q[:, :, 1] + rho).max(axis=1)).astype(np.int64) - top + 1
        group = np.repeat(np.arange(n_groups), rows)
        v = np.arange(rows.sum()) - np.repeat(np.cumsum(rows) - rows, rows) + top[group]
        dy = (v + 0.5)[:, None] - q[group, :, 1]
        half2 = rho[group] ** 2 - dy * dy
        hit = half2 > 0
        half = np.sqrt(np.where(hit, half2, 0.0))
        lo = np.where(hit, q[group, :, 0] - half, np.inf).min(axis=1)
        hi = np.where(hit, q[group, :, 0] + half, -np.inf).max(axis=1)
        some = np.isfinite(lo)
        a = np.ceil(np.where(some, lo, 0.0) - 0.5).astype(np.int64)
        b = np.floor(np.where(some, hi, -1.0) - 0.5).astype(np.int64) + 1
        keep = b > a
        group, v, a, b = group[keep], v[keep], a[keep], b[keep]
        starts = np.searchsorted(group, np.arange(n_groups + 1))
        return cls(v, a, b, starts, n_groups)

    def subset(self, groups: np.ndarray) -> Silhouettes:
        """The silhouettes ``groups`` only (in that order)."""
        lo, hi = self.starts[groups], self.starts[groups + 1]
        runs = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)])
        starts = np.concatenate([[0], np.cumsum(hi - lo)])
        return Silhouettes(self.v[runs], self.a[runs], self.b[runs], starts, len(groups))

    @property
    def owner(self) -> np.ndarray:
        """The group of every run."""
        return np.repeat(np.arange(self.groups), np.diff(self.starts))

    @staticmethod
    def running(maps: np.ndarray) -> np.ndarray:
        """Row-wise running sums of ``maps`` (M x h x w) with a leading 0 (M x h x w+1): what
        :meth:`sums` takes, computed once for all its calls on the same maps."""
        m, h, w = maps.shape
        cum = np.zeros((m, h, w + 1), dtype=np.float32)
        np.cumsum(maps, axis=2, out=cum[:, :, 1:])
        return cum

    def sums(self, running: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Sum of each of the maps whose :meth:`running` sums are ``running`` over every
        silhouette moved by each of its offsets (O x groups x 2 px): M x O x groups."""
        m, h, w1 = running.shape
        w = w1 - 1
        flat = running.reshape(m, -1)
        shift = offsets[:, self.owner]  # O x runs x 2
        v = np.clip(self.v + shift[..., 1], 0, h - 1) * (w + 1)
        a = np.clip(self.a + shift[..., 0], 0, w) + v
        b = np.clip(self.b + shift[..., 0], 0, w) + v
        runs = flat[:, b] - flat[:, a]  # M x O x runs
        out = np.zeros((m, len(offsets), self.groups))
        filled = np.flatnonzero(np.diff(self.starts) > 0)
        out[:, :, filled] = np.add.reduceat(runs, self.starts[filled], axis=2)
        return out

    def paint(self, canvas: np.ndarray, group: int, offset: np.ndarray, value: int) -> None:
        """Set the pixels of silhouette ``group`` moved by ``offset`` (px) to ``value``."""
        h, w = canvas.shape
        lo, hi = self.starts[group], self.starts[group + 1]
        v = self.v[lo:hi] + offset[1]
        a = np.clip(self.a[lo:hi] + offset[0], 0, w)
        b = np.clip(self.b[lo:hi] + offset[0], 0, w)
        keep = (v >= 0) & (v < h) & (b > a)
        v, a, b = v[keep], a[keep], b[keep]
        length = b - a
        first = np.repeat(v * w + a - np.cumsum(length) + length, length)
        canvas.reshape(-1)[first + np.arange(length.sum())] = value


#: Feature transform of per-channel log reflectances (B, G, R): log b/g, log r/g, mean log.
_FEATURES = np.array([[1.0, -1.0, 0.0], [0.0, -1.0, 1.0], [1 / 3, 1 / 3, 1 / 3]])
#: Spread (standard deviation) of each class beyond the sensor noise: in log-chroma for the
#: board's wood and the white pieces (``CHROMA``) and for the black ones (dark, so less sure of
#: their hue: ``BLACK_CHROMA``), and in log-lightness against the local board (``LIGHTNESS``:
#: the bells' shading, the pieces' shadows).
CHROMA = 0.045
BLACK_CHROMA = 0.12
LIGHTNESS = 0.35
#: Log-lightness of the board's wood against the local estimate (shadows make it darker).
BOARD_LIGHTNESS = -0.1
#: A pixel further than this (Mahalanobis) from every class is something else (a hand...).
OUTLIER_DISTANCE = 4.5
#: The sensor's noise is at least this (grey levels; a clipped paper would say less).
NOISE_FLOOR = 1.0
#: Human skin, from very light to very dark (BGR against white paper): its log-chroma lies near
#: the segment between these two (a generic prior about hands, not about the game).
SKIN_TONES = ((185.0, 205.0, 240.0), (55.0, 80.0, 125.0))
#: Spread of skin's log-lightness (a hand is rounded: its shading varies more than a bell's).
SKIN_LIGHTNESS = 0.45


@dataclass(frozen=True, eq=False)
class Evidence:
    """Per pixel of a :class:`TopDown` image (h x w float32 maps): the log-likelihood of every
    class of :data:`CLASSES`, each against its own Gaussian model (``loglik``). ``features``
    are the pixels' log-chroma (2) and log-lightness against the local board (h x w x 3)."""

    loglik: dict[str, np.ndarray]
    features: np.ndarray

    #: What a pixel of the board's top face may show: its wood and grid lines, the mat's paper
    #: beyond its edge, a piece, or a hand over it.
    CLASSES = ("board", "grid", "paper", *COLOURS, "skin")
    #: log-likelihood of "something else" (a flat floor: beyond OUTLIER_DISTANCE of every class)
    OTHER = -0.5 * OUTLIER_DISTANCE**2

    def ratio(self, colour: str, cap: float) -> np.ndarray:
        """Log-likelihood ratio of a ``colour`` piece against the best other explanation
        (the board, the paper, the other colour or something else), within +-``cap``. Skin is
        left out: a piece's shaded side can be as close to skin as to its own colour, and a
        hand is found by its shape too (:meth:`foreign`)."""
        best = np.full_like(self.loglik[colour], self.OTHER)
        for name, ll in self.loglik.items():
            if name not in (colour, "skin"):
                np.maximum(best, ll, out=best)
        return np.clip(self.loglik[colour] - best, -cap, cap)

    def foreign(self, lines: np.ndarray) -> np.ndarray:
        """Pixels that look like skin, like nothing the board holds, or like its grid lines
        away from them (``lines``: bool h x w, where the grid lines may show): bool h x w."""
        best = np.full_like(self.loglik["board"], -np.inf)
        for name, ll in self.loglik.items():
            if name not in ("skin", "grid"):
                np.maximum(best, ll, out=best)
        strange = np.maximum(self.loglik["skin"], np.float32(self.OTHER))
        return (strange >= best) & (strange >= self.loglik["grid"]) | (
            (self.loglik["grid"] >= best) & ~lines
        )

    @classmethod
    def of(
        cls,
        image: np.ndarray,
        ref: Reference,
        palette: Palette,
        margin_px: np.ndarray,
        on_board: np.ndarray,
    ) -> Evidence:
        """The evidence of a top-down ``image`` (uint8 BGR) lit as ``ref`` measured; the board's
        wood is measured on the pixels ``margin_px`` (K x 2, its frame around the squares);
        ``on_board`` is 1 inside the board's outline, where no paper can show, 0 outside."""
        black = np.minimum(ref.black, 0.5 * ref.white)
        span = np.maximum(ref.white - black, 1.0)
        level = np.maximum(np.arange(256.0)[:, None] - black, 0.5)
        logs = cv2.LUT(image, np.log(level / span).astype(np.float32)[None])
        feats = cv2.transform(logs, _FEATURES)
        # variance of a log-chroma from the sensor noise: twice that of one channel's log
        noise = 2.0 * (max(ref.noise * span[1], NOISE_FLOOR) / level[:, 1]) ** 2
        var = cv2.LUT(image[..., 1], noise.astype(np.float32))
        board = np.median(feats[margin_px[:, 1], margin_px[:, 0]], axis=0)
        la, lb = feats[..., 0], feats[..., 1]
        light = feats[..., 2] - _local_light(la, lb, feats[..., 2], board, palette)
        feats[..., 2] = light
        wood = 1.0 / (var + np.float32(CHROMA**2))
        dark = 1.0 / (var + np.float32(BLACK_CHROMA**2))
        # a log-lightness averages three channels' logs: a sixth of a log-chroma's variance
        shade = 1.0 / (var * np.float32(1 / 6) + np.float32(LIGHTNESS**2))

        def centre(name: str) -> tuple[float, float, float]:
            return (*(board[:2] + palette.chroma[name]), palette.lightness[name])

        models = {
            "board": ((board[0], board[1], BOARD_LIGHTNESS), wood),
            "grid": (centre("grid"), wood),
            "paper": (centre("paper"), wood),
            "white": (centre("white"), wood),
            "black": (centre("black"), dark),
        }
        loglik = {}
        for name, (mean, precision) in models.items():
            da, db, dl = la - np.float32(mean[0]), lb - np.float32(mean[1]), light - mean[2]
            loglik[name] = -0.5 * ((da * da + db * db) * precision + dl * dl * shade)
        # the black model's wider chroma costs its normalisation
        loglik["black"] += np.log(dark / wood)
        skin = [np.array(centre(name)) for name in ("skin", "dark skin")]
        loglik["skin"] = _skin_loglik((la, lb, light), wood, skin)
        loglik["paper"] -= on_board * np.float32(1e4)
        return cls(loglik, feats)


def _skin_loglik(
    feats: tuple[np.ndarray, np.ndarray, np.ndarray],
    precision: np.ndarray,
    ends: list[np.ndarray],
) -> np.ndarray:
    """Log-likelihood of skin: Gaussian around the segment between ``ends``, the (log-chroma,
    log-lightness) of the lightest and the darkest skin tones (chroma with the wood's
    ``precision``, lightness with the hand's shading, SKIN_LIGHTNESS)."""
    step = ends[1] - ends[0]
    weights = np.array([1.0, 1.0, (CHROMA / SKIN_LIGHTNESS) ** 2])  # metric along the segment
    t = np.zeros_like(feats[0])
    d = [f - np.float32(e) for f, e in zip(feats, ends[0], strict=True)]
    for j in range(3):
        t += d[j] * np.float32(step[j] * weights[j])
    t = np.clip(t / np.float32(step @ (step * weights)), 0, 1)
    da, db, dl = (d[j] - t * np.float32(step[j]) for j in range(3))
    d2 = (da * da + db * db) * precision + dl * dl * np.float32(1 / SKIN_LIGHTNESS**2)
    return -0.5 * d2 - np.float32(np.log(SKIN_LIGHTNESS / LIGHTNESS))


def _local_light(
    la: np.ndarray, lb: np.ndarray, light: np.ndarray, board: np.ndarray, palette: Palette
) -> np.ndarray:
    """The board's log-lightness around every pixel (h x w): a normalised convolution of the
    pixels that look like lit wood (closer to its chroma, ``board``, than to a white piece's,
    not dark)."""
    h, w = light.shape
    towards = palette.chroma["white"]
    middle = (board[:2] + towards / 2) @ towards
    side = cv2.addWeighted(la, float(towards[0]), lb, float(towards[1]), -float(middle))
    wood = ((side < 0) & (light > board[2] - 0.9)).astype(np.float32)
    small = (max(2, w // 4), max(2, h // 4))

    def blur(x: np.ndarray) -> np.ndarray:
        return cv2.GaussianBlur(cv2.resize(x, small, interpolation=cv2.INTER_AREA), (0, 0), 3)

    weight = blur(wood) + 1e-3
    local = (blur(wood * light) + 1e-3 * board[2]) / weight
    return cv2.resize(local, (w, h))


class GobbletReader(Reader):
    """Reads the 16 squares: empty, or the visible top's colour and size.

    Options: ``px_per_mm`` (resolution of the top-down image, 0.8), ``search_mm`` (how far off
    its square's centre a piece may sit, 5.0), ``temperature`` (evidence nats per unit of
    log-probability: pixels are not independent, 12.0).
    """

    games = ("gobblet",)

    #: Cap on one pixel's evidence (nats): a glint or a speck cannot outvote a region.
    CAP = 6.0
    #: How far (mm) beyond the board's outline the top-down image reaches (leaning pieces).
    REACH_MM = 12.0
    #: A hand is found as blobs of foreign pixels: dense over BLOB_MM squares, and at least
    #: HAND_MM2 in area (a fingertip is some 17 mm wide).
    BLOB_MM = 6.0
    HAND_MM2 = 200.0
    #: A blob with at least this share of it on the pieces the reading paints lies within them:
    #: their own shading, a hand only beside a blob that reaches beyond (hands come in from
    #: outside the board, over its wood).
    WITHIN_PIECES = 0.75
    #: A square is hidden when at least HIDE_AT of its middle (CORE of its size) is under it.
    CORE = 0.85
    HIDE_AT = 0.05
    #: A pixel is piece-like when its evidence for a colour is at least PIECE_LIKE nats, and
    #: explained when a piece of that colour in the reading comes within SLACK_MM of it.
    PIECE_LIKE = 1.0
    SLACK_MM = 2.5
    #: A piece fitted more than STRETCH_MM beyond ``search_mm`` off its square's centre (a
    #: pixel of fit and pose error) is stretched by a hand within NEAR_MM of it (a fingertip's
    #: width: a finger the next stretched piece explains may lie between).
    STRETCH_MM = 1.0
    NEAR_MM = 17.0
    #: Width (mm) of the band about each grid line where the line's dark colour is expected.
    LINE_MM = 5.0
    #: A grid line is there when it is darker than the wood beside it (BESIDE px across) by
    #: at least LINE_KEPT of the contrast the geometry's colours give.
    BESIDE = 3.0
    LINE_KEPT = 0.35
    #: Lost lines make a hand on their own (no foreign blob) from this many sides on.
    LOST_SIDES = 2
    #: Pixels of a colour :meth:`calibrate` needs before it learns from them.
    CALIBRATE_PX = 40

    def __init__(self, geometry: BoardGeometry, **options: Any) -> None:
        super().__init__(geometry, **options)
        self.px_per_mm = float(options.get("px_per_mm", 0.8))
        self.temperature = float(options.get("temperature", 12.0))
        search_mm = float(options.get("search_mm", 5))
        self._stretch_px = (search_mm + self.STRETCH_MM) * self.px_per_mm
        reach = max(1, round(search_mm * self.px_per_mm / 2))
        coarse = np.arange(-reach, reach + 1) * 2
        self._coarse = np.array([(x, y) for y in coarse for x in coarse])
        fine = np.arange(-1, 2)
        self._fine = np.array([(x, y) for y in fine for x in fine])
        outline = np.asarray(geometry.extra["board"]["outline"], dtype=np.float64)
        lo, hi = outline.min(axis=0) - self.REACH_MM, outline.max(axis=0) + self.REACH_MM
        size = np.ceil((hi - lo) * self.px_per_mm).astype(int)
        self._area = TopDown(
            (float(lo[0]), float(lo[1])), (int(size[0]), int(size[1])), self.px_per_mm
        )
        self._mat = MatReference(geometry)
        self._height = board_height(geometry)
        self._names = geometry.cell_names
        self._centres = self._area.to_px([c.center for c in geometry.cells])
        margin = np.floor(self._area.to_px(board_margin(geometry, 2.0, inset_mm=3.0)))
        self._margin_px = margin.astype(np.int64)
        w, h = self._area.size
        self._on_board = np.zeros((h, w), dtype=np.float32)
        corners = np.round(self._area.to_px(outline) * 16 - 8).astype(np.int32)
        cv2.fillPoly(self._on_board, [corners], 1.0, cv2.LINE_8, 4)
        self._cores = [self._raster(c.polygon, self.CORE) for c in geometry.cells]
        self._squares = [self._raster(c.polygon, 1.0) for c in geometry.cells]
        self._inside = cv2.erode(self._on_board, np.ones((3, 3), np.uint8))
        self._lines = self._line_mask(geometry)
        self._sides, self._side_points = self._grid_sides(geometry)
        grid, wood = (hex_bgr(geometry.extra["look"][k]).mean() for k in ("grid", "board"))
        self._line_depth = abs(float(np.log(wood / grid)))
        sizes = sorted(geometry.pieces["sizes"], key=int)
        specs = [geometry.pieces["sizes"][s] for s in sizes]
        self._bells = np.array([(d["diameter"] / 2 * self.px_per_mm, d["height"]) for d in specs])
        self._profile = np.asarray(geometry.pieces.get("profile", BELL_PROFILE), dtype=np.float64)
        self._profile = _dense_profile(self._profile)
        codec = new_game("gobblet")
        self.classes: tuple[Content, ...] = (
            None,
            *(codec.cell_from_json({"color": c, "size": int(s)}) for c in COLOURS for s in sizes),
        )
        self.palette = Palette.from_look(geometry.extra["look"])

    def _line_mask(self, geometry: BoardGeometry) -> np.ndarray:
        """Where the board's grid lines may show in the top-down image (bool h x w): every
        square's outline, widened by LINE_MM (the lines' width and the pose's error)."""
        w, h = self._area.size
        mask = np.zeros((h, w), dtype=np.uint8)
        width = max(1, round(self.LINE_MM * self.px_per_mm))
        for cell in geometry.cells:
            px = np.round(self._area.to_px(cell.polygon) * 16 - 8).astype(np.int32)
            cv2.polylines(mask, [px], True, 1, width, cv2.LINE_8, 4)
        return mask.astype(bool)

    def _grid_sides(
        self, geometry: BoardGeometry
    ) -> tuple[list[tuple[np.ndarray, tuple[str, ...]]], tuple[np.ndarray, np.ndarray]]:
        """Every side shared by squares (or a square and the board's frame) with the squares
        it borders, and points along it (every 4 mm, not near its ends; sides x K, flattened,
        in top-down px) with the unit normal at each (px)."""
        found: dict[tuple[tuple[float, float], ...], list[str]] = {}
        for cell in geometry.cells:
            poly = [tuple(map(float, p)) for p in cell.polygon]
            for a, b in zip(poly, poly[1:] + poly[:1], strict=True):
                found.setdefault(tuple(sorted((a, b))), []).append(cell.name)
        sides, points, normals = [], [], []
        for (a, b), names in found.items():
            a_px, b_px = self._area.to_px([a, b])
            length = float(np.linalg.norm(b_px - a_px))
            t = np.linspace(0.15, 0.85, SIDE_POINTS)[:, None]
            direction = (b_px - a_px) / length
            sides.append((np.array([a, b]), tuple(names)))
            points.append(a_px + t * (b_px - a_px))
            normals.append(np.repeat([[-direction[1], direction[0]]], SIDE_POINTS, axis=0))
        return sides, (np.concatenate(points), np.concatenate(normals))

    # ----------------------------------------------------------------- reading
    def _raster(self, polygon: Any, scale: float) -> np.ndarray:
        """Flat indices of the top-down pixels inside ``polygon`` (mm) shrunk by ``scale``
        about its centre."""
        w, h = self._area.size
        poly = np.asarray(polygon, dtype=np.float64)
        centre = poly.mean(axis=0)
        px = self._area.to_px(centre + (poly - centre) * scale)
        mask = np.zeros((h, w), dtype=np.uint8)
        cv2.fillPoly(mask, [np.round(px * 16 - 8).astype(np.int32)], 1, cv2.LINE_8, 4)
        return np.flatnonzero(mask)

    def read(self, frame: np.ndarray, pose: BoardPose) -> Observation:
        """The observation of ``frame``: every square's top piece, with probabilities; squares
        a hand hides are left out."""
        logits, (evidence, sil, maps, labels, places) = self._analyse(frame, pose)
        hand = self._hand(evidence, maps, labels)
        hidden = set()
        if hand.any():
            share = np.array([hand.flat[core].mean() for core in self._cores])
            hidden = {n for n, s in zip(self._names, share, strict=True) if s >= self.HIDE_AT}
            hidden.update(self._stretched(logits, places, sil, hand))
        lost = self._lost_lines(evidence.features[..., 2], labels)
        if lost.sum() < self.LOST_SIDES and not hand.any():
            lost[:] = False  # one faint line alone is no hand
        hidden.update(n for side in np.flatnonzero(lost) for n in self._sides[side][1])
        probs = softmax(logits / self.temperature)
        occluded = bool(hand.any()) or bool(lost.any())
        return observation(self.game, self._names, self.classes, probs, hidden, occluded=occluded)

    def _stretched(
        self, logits: np.ndarray, places: np.ndarray, sil: Silhouettes, hand: np.ndarray
    ) -> set[str]:
        """Squares whose piece the fit pulled further off its square's centre than a placed
        piece sits (STRETCH_MM beyond ``search_mm``), within NEAR_MM of the ``hand``: what drew
        it there is the hand, which holds pixels of a pale or dark piece's colour (a finger
        beside a piece makes it look bigger and off-centre), so its size cannot be told."""
        n_sizes = len(self._bells)
        colour, size = np.divmod(logits.argmax(axis=1) - 1, n_sizes)
        group = np.arange(len(self._names)) * n_sizes + size
        place = places[colour, group]
        far = np.flatnonzero((colour >= 0) & (np.linalg.norm(place, axis=1) >= self._stretch_px))
        if not far.size:
            return set()
        near = max(1, round(self.NEAR_MM * self.px_per_mm))
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * near + 1, 2 * near + 1))
        close = cv2.dilate(hand.astype(np.uint8), kernel)
        found = set()
        for cell in far:
            mask = np.zeros_like(close)
            sil.paint(mask, group[cell], place[cell], 1)
            if (mask & close).any():
                found.add(self._names[cell])
        return found

    def _lost_lines(self, light: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Per side of a square (see ``_sides``), whether its grid line has vanished where no
        piece of the reading stands: something of the wood's colour (a hand) lies over it.
        ``light`` is the top-down log-lightness against the local board."""
        points, across = self._side_points
        free = cv2.dilate((labels >= 0).astype(np.uint8), np.ones((5, 5), np.uint8)) == 0
        h, w = light.shape

        def at(pts: np.ndarray) -> np.ndarray:
            return sample_image(light, pts).reshape(len(self._sides), -1)

        line = np.minimum.reduce([at(points + k * across) for k in (-1.0, 0.0, 1.0)])
        # the lighter side: a piece's shadow may darken the other
        beside = np.maximum(at(points + self.BESIDE * across), at(points - self.BESIDE * across))
        u = np.clip(points[:, 0].astype(np.int64), 0, w - 1)
        v = np.clip(points[:, 1].astype(np.int64), 0, h - 1)
        ok = free[v, u].reshape(len(self._sides), -1)
        depth = np.sort(np.where(ok, beside - line, np.inf), axis=1)  # free points first
        count = ok.sum(axis=1)
        counted = count >= 3
        rows = np.arange(len(depth))
        middle = (depth[rows, np.maximum(count - 1, 0) // 2] + depth[rows, count // 2]) / 2
        # a dim or blurred frame shows every line fainter: compare with its typical side too
        typical = float(np.median(middle[counted])) if counted.any() else 0.0
        return counted & (middle < min(self.LINE_KEPT * self._line_depth, 0.5 * typical))

    def _unexplained(self, maps: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Pixels that look like a piece where the reading puts none of that colour (bool
        h x w): a dark hand or sleeve looks like a black piece, a pale one like a white
        piece, but no bell explains its shape."""
        near = max(1, round(self.SLACK_MM * self.px_per_mm))
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * near + 1, 2 * near + 1))
        out = np.zeros(labels.shape, dtype=bool)
        for c, ratio in enumerate(maps):
            painted = cv2.dilate((labels == c).astype(np.uint8), kernel).astype(bool)
            out |= (ratio >= self.PIECE_LIKE) & ~painted
        return out

    def _hand(self, evidence: Evidence, maps: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Where a hand (or any foreign thing) is over the board (bool h x w): large enough
        blobs of foreign pixels (skin, nothing the board holds, pieces no bell explains), if
        one of them reaches beyond the pieces the reading paints (``labels``): a hand comes in
        over the board, so a blob within pieces alone is their own shading (a lit head, a
        shaded side), not a hand."""
        foreign = evidence.foreign(self._lines) | self._unexplained(maps, labels)
        size = max(3, round(self.BLOB_MM * self.px_per_mm)) | 1
        dense = cv2.blur(foreign.astype(np.float32) * self._inside, (size, size)) > 0.5
        n, blobs, stats, _ = cv2.connectedComponentsWithStats(dense.astype(np.uint8), 4)
        area = stats[:, cv2.CC_STAT_AREA]
        big = np.flatnonzero(area >= self.HAND_MM2 * self.px_per_mm**2)
        big = big[big > 0]
        if not big.size:
            return np.zeros(blobs.shape, dtype=bool)
        on_pieces = np.bincount(blobs[labels >= 0], minlength=n)
        if not (on_pieces[big] < self.WITHIN_PIECES * area[big]).any():
            big = big[:0]
        return np.isin(blobs, big)

    def _analyse(self, frame: np.ndarray, pose: BoardPose) -> tuple[np.ndarray, Any]:
        """Per square, the evidence (nats) for every class (squares x classes), and what it
        came from: the pixels' :class:`Evidence`, the :class:`Silhouettes`, the per-colour
        ratio maps, the image as the best reading paints it (see :meth:`_paint`) and where every
        silhouette's piece sits (colours x groups x 2 px, see :meth:`_fit`)."""
        ref = self._mat.measure(frame, pose)
        lens = estimate_intrinsics(pose.homography, pose.image_size)
        cx, cy, cz = pose.camera_centre(lens)
        surface = pose.lifted(self._height, lens)
        cz -= self._height
        image = self._area.sample(frame, surface)
        evidence = Evidence.of(image, ref, self.palette, self._margin_px, self._on_board)
        maps = np.stack([evidence.ratio(c, self.CAP) for c in COLOURS])
        under = self._area.to_px([[cx, cy]])[0]
        sil = Silhouettes.build(self._centres, (under[0], under[1], cz), self._bells, self._profile)
        n_cells, n_sizes = len(self._names), len(self._bells)
        scores, places = self._fit(maps, sil)
        per_cell = scores.reshape(len(COLOURS), n_cells, n_sizes).transpose(1, 0, 2)
        logits = np.concatenate([np.zeros((n_cells, 1)), per_cell.reshape(n_cells, -1)], axis=1)
        labels = self._paint(logits, places, sil, under)
        return logits, (evidence, sil, maps, labels, places)

    def _fit(self, maps: np.ndarray, sil: Silhouettes) -> tuple[np.ndarray, np.ndarray]:
        """Every silhouette's best evidence (colours x groups) where the piece really sits, and
        that place (colours x groups x 2 px): the best hypothesis at the square's centre places
        it (a coarse search), then every hypothesis is refined around that place."""
        n_cells, n_sizes = len(self._names), len(self._bells)
        running = Silhouettes.running(maps)
        centred = sil.sums(running, np.zeros((1, sil.groups, 2), dtype=np.int64))[:, 0]
        per_cell = centred.reshape(len(COLOURS), n_cells, n_sizes)
        flat = per_cell.transpose(1, 0, 2).reshape(n_cells, -1).argmax(axis=1)
        colour, size = np.divmod(flat, n_sizes)
        best = np.arange(n_cells) * n_sizes + size
        offsets = np.broadcast_to(self._coarse[:, None, :], (len(self._coarse), n_cells, 2))
        coarse = sil.subset(best).sums(running, offsets)[colour, :, np.arange(n_cells)]
        place = self._coarse[coarse.argmax(axis=1)]  # cells x 2
        cell_of_group = np.repeat(np.arange(n_cells), n_sizes)
        offsets = place[cell_of_group][None] + self._fine[:, None, :]
        sums = sil.sums(running, offsets)
        pick = sums.argmax(axis=1)  # colours x groups
        best = np.take_along_axis(sums, pick[:, None], axis=1)[:, 0]
        return best, offsets[pick, np.arange(sil.groups)]

    def _paint(
        self, logits: np.ndarray, places: np.ndarray, sil: Silhouettes, under: np.ndarray
    ) -> np.ndarray:
        """The image as the best reading explains it (h x w int8): -1 where no piece is, else
        the index in :data:`COLOURS` of the piece in front."""
        w, h = self._area.size
        labels = np.full((h, w), -1, dtype=np.int8)
        n_sizes = len(self._bells)
        best = logits.argmax(axis=1)
        far_first = np.argsort(-np.linalg.norm(self._centres - under, axis=1))
        for cell in far_first:
            if best[cell] > 0:
                colour, size = divmod(int(best[cell]) - 1, n_sizes)
                group = cell * n_sizes + size
                sil.paint(labels, group, places[colour, group], colour)
        return labels

    # ----------------------------------------------------------------- calibration
    def calibrate(self, frame: np.ndarray, pose: BoardPose, known: Mapping[str, Content]) -> None:
        """Learn the pieces' colours from squares whose top is known: the pixels the reading
        paints with a known square's colour, where the reading agrees with ``known``, move
        that colour's log-chroma and log-lightness (against the wood) halfway towards their
        medians (needs ``CALIBRATE_PX`` pixels; hands are left out)."""
        logits, (evidence, _, maps, labels, _) = self._analyse(frame, pose)
        hand = self._hand(evidence, maps, labels)
        best = logits.argmax(axis=1)
        w, h = self._area.size
        agreed = np.zeros((h, w), dtype=bool)
        for i, name in enumerate(self._names):
            if name in known and known[name] is not None and self.classes[best[i]] == known[name]:
                agreed.flat[self._squares[i]] = True
        board = np.median(evidence.features[self._margin_px[:, 1], self._margin_px[:, 0]], axis=0)
        for c, colour in enumerate(COLOURS):
            pick = agreed & (labels == c) & ~hand & (maps[c] > 0)
            if pick.sum() < self.CALIBRATE_PX:
                continue
            feats = evidence.features[pick]
            chroma = np.median(feats[:, :2], axis=0) - board[:2]
            light = float(np.median(feats[:, 2]))
            self.palette.chroma[colour] = 0.5 * (self.palette.chroma[colour] + chroma)
            self.palette.lightness[colour] = 0.5 * (self.palette.lightness[colour] + light)


def _dense_profile(profile: np.ndarray, slices: int = 6) -> np.ndarray:
    """The profile resampled at ``slices`` evenly spaced heights plus its own corners."""
    t = np.unique(np.concatenate([np.linspace(0.0, 1.0, slices), profile[:, 0]]))
    return np.column_stack([t, np.interp(t, profile[:, 0], profile[:, 1])])
