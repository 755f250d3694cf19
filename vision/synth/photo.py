"""What the light and the camera do to the rendered picture: white balance, exposure, uneven
light and shadows, glare, vignetting, blur, sensor noise and JPEG compression.

Two models: :func:`develop` (the nominal corpus: 8-bit per-channel gains, no tone curve) and
:func:`respond` (a randomised :class:`Response` applied in linear light: the lamp's colour
temperature, white balance errors, auto exposure, a camera curve, sharpening or noise
reduction, defocus or motion blur, shot and read noise, JPEG)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import cv2
import numpy as np

from .domain import Domain

_GAIN_ONE = 128  # gain maps are uint8 in units of 1/128


@dataclass(frozen=True)
class Look:
    """The randomised photographic parameters of one scene (see ``docs/vision/synthetic.md``)."""

    white_balance: tuple[float, float, float]
    exposure: float
    gradient: float
    gradient_angle: float
    vignette: float
    shadow: float
    shadow_line: tuple[float, float]
    shadow_softness: float
    blur: float
    noise: float
    jpeg_quality: int  # 0: no JPEG round trip (a raw frame, as picamera2 gives)

    @classmethod
    def random(cls, rng: np.random.Generator) -> Look:
        """Draw every parameter from ``rng``."""
        warmth = rng.uniform(-1, 1)
        tint = rng.uniform(-0.04, 0.04)
        wb = (1 - 0.22 * warmth, 1 + tint, 1 + 0.22 * warmth)
        dim = rng.random() < 0.25
        exposure = rng.uniform(0.35, 0.65) if dim else rng.uniform(0.75, 1.15)
        shadow = rng.uniform(0.45, 0.85) if rng.random() < 0.5 else 1.0
        line = (rng.uniform(0, 2 * np.pi), rng.uniform(-0.3, 0.3))
        blur = rng.uniform(0.0, 1.4) if rng.random() < 0.75 else 0.0
        return cls(
            white_balance=wb,
            exposure=float(exposure),
            gradient=float(rng.uniform(0, 0.45)),
            gradient_angle=float(rng.uniform(0, 2 * np.pi)),
            vignette=float(rng.uniform(0, 0.35)),
            shadow=float(shadow),
            shadow_line=(float(line[0]), float(line[1])),
            shadow_softness=float(rng.uniform(0.02, 0.15)),
            blur=float(blur),
            noise=float(rng.uniform(1.0, 4.0) / np.sqrt(exposure)),
            jpeg_quality=int(rng.integers(55, 96)) if rng.random() < 0.5 else 0,
        )


def _light(look: Look, size: tuple[int, int]) -> np.ndarray:
    """The exposure and the uneven light of ``look`` at 1/16 of the image ``size``."""
    w, h = size
    sw, sh = max(2, w // 16), max(2, h // 16)
    x, y = np.meshgrid(np.linspace(-1, 1, sw), np.linspace(-h / w, h / w, sh))
    gain = np.full((sh, sw), look.exposure)
    ramp = x * np.cos(look.gradient_angle) + y * np.sin(look.gradient_angle)
    gain *= 1 - look.gradient * (ramp + 1.5) / 3
    gain *= 1 - look.vignette * (x * x + y * y) / 2
    angle, offset = look.shadow_line
    if look.shadow < 1.0:
        side = x * np.cos(angle) + y * np.sin(angle) - offset
        inside = 1 / (1 + np.exp(-side / look.shadow_softness))
        gain *= 1 - (1 - look.shadow) * inside
    return gain


def gain_map(look: Look, size: tuple[int, int]) -> np.ndarray:
    """Full-size uint8 BGR gain (units of 1/128): white balance x exposure x uneven light."""
    w, h = size
    gain = _light(look, size)
    bgr = gain[..., None] * np.asarray(look.white_balance)[None, None, :]
    small = np.clip(bgr * _GAIN_ONE, 0, 255).astype(np.uint8)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


@cache
def _noise_bank(size: tuple[int, int]) -> np.ndarray:
    """Fixed uniform random bytes a little larger than the image (indices into a noise LUT)."""
    w, h = size
    return np.random.default_rng(12345).integers(0, 256, (h + 64, w + 64, 3), dtype=np.uint8)


@cache
def _unit_normal_lut() -> np.ndarray:
    """Standard normal quantiles of the 256 byte values (uniform bytes -> Gaussian noise)."""
    from statistics import NormalDist

    normal = NormalDist()
    return np.array([normal.inv_cdf((i + 0.5) / 256) for i in range(256)])


def develop(image: np.ndarray, look: Look, rng: np.random.Generator) -> np.ndarray:
    """Apply light, blur, noise and JPEG to ``image`` (BGR uint8); return the photo."""
    h, w = image.shape[:2]
    out = cv2.multiply(image, gain_map(look, (w, h)), scale=1 / _GAIN_ONE)
    if look.blur >= 0.3:
        k = 2 * int(np.ceil(2 * look.blur)) + 1
        out = cv2.GaussianBlur(out, (k, k), look.blur)
    dx, dy = (int(v) for v in rng.integers(0, 64, 2))
    lut = np.round(_unit_normal_lut() * look.noise).astype(np.int16)
    noise = cv2.LUT(_noise_bank((w, h))[dy : dy + h, dx : dx + w], lut)
    out = cv2.add(out, noise, dtype=cv2.CV_8U)
    return jpeg_round_trip(out, look.jpeg_quality)


def jpeg_round_trip(image: np.ndarray, quality: int) -> np.ndarray:
    """``image`` (BGR uint8) encoded as a JPEG of ``quality`` and decoded again (0: as it is)."""
    if not quality:
        return image
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


#: Curve look-up resolution: linear light 0..``_TOP`` (curves with a shoulder: x 4) in
#: ``_STEPS`` steps.
_STEPS, _TOP = 8192, 1.0
_SHOULDERS = ("filmic", "reinhard", "random")


def srgb_encode(x: np.ndarray) -> np.ndarray:
    """The sRGB transfer function: linear light 0..1 -> encoded 0..1."""
    x = np.clip(x, 0.0, 1.0)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)


def srgb_decode(v: np.ndarray) -> np.ndarray:
    """The inverse of :func:`srgb_encode`."""
    v = np.clip(v, 0.0, 1.0)
    return np.where(v <= 0.04045, v / 12.92, np.power((v + 0.055) / 1.055, 2.4))


def camera_curve(
    name: str,
    x: np.ndarray,
    strength: float = 0.0,
    gamma: float = 2.2,
    knots: tuple[float, ...] = (),
) -> np.ndarray:
    """A camera's tone curve: linear light (0.. ; 1 is full scale) -> encoded 0..1.

    ``srgb``; ``s-curve``: sRGB blended with a smoothstep by ``strength`` (0..1); ``gamma``:
    ``x ** (1 / gamma)``; ``filmic``: an ACES-like shoulder of ``strength`` times the light,
    then sRGB; ``reinhard``: the shoulder ``e / (1 + e)`` of ``e = strength`` times the light,
    scaled to keep full scale, then sRGB (bright colours lose saturation, as in many phones and
    renderers); ``random``: the ``reinhard`` curve, then a random monotonic map of the encoded
    value through ``knots`` (its values at evenly spaced points from 0 to 1: toes, shoulders,
    S-curves and their inverses of any camera's picture style). All are monotonic and map 0 to
    0."""
    x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    if name == "srgb":
        return srgb_encode(x)
    if name == "s-curve":
        v = srgb_encode(x)
        return v + strength * (v * v * (3 - 2 * v) - v)
    if name == "gamma":
        return np.power(np.minimum(x, 1.0), 1 / gamma)
    if name == "filmic":
        e = x * strength
        return srgb_encode(e * (2.51 * e + 0.03) / (e * (2.43 * e + 0.59) + 0.14))
    if name in ("reinhard", "random"):
        e = x * strength
        v = srgb_encode(e / (1 + e) * (1 + strength) / strength)
        if name == "reinhard":
            return v
        return np.interp(v, np.linspace(0.0, 1.0, len(knots)), knots)
    raise ValueError(f"no camera curve {name!r}")


def desaturate(lin: np.ndarray, strength: float, knee: float = 0.25) -> np.ndarray:
    """Bright colours on the path to white, as filmic and AgX-like renderings do (linear BGR,
    float32): each channel moves towards the pixel's brightest one by ``strength`` times a
    smoothstep of that brightest channel from ``knee`` to full scale (dark colours keep their
    saturation, a bright orange turns salmon)."""
    top = brightest(lin)[..., None]
    t = np.clip((top - knee) / (1.0 - knee), 0.0, 1.0)
    out = top - lin
    out *= strength * t * t * (3 - 2 * t)
    out += lin
    return out


def brightest(image: np.ndarray) -> np.ndarray:
    """The brightest of each pixel's three channels (H x W) of ``image`` (H x W x 3)."""
    return np.maximum(np.maximum(image[..., 0], image[..., 1]), image[..., 2])


def lamp_gains(kelvin: float) -> np.ndarray:
    """Linear BGR gains of a black-body lamp at ``kelvin``, relative to daylight (6500 K),
    green 1 (a fit of the Planckian locus in sRGB, after Tanner Helland)."""

    def rgb(k: float) -> np.ndarray:
        t = k / 100
        r = 255.0 if t <= 66 else 329.7 * (t - 60) ** -0.1332
        g = 99.47 * np.log(t) - 161.1 if t <= 66 else 288.1 * (t - 60) ** -0.0755
        b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.5 * np.log(t - 10) - 305.0)
        return srgb_decode(np.clip([b, g, r], 1.0, 255.0) / 255)

    gains = rgb(kelvin) / rgb(6500.0)
    return gains / gains[1]


