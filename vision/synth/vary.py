"""One scene's draws from a :class:`~.domain.Domain`: the colours, artwork, light and camera that
the renderer uses instead of the nominal ones.

Drawn from a random stream of its own, so that a scene's other draws (camera, position, hand,
nominal look) stay what they are without it.
"""

from __future__ import annotations

import colorsys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..geometry import BoardGeometry
from .domain import CAREFUL_OFFSET_MM, Domain, Range
from .photo import Response
from .textures import rgb

#: ``look`` entries that are not colours (or that name colours of artwork kept as printed).
_NOT_COLOURS = frozenset({"glossy", "start_cells", "score_track"})


#: The most a stained piece's lightness is of its board's wood (before a +-15 % jitter).
DARK_SIDE = 0.55


def _lightness(hex_color: str) -> float:
    """HLS lightness (0..1) of ``hex_color``."""
    r, g, b = (c / 255 for c in rgb(hex_color))
    return colorsys.rgb_to_hls(r, g, b)[1]


def jitter(hex_color: str, light: float, hue_deg: float, sat: float) -> str:
    """``hex_color`` with its lightness scaled by ``light``, hue turned by ``hue_deg`` and
    saturation scaled by ``sat``."""
    r, g, b = (c / 255 for c in rgb(hex_color))
    hue, lum, s = colorsys.rgb_to_hls(r, g, b)
    hue = (hue + hue_deg / 360) % 1.0
    r, g, b = colorsys.hls_to_rgb(hue, min(1.0, lum * light), min(1.0, s * sat))
    return "#" + "".join(f"{round(255 * c):02x}" for c in (r, g, b))


def tint(hex_color: str, rng: np.random.Generator, chroma: Range) -> str:
    """``hex_color`` with a random hue added at a chroma (largest channel less smallest, as a
    fraction of 255) drawn from ``chroma``: a grey takes that hue, a colour shifts a little."""
    turn = rng.uniform(0.0, 2.0 * np.pi)
    hue = np.cos(turn - np.array([0.0, 2.0, 4.0]) * np.pi / 3.0)  # R, G, B: sums to 0
    offset = hue / (hue.max() - hue.min()) * rng.uniform(*chroma) * 255.0
    out = np.clip(np.array(rgb(hex_color), float) + offset, 0.0, 255.0)
    return "#" + "".join(f"{round(c):02x}" for c in out)


def _colours_of(look: dict[str, Any], recolour: Callable[[str], str]) -> dict[str, Any]:
    """A copy of ``look`` with ``recolour`` applied to every colour (one call per colour, in
    the look's order)."""
    out: dict[str, Any] = {}
    for key, value in look.items():
        if key in _NOT_COLOURS:
            out[key] = value
        elif isinstance(value, dict):
            out[key] = {k: recolour(v) for k, v in value.items()}
        else:
            out[key] = recolour(value)
    return out


def jitter_look(look: dict[str, Any], domain: Domain, rng: np.random.Generator) -> dict[str, Any]:
    """A copy of a geometry's ``look`` with every colour drawn around its nominal value."""

    def draw(color: str) -> str:
        return jitter(
            color,
            rng.uniform(*domain.lightness),
            rng.uniform(*domain.hue_deg),
            rng.uniform(*domain.saturation),
        )

    return _colours_of(look, draw)


#: The kind of set (:attr:`Variation.piece_set`) of a scene drawn without a variation: the
#: look's colours, feet that do not fade.
UNVARIED_SET = "plain-painted"


