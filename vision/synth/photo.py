"""What the light and the camera do to the rendered picture: white balance, exposure, uneven
light and shadows, glare, vignetting, blur, sensor noise and JPEG compression."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import cv2
import numpy as np

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


def gain_map(look: Look, size: tuple[int, int]) -> np.ndarray:
    """Full-size uint8 BGR gain (units of 1/128): white balance x exposure x uneven light."""
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
    if not look.jpeg_quality:
        return out
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, look.jpeg_quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)