@dataclass(frozen=True)
class Response:
    """The randomised light and camera of one scene in linear light (see :func:`respond`)."""

    curve: str
    strength: float
    gamma: float
    #: the ``random`` curve's values at evenly spaced encoded levels (() for other curves)
    knots: tuple[float, ...]
    desaturate: float  # highlights towards white (:func:`desaturate`; 0: none)
    gains: tuple[float, float, float]  # BGR: the lamp's cast the white balance left, errors
    auto: tuple[float, float] | None  # (percentile, target) of auto exposure
    exposure: float
    sharpen: float  # unsharp mask amount (0: none)
    denoise: bool
    defocus: float  # disc radius (px; 0: none)
    motion: tuple[float, float]  # length (px; 0: none) and direction (radians)
    read_noise: float
    shot_noise: float
    jpeg_quality: int  # 0: none
    cast_shadow: tuple[tuple[float, float], ...]  # polygon (fractions of the width; () none)
    cast_shadow_dark: float
    cast_shadow_soft: float  # blur sigma as a fraction of the width

    @classmethod
    def random(cls, domain: Domain, rng: np.random.Generator) -> Response:
        """Draw every parameter of ``domain``'s ranges from ``rng``."""
        curve = domain.curves[int(rng.integers(len(domain.curves)))]
        kelvin = rng.uniform(*domain.kelvin)
        cast = lamp_gains(kelvin) ** (1 - rng.uniform(*domain.white_balance))
        gains = cast * np.exp(rng.normal(0, domain.white_balance_error, 3))
        sharpen = rng.random() < domain.sharpen
        motion = rng.random() < domain.motion
        shadow: tuple[tuple[float, float], ...] = ()
        if rng.random() < domain.cast_shadow:
            # an object off the frame: a blob reaching in from beyond one side of the image
            a = rng.uniform(0, 2 * np.pi)
            centre = np.array([0.5 + 0.8 * np.cos(a), 0.375 + 0.6 * np.sin(a)])
            t = np.linspace(0, 2 * np.pi, 12, endpoint=False)
            radius = rng.uniform(0.35, 0.7) * (1 + 0.25 * rng.uniform(-1, 1, 12))
            ring = centre + radius[:, None] * np.column_stack([np.cos(t), np.sin(t)])
            shadow = tuple((float(x), float(y)) for x, y in ring)
        return cls(
            curve=curve,
            strength=float(
                rng.uniform(
                    *(domain.shoulder if curve in ("reinhard", "random") else domain.curve_strength)
                )
            ),
            gamma=float(rng.uniform(*domain.gamma)),
            desaturate=float(rng.uniform(*domain.desaturate))
            if rng.random() < domain.desaturate_chance
            else 0.0,
            gains=(float(gains[0]), float(gains[1]), float(gains[2])),
            auto=tuple(domain.auto_target) if rng.random() < domain.auto_exposure else None,
            exposure=float(2 ** rng.uniform(*domain.exposure_ev)),
            sharpen=float(rng.uniform(*domain.sharpen_amount)) if sharpen else 0.0,
            denoise=bool(not sharpen and rng.random() < domain.denoise),
            defocus=float(rng.uniform(*domain.defocus_px)) if rng.random() < domain.defocus else 0,
            motion=(
                float(rng.uniform(*domain.motion_px)) if motion else 0.0,
                float(rng.uniform(0, np.pi)),
            ),
            read_noise=float(rng.uniform(*domain.read_noise)),
            shot_noise=float(rng.uniform(*domain.shot_noise)),
            jpeg_quality=int(rng.uniform(*domain.jpeg_quality))
            if rng.random() < domain.jpeg
            else 0,
            cast_shadow=shadow,
            cast_shadow_dark=float(rng.uniform(*domain.cast_shadow_dark)),
            cast_shadow_soft=float(rng.uniform(0.002, 0.04)),
            knots=_random_knots(domain, rng) if curve == "random" else (),
        )


