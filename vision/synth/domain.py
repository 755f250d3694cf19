"""How far a rendered scene may stray from the nominal look: the ranges of the randomisation.

``Domain.NOMINAL`` is the benchmark corpus's own look (it renders exactly the scenes it always
has). ``Domain.TRAIN`` widens every range for fitting the readers' models, ``Domain.HELDOUT``
draws from other ranges again (never used for fitting or tuning) to judge them. A domain is
plain data: ranges are ``(low, high)`` pairs drawn uniformly, chances are probabilities per
scene, colours are ``"#rrggbb"``. The ``look`` colours of a board's geometry file are the priors
of the colour randomisation, never thresholds. See ``docs/vision/synthetic.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

Range = tuple[float, float]


#: How far the corpus puts a Gobblet piece off its cell's centre: the standard deviation (mm,
#: each axis) of its offset, every piece put down with care.
CAREFUL_OFFSET_MM = 1.2


@dataclass(frozen=True)
class Domain:
    """Ranges of the scene randomisation; the defaults are the nominal corpus (nothing varied
    beyond what the corpus always varied, no extra random numbers drawn)."""

    name: str = "nominal"
    #: camera distance as a multiple of the closest that keeps markers and board in view
    zoom: Range = (1.0, 1.15)
    #: largest camera tilt from the board's normal (degrees; upright boards at most 30)
    max_tilt_deg: float = 35.0

    # --- colours and artwork of the board and pieces (:mod:`.pieces`, :mod:`.textures`)
    #: lightness factor of every ``look`` colour, one draw per colour per scene (one box)
    lightness: Range = (1.0, 1.0)
    #: hue turn of every ``look`` colour (degrees), one draw per colour per scene
    hue_deg: Range = (0.0, 0.0)
    #: saturation factor of every ``look`` colour, one draw per colour per scene
    saturation: Range = (1.0, 1.0)
    #: standard deviation of a further lightness factor per piece (pieces of one box differ)
    piece_spread: float = 0.0
    #: chance that a box's colours carry a tint: every ``look`` colour gets a hue of its own
    #: added at a chroma (largest channel less smallest, as a fraction of 255) drawn from
    #: ``tint_chroma``: a grey board printed a little blue or pink, which scaling lightness and
    #: saturation or turning hue cannot give (drawn last, and only at a chance above 0)
    tint: float = 0.0
    tint_chroma: Range = (0.0, 0.0)
    #: Gobsmacked motif area as a fraction of the token's face; empty: the geometry's coverage
    motif_coverage: Range | tuple[()] = ()
    #: Gobsmacked square motifs' corner radius as a fraction of their half side
    motif_rounding: Range = (0.0, 0.0)
    #: Gobblet piece profiles to choose from: ``bell``, ``dome``, ``cylinder``, ``knob``,
    #: ``turned`` (a foot, a neck and a ball head of random proportions, drawn per scene)
    bell_shapes: tuple[str, ...] = ("bell",)
    #: Gobblet: every piece's height as a factor of the geometry's, one draw per scene (sets of
    #: other proportions: taller or squatter pieces of the same diameters)
    piece_height: Range = (1.0, 1.0)
    #: Gobblet: how far pieces stand off their cells' centres, one draw per scene: the standard
    #: deviation (mm, each axis) of every piece's offset (players put pieces down carelessly)
    piece_offset_mm: Range = (CAREFUL_OFFSET_MM, CAREFUL_OFFSET_MM)
    #: wood tones of wooden boards and pieces (Gobblet); empty: the ``look`` colours
    wood_tones: tuple[str, ...] = ()
    #: contrast of the wood grain on a wooden board and its pieces (0: none)
    grain: Range = (0.0, 0.0)
    #: chance of a wooden Gobblet set (on a wooden board): light pieces of nearly the board's own
    #: wood, dark ones of a wood stained one of ``stains``, their heads ``stained_head`` times as
    #: light as their bodies (a painted or darker-stained ball)
    wooden_sets: float = 0.0
    stains: tuple[str, ...] = ()
    stained_head: Range = (1.0, 1.0)
    #: chance that a wooden set's dark pieces wear a glossy ball of another material (painted or
    #: lacquered, one of ``head_colors``) on a body of a lighter stain, ``painted_body`` times as
    #: light as the board's wood: the ball, not the body, is what stands out from the board
    painted_heads: float = 0.0
    head_colors: tuple[str, ...] = ()
    painted_body: Range = (0.5, 0.5)
    #: chance that a Gobblet set's pieces fade to their board's colour at the foot: over the
    #: outer ``foot_fade`` of the base radius (a fraction) a piece's colour goes over to the
    #: board's, so that its foot hardly stands out of the board (a thin, rounded or worn foot;
    #: a lacquered one mirroring the board) and only its inner part shows how big it is (drawn
    #: last, and only at a chance above 0)
    foot_fades: float = 0.0
    foot_fade: Range = (0.0, 0.0)
    #: head radius of the ``turned`` profile, as a fraction of the piece's base radius
    turned_head: Range = (0.3, 0.6)
    #: Spectrangle: radius of the white disc under a tile's value (mm; 0: no disc)
    dot_mm: Range = (4.2, 4.2)
    #: Spectrangle: height of the value on tiles and bonus cells, as a factor of the nominal
    label_scale: Range = (1.0, 1.0)
    #: Spectrangle: lightness of the bonus cells, as a factor of the board colour
    bonus_light: Range = (1.6, 1.6)
    #: Blokus: width of the bevel round a square's top, as a fraction of the half side
    bevel: Range = (0.0, 0.0)

    # --- light and camera response (:mod:`.photo`); empty ``curves``: the nominal 8-bit model
    #: camera curves to choose from: ``srgb``, ``s-curve`` (sRGB and an S of ``curve_strength``),
    #: ``gamma`` (a power ``1 / gamma``), ``filmic`` (ACES-like shoulder, then sRGB), ``reinhard``
    #: (the shoulder e / (1 + e) of ``shoulder`` times the light, then sRGB), ``random``
    #: (``reinhard``, then a random monotonic map of spread ``random_curve_spread``)
    curves: tuple[str, ...] = ()
    #: strength of the S-curve (0: none, 1: smoothstep); for ``filmic``, the pre-exposure
    curve_strength: Range = (0.0, 0.0)
    #: chance and strength of the path to white (bright colours desaturate in linear light
    #: before the curve, as filmic and AgX-like renderings do: ``photo.desaturate``)
    desaturate_chance: float = 0.0
    desaturate: Range = (0.0, 0.0)
    #: exposure into the ``reinhard`` curve's shoulder
    shoulder: Range = (1.0, 1.0)
    #: exponent of the ``gamma`` curve
    gamma: Range = (2.2, 2.2)
    #: spread (standard deviation of the log) of the 8 slopes of a ``random`` curve
    random_curve_spread: float = 0.0
    #: colour temperature of the lamp (kelvin)
    kelvin: Range = (5000.0, 5000.0)
    #: fraction of the lamp's colour cast that the camera's white balance removes
    white_balance: Range = (1.0, 1.0)
    #: random white-balance error per channel (standard deviation of a gain factor)
    white_balance_error: float = 0.0
    #: chance of auto exposure (a percentile of the frame scaled to ``auto_target``)
    auto_exposure: float = 0.0
    #: (percentile, target linear level) of auto exposure
    auto_target: Range = (95.0, 0.75)
    #: exposure error in stops (after auto exposure, or of a fixed exposure)
    exposure_ev: Range = (0.0, 0.0)
    #: chance and amount (unsharp mask) of sharpening
    sharpen: float = 0.0
    sharpen_amount: Range = (0.0, 0.0)
    #: chance of noise reduction (a bilateral filter) instead of sharpening
    denoise: float = 0.0
    #: chance and radius (px) of defocus (a disc blur)
    defocus: float = 0.0
    defocus_px: Range = (0.0, 0.0)
    #: chance and length (px) of motion blur (a line in any direction)
    motion: float = 0.0
    motion_px: Range = (0.0, 0.0)
    #: sensor noise: read noise (levels of 255) and shot noise at full scale
    read_noise: Range = (0.0, 0.0)
    shot_noise: Range = (0.0, 0.0)
    #: chance of a JPEG round trip and its quality
    jpeg: float = 0.0
    jpeg_quality: Range = (55.0, 95.0)
    #: glare on glossy faces: factor of the specular highlight, and the Phong exponent
    glare: Range = (1.0, 1.0)
    shininess: Range = (300.0, 1500.0)
    #: chance of a broad reflection instead (a window, the sky, a big lamp: a low Phong exponent
    #: drawn from ``broad_shininess`` whitens whole pieces)
    broad_glare: float = 0.0
    broad_shininess: Range = (10.0, 10.0)
    #: veiling reflection on every piece: the share of full white added to its faces (a sheen
    #: that lifts black plastic and dark motifs towards grey)
    haze: Range = (0.0, 0.0)
    #: pieces' shadows: darkness (0..1) and softness (blur sigma, half-resolution px)
    shadow_dark: Range = (0.45, 0.45)
    shadow_soft: Range = (1.5, 1.5)
    #: chance that the pieces' shadows come from a lamp of some size instead: sharp where a
    #: piece stands, a penumbra growing with the height of what casts it, and no blur all
    #: round (so no dark rim on the lamp's side); the lamp's angular radius seen from the board
    area_shadows: float = 0.0
    lamp_deg: Range = (0.0, 0.0)
    #: chance of the shadow of an object off the frame across the scene, and its darkness
    cast_shadow: float = 0.0
    cast_shadow_dark: Range = (0.0, 0.0)
    #: share of a solid's light that comes from all round (the rest from the lamp, by the
    #: angle of each face): low is a hard, directional light with dark sides away from it
    ambient: Range = (0.62, 0.62)
    #: chance that the solids are lit relative to the board (``Painter``'s ``relative``: a
    #: face lying flat is exactly as light as the board of its colour; otherwise faces take the
    #: lamp's absolute shading while the board's texture is drawn unlit)
    relit: float = 0.0
    #: shade the pieces' solids of revolution facet by facet round their axis (each side by its
    #: own angle to the lamp); False: one shade per ring, as the nominal corpus does
    faceted: bool = False

    # --- path-traced scenes only (:mod:`.traced`): the room, its lights and the finishes
    #: the room's light all round (a constant environment's radiance)
    room_light: Range = (0.04, 0.5)
    #: chance that the key light is a sun (else an area lamp)
    sun: float = 0.4
    #: the key light's strength (a sun's irradiance; an area lamp's, as it lights the board)
    lamp_power: Range = (1.0, 4.0)
    #: an area lamp's side (mm, drawn log-uniformly: hard to soft shadows)
    lamp_size_mm: Range = (30.0, 900.0)
    #: chance of a window to one side (broad reflections on glossy pieces)
    window: float = 0.4
    #: chance that the board is lacquered, and the lacquer's roughness (alpha)
    board_lacquer: float = 0.35
    lacquer_alpha: Range = (0.08, 0.3)
    #: roughness (alpha) of a rough plastic set, and of a lacquered wooden one
    plastic_alpha: Range = (0.03, 0.35)
    wood_alpha: Range = (0.1, 0.45)
    # the extras below draw no random number at their default chance 0
    #: chance that the lamp and the window are of different colour temperatures, drawn from
    #: ``lamp_kelvin`` and ``window_kelvin`` (mixed light that no white balance undoes)
    mixed_light: float = 0.0
    lamp_kelvin: Range = (6500.0, 6500.0)
    window_kelvin: Range = (6500.0, 6500.0)
    #: chance of a second lamp (crossed shadows, two highlights on every glossy piece)
    second_lamp: float = 0.0
    #: chance that a glossy body (plastic, lacquered wood) is Mitsuba's ``principled`` BSDF (a
    #: GGX base with a clear coat and a sheen) instead of a rough or smooth plastic
    principled: float = 0.0

    # --- hands and distractors (:mod:`.hands`)
    #: skin tones to choose from; empty: ``hands.SKIN_TONES``
    skin_tones: tuple[str, ...] = ()
    #: sleeve colours to choose from; empty: ``hands.SLEEVES``
    sleeves: tuple[str, ...] = ()
    #: chance of a sleeve of any colour (random hue, saturation and value), or of a ``look``
    #: colour of the board or pieces, instead of one of ``sleeves``
    sleeve_any: float = 0.0
    sleeve_look: float = 0.0
    #: chance of a second hand, and of an arm only (the hand beyond the board)
    two_hands: float = 0.0
    arm_only: float = 0.0
    #: chance of a phone or a cup beside the board, and of it reaching over the mat
    distractor: float = 0.0
    distractor_over_mat: float = 0.0

    NOMINAL: ClassVar[Domain]
    TRAIN: ClassVar[Domain]
    HELDOUT: ClassVar[Domain]

    @property
    def varied(self) -> bool:
        """Whether anything beyond the camera pose differs from the nominal corpus."""
        return replace(self, name="nominal", zoom=(1.0, 1.15), max_tilt_deg=35.0) != Domain()

    def widened(self, changes: Mapping[str, Any]) -> Domain:
        """This domain with the ranges and chances ``changes`` (field name: value, a range as
        a ``[low, high]`` list, as a recipe's ``domain`` and a model file's record give them)
        in place of its own."""
        unknown = sorted(set(changes) - ({f.name for f in fields(Domain)} - {"name"}))
        if unknown:
            raise ValueError(f"a domain's widening cannot set {', '.join(unknown)}")
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()}
        return replace(self, **values)


Domain.NOMINAL = Domain()
Domain.TRAIN = Domain(
    name="train",
    zoom=(1.0, 1.8),
    max_tilt_deg=40.0,
    lightness=(0.75, 1.25),
    hue_deg=(-10.0, 10.0),
    saturation=(0.8, 1.15),
    piece_spread=0.04,
    motif_coverage=(0.45, 0.70),
    motif_rounding=(0.0, 0.5),
    bell_shapes=("bell", "dome", "cylinder", "turned", "trumpet"),
    piece_height=(0.8, 1.6),
    piece_offset_mm=(1.0, 3.5),
    wood_tones=("#c49a63", "#d8b27a", "#a8763f", "#e6c895", "#8a5a33", "#b98c5a"),
    grain=(0.0, 0.12),
    wooden_sets=0.4,
    stains=("#4a2c1a", "#5c3a22", "#3b2417", "#6b4426"),
    stained_head=(0.3, 1.0),
    painted_heads=0.5,
    head_colors=("#141414", "#1c2233", "#2e1610", "#1e2a1e", "#3c3c40"),
    painted_body=(0.45, 0.8),
    turned_head=(0.2, 0.6),
    dot_mm=(0.0, 5.5),
    label_scale=(0.7, 1.3),
    bonus_light=(1.2, 2.0),
    bevel=(0.0, 0.25),
    curves=("srgb", "s-curve", "reinhard", "random"),
    curve_strength=(0.0, 0.6),
    random_curve_spread=0.6,
    shoulder=(1.0, 4.0),
    desaturate_chance=0.4,
    desaturate=(0.1, 0.7),
    kelvin=(2700.0, 6500.0),
    white_balance=(0.0, 1.0),
    white_balance_error=0.05,
    auto_exposure=0.7,
    auto_target=(97.0, 0.8),
    exposure_ev=(-1.0, 0.6),
    sharpen=0.5,
    sharpen_amount=(0.2, 1.0),
    denoise=0.25,
    defocus=0.3,
    defocus_px=(0.5, 2.5),
    motion=0.2,
    motion_px=(1.0, 5.0),
    read_noise=(0.5, 3.0),
    shot_noise=(0.0, 4.0),
    jpeg=0.7,
    jpeg_quality=(45.0, 95.0),
    glare=(0.3, 2.0),
    shininess=(100.0, 1500.0),
    broad_glare=0.3,
    broad_shininess=(4.0, 60.0),
    haze=(0.0, 0.2),
    shadow_dark=(0.2, 0.7),
    shadow_soft=(0.7, 6.0),
    cast_shadow=0.3,
    cast_shadow_dark=(0.2, 0.6),
    ambient=(0.2, 0.62),
    faceted=True,
    relit=0.5,
    skin_tones=(
        "#fbe3d3", "#f1c7a9", "#e0ac8a", "#c68a64", "#a86b48",
        "#8c5535", "#6b3f26", "#4d2c1c", "#3a2116", "#2a1810",
    ),
    sleeves=("#202020", "#f0f0f0", "#1c2f5a", "#8a1c1c", "#3f6b3a", "#b0a090"),
    sleeve_any=0.5,
    sleeve_look=0.05,
    two_hands=0.15,
    arm_only=0.15,
    distractor=0.35,
    distractor_over_mat=0.4,
)  # fmt: skip
Domain.HELDOUT = Domain(
    name="heldout",
    zoom=(1.0, 1.8),
    max_tilt_deg=40.0,
    lightness=(0.7, 1.3),
    hue_deg=(-13.0, 13.0),
    saturation=(0.75, 1.2),
    piece_spread=0.06,
    motif_coverage=(0.42, 0.72),
    motif_rounding=(0.1, 0.7),
    bell_shapes=("knob", "dome"),
    foot_fades=0.5,
    foot_fade=(0.15, 0.4),
    piece_height=(0.9, 1.7),
    piece_offset_mm=(1.2, 4.0),
    wood_tones=("#cfa36e", "#b07f4c", "#ecd2a2", "#7a4c2a"),
    grain=(0.03, 0.15),
    wooden_sets=0.4,
    stains=("#553320", "#41281a", "#6e4a2e"),
    stained_head=(0.25, 0.9),
    painted_heads=0.5,
    head_colors=("#0e0e12", "#182038", "#341a1a"),
    painted_body=(0.4, 0.85),
    dot_mm=(2.0, 6.0),
    label_scale=(0.6, 1.4),
    bonus_light=(1.1, 2.2),
    bevel=(0.05, 0.3),
    curves=("filmic", "gamma"),
    curve_strength=(0.6, 1.2),
    gamma=(1.8, 2.4),
    desaturate_chance=0.4,
    desaturate=(0.15, 0.6),
    kelvin=(2600.0, 7000.0),
    white_balance=(0.5, 0.95),
    white_balance_error=0.06,
    auto_exposure=0.6,
    auto_target=(90.0, 0.6),
    exposure_ev=(-1.2, 0.5),
    sharpen=0.4,
    sharpen_amount=(0.3, 1.2),
    denoise=0.3,
    defocus=0.3,
    defocus_px=(0.5, 3.0),
    motion=0.25,
    motion_px=(1.0, 6.0),
    read_noise=(1.0, 3.5),
    shot_noise=(1.0, 5.0),
    jpeg=0.8,
    jpeg_quality=(40.0, 90.0),
    glare=(0.5, 2.5),
    shininess=(80.0, 1200.0),
    broad_glare=0.35,
    broad_shininess=(5.0, 50.0),
    haze=(0.02, 0.25),
    shadow_dark=(0.25, 0.75),
    shadow_soft=(0.5, 8.0),
    cast_shadow=0.35,
    cast_shadow_dark=(0.2, 0.65),
    relit=0.5,
    tint=0.4,
    tint_chroma=(0.02, 0.14),
    skin_tones=(
        "#f6d6c2", "#e8bb9a", "#d49a74", "#b87a52", "#9a5f3c",
        "#7c4a2d", "#5c3620", "#442818", "#301c12",
    ),
    sleeves=("#d8c27a", "#3a7ab8", "#c86a2a", "#6a3a8a", "#2a5a5a", "#e0a0b0", "#505a30"),
    sleeve_any=0.3,
    sleeve_look=0.3,
    two_hands=0.2,
    arm_only=0.2,
    distractor=0.4,
    distractor_over_mat=0.5,
    room_light=(0.02, 0.8),
    sun=0.5,
    lamp_power=(0.6, 5.0),
    lamp_size_mm=(15.0, 1500.0),
    window=0.55,
    board_lacquer=0.5,
    lacquer_alpha=(0.04, 0.45),
    plastic_alpha=(0.015, 0.5),
    wood_alpha=(0.06, 0.6),
    mixed_light=0.5,
    lamp_kelvin=(2400.0, 3600.0),
    window_kelvin=(5500.0, 9000.0),
    second_lamp=0.4,
    principled=0.5,
)  # fmt: skip