@dataclass(frozen=True, eq=False)
class Variation:
    """The drawn colours, artwork, light and camera of one scene (see :meth:`draw`)."""

    domain: Domain
    #: per-piece draws (tone spread, grain), in drawing order
    rng: np.random.Generator
    look: dict[str, Any]
    wood: str | None
    grain: float
    grain_seed: int
    #: seed of every piece's own stream (:meth:`piece_rng`)
    piece_seed: int
    bell: str
    #: the ``turned`` profile's foot height, neck and head radius (fractions)
    turned: tuple[float, float, float]
    coverage: float | None
    rounding: float
    dot_mm: float
    label_scale: float
    bonus_light: float
    bevel: float
    glare: float
    shininess: float
    #: the glare is a broad reflection (``Domain.broad_glare``: a window or the sky on glossy
    #: pieces), its Phong exponent drawn from ``broad_shininess``
    broad_glare: bool
    haze: float
    shadow_dark: float
    shadow_soft: float
    #: ambient share of the light on solids (``Painter``); the lamp gives the rest
    ambient: float
    response: Response
    #: a second hand, a hand beyond the board (only its arm over it), a ``phone`` or ``cup``
    #: beside the board ("": none), and whether that reaches over the mat
    two_hands: bool
    arm_only: bool
    distractor: str
    over_mat: bool
    #: lightness of a dark Gobblet piece's head as a factor of its body (1: one colour)
    head: float = 1.0
    #: a wooden Gobblet set (``Domain.wooden_sets``)
    wooden_set: bool = False
    #: the glossy ball a wooden set's dark pieces wear (``Domain.painted_heads``), or None
    head_color: str | None = None
    #: solids lit relative to the board (``Domain.relit``)
    relit: bool = False
    #: Gobblet pieces' height as a factor of the geometry's
    piece_height: float = 1.0
    #: standard deviation (mm, each axis) of Gobblet pieces' offsets from their cells' centres
    piece_offset_mm: float = CAREFUL_OFFSET_MM
    #: angular radius (degrees) of the lamp the pieces' shadows come from (``Domain.area_shadows``);
    #: 0: a point lamp, its shadows blurred all round by ``shadow_soft``
    lamp_deg: float = 0.0
    #: how much of a Gobblet piece's base radius (a fraction, from the rim in) fades to the
    #: board's colour (``Domain.foot_fades``); 0: none
    foot_fade: float = 0.0

    @classmethod
    def draw(cls, domain: Domain, geometry: BoardGeometry, rng: np.random.Generator) -> Variation:
        """Every per-scene parameter of ``domain`` for a board of ``geometry``."""
        look = jitter_look(geometry.extra["look"], domain, rng)
        wood = None
        if domain.wood_tones and geometry.game == "gobblet":
            tone = domain.wood_tones[int(rng.integers(len(domain.wood_tones)))]
            wood = jitter(tone, rng.uniform(0.92, 1.08), rng.uniform(-4, 4), 1.0)
            look["grid"] = jitter(wood, rng.uniform(0.45, 0.7), 0.0, 1.0)  # grooves, darker
        coverage = float(rng.uniform(*domain.motif_coverage)) if domain.motif_coverage else None
        return (
            cls(
                domain=domain,
                rng=np.random.default_rng(rng.integers(2**63)),
                look=look,
                wood=wood,
                grain=float(rng.uniform(*domain.grain)),
                grain_seed=int(rng.integers(2**31)),
                piece_seed=int(rng.integers(2**31)),
                bell=domain.bell_shapes[int(rng.integers(len(domain.bell_shapes)))],
                turned=_turned(domain, rng),
                coverage=coverage,
                rounding=float(rng.uniform(*domain.motif_rounding)),
                dot_mm=float(rng.uniform(*domain.dot_mm)),
                label_scale=float(rng.uniform(*domain.label_scale)),
                bonus_light=float(rng.uniform(*domain.bonus_light)),
                bevel=float(rng.uniform(*domain.bevel)),
                glare=float(rng.uniform(*domain.glare)),
                shininess=float(
                    rng.uniform(
                        *(
                            domain.broad_shininess
                            if (broad := bool(rng.random() < domain.broad_glare))
                            else domain.shininess
                        )
                    )
                ),
                broad_glare=broad,
                haze=float(rng.uniform(*domain.haze)),
                shadow_dark=float(rng.uniform(*domain.shadow_dark)),
                shadow_soft=float(rng.uniform(*domain.shadow_soft)),
                response=Response.random(domain, rng),
                two_hands=bool(rng.random() < domain.two_hands),
                arm_only=bool(rng.random() < domain.arm_only),
                distractor=str(rng.choice(["phone", "cup"]))
                if rng.random() < domain.distractor
                else "",
                over_mat=bool(rng.random() < domain.distractor_over_mat),
                ambient=_ambient(domain, rng),
            )
            ._wooden(rng)
            ._proportions(geometry, rng)
            ._painted(rng)
            ._relit(rng)
            ._tinted(rng)
            ._area_lamp(rng)
            ._faded_feet(geometry, rng)
        )

    def _wooden(self, rng: np.random.Generator) -> Variation:
        """This variation, or (by the domain's ``wooden_sets`` chance, on a wooden Gobblet board)
        its wooden set: light pieces of nearly the board's wood, dark ones stained, with their
        heads. Drawn last, and only for such boards: every other draw stays as it was."""
        domain = self.domain
        if self.wood is None or not domain.wooden_sets or rng.random() >= domain.wooden_sets:
            return self
        light = jitter(
            self.wood, rng.uniform(0.9, 1.08), rng.uniform(-5, 5), rng.uniform(0.85, 1.1)
        )
        stain = domain.stains[int(rng.integers(len(domain.stains)))]
        # a stain on a dark board is darker still: the dark pieces stay the dark side
        deeper = min(1.0, DARK_SIDE * _lightness(self.wood) / _lightness(stain))
        dark = jitter(stain, deeper * rng.uniform(0.85, 1.15), rng.uniform(-5, 5), 1.0)
        pieces = {**self.look["pieces"], "white": light, "black": dark}
        return replace(
            self,
            look={**self.look, "pieces": pieces},
            head=float(rng.uniform(*domain.stained_head)),
            wooden_set=True,
        )

    def _proportions(self, geometry: BoardGeometry, rng: np.random.Generator) -> Variation:
        """This variation with its Gobblet set's height and how carefully its pieces are put
        down drawn (the domain's ``piece_height`` and ``piece_offset_mm``). Drawn after every
        draw but the painted balls and the light (:meth:`draw`), and only for Gobblet when the
        domain varies them: every draw before stays."""
        if geometry.game != "gobblet":
            return self
        out = self
        for name in ("piece_height", "piece_offset_mm"):
            lo, hi = getattr(self.domain, name)
            if lo != hi:
                out = replace(out, **{name: float(rng.uniform(lo, hi))})
        return out

    def _painted(self, rng: np.random.Generator) -> Variation:
        """This variation, or (by the domain's ``painted_heads`` chance, for a wooden set) its
        dark pieces with a glossy ball of another material on a body of a lighter stain. Drawn
        after every draw but the light (:meth:`draw`), and only for wooden sets: every draw
        before stays as it was."""
        domain = self.domain
        if not self.wooden_set or not domain.painted_heads or rng.random() >= domain.painted_heads:
            return self
        color = domain.head_colors[int(rng.integers(len(domain.head_colors)))]
        ball = jitter(color, rng.uniform(0.8, 1.25), rng.uniform(-8, 8), 1.0)
        dark = self.look["pieces"]["black"]
        light = rng.uniform(*domain.painted_body) * _lightness(self.board) / _lightness(dark)
        body = jitter(dark, light, rng.uniform(-5, 5), 1.0)
        pieces = {**self.look["pieces"], "black": body}
        return replace(self, look={**self.look, "pieces": pieces}, head=1.0, head_color=ball)

    def _relit(self, rng: np.random.Generator) -> Variation:
        """This variation, lit relative to the board by the domain's ``relit`` chance. Drawn
        last, and only when the domain has that chance: every other draw stays as it was."""
        if not self.domain.relit:
            return self
        return replace(self, relit=bool(rng.random() < self.domain.relit))

    def _tinted(self, rng: np.random.Generator) -> Variation:
        """This variation, or (by the domain's ``tint`` chance) its box's colours each with a
        tint (:func:`tint`; a wooden board's wood keeps its own). Drawn last, and only when the
        domain has that chance: every other draw stays as it was."""
        domain = self.domain
        if not domain.tint or rng.random() >= domain.tint:
            return self
        look = _colours_of(self.look, lambda color: tint(color, rng, domain.tint_chroma))
        return replace(self, look=look)

    def _area_lamp(self, rng: np.random.Generator) -> Variation:
        """This variation, or (by the domain's ``area_shadows`` chance) its pieces' shadows from
        a lamp of an angular radius drawn from ``lamp_deg``. Drawn last, and only when the domain
        has that chance: every other draw stays as it was."""
        domain = self.domain
        if not domain.area_shadows or rng.random() >= domain.area_shadows:
            return self
        return replace(self, lamp_deg=float(rng.uniform(*domain.lamp_deg)))

    def _faded_feet(self, geometry: BoardGeometry, rng: np.random.Generator) -> Variation:
        """This variation, or (by the domain's ``foot_fades`` chance, for Gobblet) its pieces'
        feet fading to the board's colour over a fraction of their radius drawn from
        ``foot_fade``. Drawn last, and only when the domain has that chance: every other draw
        stays as it was."""
        domain = self.domain
        if geometry.game != "gobblet" or not domain.foot_fades:
            return self
        if rng.random() >= domain.foot_fades:
            return self
        return replace(self, foot_fade=float(rng.uniform(*domain.foot_fade)))

    def foot_share(self, radius: float) -> float:
        """How much of the board's colour (:attr:`board`) a Gobblet piece's surface at
        ``radius`` (a fraction of its base radius) takes by the foot's fade: all of it at the
        rim, none from ``1 - foot_fade`` in."""
        if self.foot_fade <= 0 or radius <= 1 - self.foot_fade:
            return 0.0
        return min(1.0, (radius - (1 - self.foot_fade)) / self.foot_fade)

    @property
    def piece_set(self) -> str:
        """The kind of the scene's set of pieces, ``FEET-FINISH``: ``faded`` or ``plain`` feet
        (:attr:`foot_fade`), and ``painted`` (the look's colours), ``wooden`` or ``wooden-ball``
        (a wooden set whose dark pieces wear a painted ball). Only Gobblet draws other than
        :data:`UNVARIED_SET`."""
        finish = "wooden-ball" if self.head_color else "wooden" if self.wooden_set else "painted"
        return f"{'faded' if self.foot_fade > 0 else 'plain'}-{finish}"

    @property
    def board(self) -> str:
        """The colour of the board: its wood, or its ``look`` colour drawn."""
        return self.wood or self.look["board"]

    def tone(self, rng: np.random.Generator) -> float:
        """A piece's own lightness factor around its box's colour (from the piece's ``rng``)."""
        return float(np.clip(1 + rng.normal(0, self.domain.piece_spread), 0.6, 1.4))

    def piece_rng(self, cell: str) -> np.random.Generator:
        """The random stream of the piece on ``cell``: the same whatever else is on the board
        (a piece put down elsewhere changes nothing about this one)."""
        return np.random.default_rng([self.piece_seed, zlib.crc32(cell.encode())])


def _ambient(domain: Domain, rng: np.random.Generator) -> float:
    """The ambient share of the light, drawn only when ``domain`` varies it (the last draw, so
    that every other parameter of a domain that does not is as it was)."""
    lo, hi = domain.ambient
    return lo if lo == hi else float(rng.uniform(lo, hi))


def _turned(domain: Domain, rng: np.random.Generator) -> tuple[float, float, float]:
    """The proportions of a ``turned`` Gobblet profile (foot height, neck and head radius),
    drawn only when ``domain`` has that profile (other domains keep their random streams)."""
    if "turned" not in domain.bell_shapes:
        return (0.1, 0.5, 0.5)
    return (
        round(float(rng.uniform(0.05, 0.3)), 3),
        round(float(rng.uniform(0.3, 0.8)), 3),
        round(float(rng.uniform(*domain.turned_head)), 3),
    )