def _random_knots(domain: Domain, rng: np.random.Generator) -> tuple[float, ...]:
    """The knots of a ``random`` curve: 0, the running sum of 8 slopes of log-normal spread
    ``domain.random_curve_spread`` normalised to end at 1 (drawn last: the other parameters
    are as they would be without it)."""
    slopes = np.exp(rng.normal(0.0, domain.random_curve_spread, 8))
    return (0.0, *(round(float(v), 4) for v in np.cumsum(slopes) / slopes.sum()))


@cache
def _decode_lut() -> np.ndarray:
    return srgb_decode(np.arange(256) / 255).astype(np.float32)


@lru_cache(maxsize=64)
def _curve_lut(
    name: str, strength: float, gamma: float, knots: tuple[float, ...] = ()
) -> np.ndarray:
    top = 4 * _TOP if name in _SHOULDERS else _TOP
    x = np.linspace(0, top, _STEPS)
    return np.round(255 * camera_curve(name, x, strength, gamma, knots)).astype(np.uint8)


@cache
def _normal_bank(size: tuple[int, int]) -> np.ndarray:
    """Standard normal float32 noise a little larger than the image (shifted per scene)."""
    return _unit_normal_lut().astype(np.float32)[_noise_bank(size)]


def _shadow_map(response: Response, size: tuple[int, int]) -> np.ndarray | None:
    """Quarter-resolution light factor of the cast shadow of an object off the frame."""
    if not response.cast_shadow:
        return None
    w, h = size[0] // 4, size[1] // 4
    mask = np.zeros((h, w), dtype=np.float32)
    ring = np.round(np.asarray(response.cast_shadow) * w * 16).astype(np.int32)
    cv2.fillPoly(mask, [ring], 1.0, cv2.LINE_AA, 4)
    mask = cv2.GaussianBlur(mask, (0, 0), max(0.5, response.cast_shadow_soft * w))
    return 1 - response.cast_shadow_dark * mask


def _blur_kernel(response: Response) -> np.ndarray | None:
    """A disc (defocus), or a line (motion), or both convolved; None for neither."""
    kernel = None
    if response.defocus > 0:
        r = response.defocus
        n = 2 * int(np.ceil(r)) + 1
        y, x = np.mgrid[:n, :n] - n // 2
        kernel = np.clip(r + 0.5 - np.hypot(x, y), 0, 1).astype(np.float32)
    length, angle = response.motion
    if length > 0:
        n = 2 * int(np.ceil(length / 2)) + 1
        line = np.zeros((n, n), dtype=np.float32)
        d = np.array([np.cos(angle), np.sin(angle)]) * length / 2
        c = n // 2
        a, b = np.round((c - d) * 16).astype(int), np.round((c + d) * 16).astype(int)
        cv2.line(line, tuple(a.tolist()), tuple(b.tolist()), 1.0, 1, cv2.LINE_AA, 4)
        kernel = line if kernel is None else cv2.filter2D(_pad(kernel, n), -1, line)
    return None if kernel is None else kernel / kernel.sum()


def _pad(kernel: np.ndarray, n: int) -> np.ndarray:
    """``kernel`` zero-padded by ``n`` on every side (room to convolve it)."""
    return cv2.copyMakeBorder(kernel, n, n, n, n, cv2.BORDER_CONSTANT, value=0)


def _noise_sigma(lin: np.ndarray, response: Response) -> np.ndarray:
    """The standard deviation of ``response``'s shot and read noise at every value of ``lin``."""
    var = cv2.max(lin, 0.0)
    var *= (response.shot_noise / 255) ** 2
    var += (response.read_noise / 255) ** 2
    return cv2.sqrt(var, var)


def respond(
    image: np.ndarray, look: Look, response: Response, rng: np.random.Generator
) -> np.ndarray:
    """The photo of ``image`` (BGR uint8, taken as sRGB) under ``look``'s uneven light, through
    ``response``'s camera, computed in linear light."""
    h, w = image.shape[:2]
    light = _light(look, (w, h)) / look.exposure
    small = light[..., None].astype(np.float32) * np.asarray(response.gains, np.float32)
    quarter = cv2.resize(small, (w // 4, h // 4), interpolation=cv2.INTER_LINEAR)
    shadow = _shadow_map(response, (w, h))
    if shadow is not None:
        quarter *= shadow[..., None]
    lin = cv2.LUT(image, _decode_lut())
    exposure = response.exposure
    if response.auto is not None:
        lit = cv2.resize(lin, (w // 4, h // 4), interpolation=cv2.INTER_AREA) * quarter
        level = float(np.percentile(brightest(lit), response.auto[0]))
        exposure *= response.auto[1] / max(level, 1e-3)
    lin = cv2.multiply(lin, cv2.resize(quarter * exposure, (w, h)))
    if response.desaturate > 0:
        lin = desaturate(lin, response.desaturate)
    kernel = _blur_kernel(response)
    if kernel is not None:
        lin = cv2.filter2D(lin, -1, kernel, borderType=cv2.BORDER_REFLECT)
    dx, dy = (int(v) for v in rng.integers(0, 64, 2))
    noise = _noise_sigma(lin, response)
    noise *= _normal_bank((w, h))[dy : dy + h, dx : dx + w]
    lin += noise
    top = 4 * _TOP if response.curve in _SHOULDERS else _TOP
    lin *= (_STEPS - 1) / top
    index = np.clip(lin, 0, _STEPS - 1, out=lin).astype(np.uint16)
    out = np.take(
        _curve_lut(
            response.curve, round(response.strength, 3), round(response.gamma, 3), response.knots
        ),
        index,
    )
    if response.sharpen > 0:
        soft = cv2.GaussianBlur(out, (0, 0), 1.2)
        out = cv2.addWeighted(out, 1 + response.sharpen, soft, -response.sharpen, 0)
    elif response.denoise:
        out = cv2.bilateralFilter(out, 5, 25, 3)
    return jpeg_round_trip(out, response.jpeg_quality)


def film(plain: np.ndarray, params: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    """Another frame a camera takes of a still scene: ``plain`` (the scene rendered with
    ``effects=False``) through the light and camera of its ``params`` (as rendered with
    effects), with the fresh sensor noise of ``rng``."""
    look = Look(**params["look"])
    if params.get("response"):
        return respond(plain, look, Response(**params["response"]), rng)
    return develop(plain, look, rng)
