"""Gobblet scenes from a path tracer (Mitsuba 3), read by a fitted network: a probe of how the
readers fare on light this project's renderer does not make (``docs/benchmarks.md``, session 20).

    python -m vision.train.probe_pathtraced SCENES [--shape bell] [--lift 0] [--wood 0] [--blur 0]

Needs ``pip install mitsuba`` (not a dependency of the product or of ``[train]``). Prints, per
size, how many visible cells were read right, one size small, larger or in the wrong colour.
"""

from __future__ import annotations

import argparse
import collections
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine import new_game

from ..bench import timed_read
from ..geometry import BoardGeometry, load_geometry
from ..locate import BoardNotFound
from ..readers.fitted import GobbletReader
from ..synth.paint import circle
from ..synth.photo import srgb_decode
from ..synth.pieces import _bell_profile
from ..synth.positions import random_position
from ..synth.textures import Texture, board_texture, mat_texture, rgb

#: the sample photos' cone: a concave foot to a ball this fraction of the base radius
CONE_BALL = 0.36


def cone_profile(radius: float, height: float) -> tuple[tuple[float, float], ...]:
    """(height, radius) fractions of a concave cone up to a ball of :data:`CONE_BALL` radii."""
    ball = CONE_BALL * radius / height
    top = 1 - 2 * ball
    levels = [(0.0, 1.0), (0.03, 1.0)]
    levels += [
        (0.03 + (top + 0.3 * ball - 0.03) * i / 8, 1 - 0.84 * (i / 8) ** 0.6) for i in range(1, 9)
    ]
    arc = [math.pi * (-0.5 + i / 10) for i in range(1, 10)]
    levels += [(1 - ball + ball * math.sin(a), CONE_BALL * math.cos(a) + 0.01) for a in arc]
    levels.append((1.0, 0.01))
    return tuple(levels)


def linear(hex_color: str) -> list[float]:
    """RGB reflectance (linear light) of an sRGB ``#rrggbb``."""
    return srgb_decode(np.array(rgb(hex_color)) / 255).tolist()


class PathTracedGobblet:
    """Renders Gobblet positions with Mitsuba: the mat and board textures of
    :mod:`vision.synth.textures`, turned pieces of the geometry's diameters (``shape``: a
    :func:`~vision.synth.pieces._bell_profile` name or ``cone``; ``lift_mm`` taller), light
    pieces of the board's wood times ``wood`` (0: the ``look``'s colour), a sun and a sky, a
    camera 560-700 mm away tilted up to 25 degrees; then a Gaussian ``blur`` (px) and JPEG 73."""

    def __init__(
        self,
        folder: Path,
        shape: str = "bell",
        lift_mm: float = 0.0,
        wood: float = 0.0,
        blur: float = 0.0,
        spp: int = 8,
    ) -> None:
        try:
            import mitsuba
        except ImportError:
            raise SystemExit("probe_pathtraced: needs Mitsuba 3 (pip install mitsuba)") from None
        mitsuba.set_variant("scalar_rgb")
        self.mi = mitsuba
        self.geometry: BoardGeometry = load_geometry("gobblet")
        self.folder = folder
        self.shape, self.lift_mm, self.wood, self.blur, self.spp = shape, lift_mm, wood, blur, spp
        self.mat = self._rectangle(mat_texture("gobblet"), 0.0, "mat")
        self.top = float(self.geometry.extra["board"]["thickness"])
        self.board = self._rectangle(board_texture("gobblet"), self.top, "board")
        mx, my = np.asarray(self.geometry.mat_origin) + np.asarray(self.geometry.mat_size) / 2
        #: the mat's centre in the world (x, -y, up), where the camera looks
        self.centre = [float(mx), float(-my), 0.0]

    def _rectangle(self, texture: Texture, height: float, name: str) -> dict[str, Any]:
        """A textured rectangle lying at ``height`` mm (world: x, -y, up)."""
        path = self.folder / f"{name}.png"
        cv2.imwrite(str(path), cv2.flip(texture.pixels, 0))  # Mitsuba's v runs up
        h, w = texture.pixels.shape[:2]
        size = np.array([w, h]) / texture.px_per_mm
        cx, cy = np.asarray(texture.origin) + size / 2
        T = self.mi.ScalarTransform4f
        return {
            "type": "rectangle",
            "to_world": T().translate([cx, -cy, height]) @ T().scale([size[0] / 2, size[1] / 2, 1]),
            "bsdf": {"type": "diffuse", "reflectance": {"type": "bitmap", "filename": str(path)}},
        }

    def _piece(
        self, name: str, content: dict[str, Any], rng: np.random.Generator
    ) -> dict[str, Any]:
        """One piece as a turned mesh written to a PLY file."""
        spec = self.geometry.pieces["sizes"][str(content["size"])]
        radius, height = spec["diameter"] / 2, float(spec["height"]) + self.lift_mm
        profile = (
            cone_profile(radius, height) if self.shape == "cone" else _bell_profile(self.shape)
        )
        x, y = self.geometry.cell(name).center
        n = 40
        rings = [circle((x, -y), r * radius, self.top + t * height, n) for t, r in profile]
        verts = [tuple(v) for v in np.concatenate(rings)]
        faces = []
        for i in range(len(profile) - 1):
            for k in range(n):
                a, b = i * n + k, i * n + (k + 1) % n
                faces += [(a, b + n, b), (a, a + n, b + n)]
        last, tip = (len(profile) - 1) * n, len(verts)  # the top closed by a fan
        verts.append((x, -y, self.top + profile[-1][0] * height))
        faces += [(last + k, tip, last + (k + 1) % n) for k in range(n)]
        mesh = self.mi.Mesh(name, len(verts), len(faces))
        params = self.mi.traverse(mesh)
        params["vertex_positions"] = np.asarray(verts, np.float32).ravel()
        params["faces"] = np.asarray(faces, np.uint32).ravel()
        params.update()
        path = self.folder / f"piece-{name}.ply"
        mesh.write_ply(str(path))
        look = self.geometry.extra["look"]
        colour = linear(look["pieces"][content["color"]])
        if self.wood and content["color"] == "white":
            colour = (np.array(linear(look["board"])) * self.wood).tolist()
        plastic = {"type": "roughplastic", "diffuse_reflectance": {"type": "rgb", "value": colour}}
        plastic["alpha"] = float(rng.uniform(0.1, 0.4))
        return {"type": "ply", "filename": str(path), "bsdf": {"type": "twosided", "bsdf": plastic}}

    def render(self, cells: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
        """The BGR photo of ``cells`` (observation contents)."""
        T = self.mi.ScalarTransform4f
        cx, cy, _ = self.centre
        scene: dict[str, Any] = {"type": "scene", "integrator": {"type": "path", "max_depth": 5}}
        scene["mat"], scene["board"] = self.mat, self.board
        scene["table"] = {
            "type": "rectangle",
            "to_world": T().translate([cx, cy, -0.5]) @ T().scale([2000, 2000, 1]),
            "bsdf": {
                "type": "diffuse",
                "reflectance": {"type": "rgb", "value": [0.25, 0.15, 0.08]},
            },
        }
        for name, content in cells.items():
            if content is not None:
                scene[f"piece-{name}"] = self._piece(name, content, rng)
        az, tilt = rng.uniform(0, 2 * np.pi), math.radians(rng.uniform(0, 25))
        dist = rng.uniform(560, 700)
        eye = [
            cx + dist * math.sin(tilt) * math.cos(az),
            cy + dist * math.sin(tilt) * math.sin(az),
            dist * math.cos(tilt),
        ]
        roll = rng.uniform(0, 2 * np.pi)
        scene["sensor"] = {
            "type": "perspective",
            "fov": 60,
            "fov_axis": "x",
            "to_world": T().look_at(
                origin=eye, target=self.centre, up=[math.cos(roll), math.sin(roll), 0]
            ),
            "film": {"type": "hdrfilm", "width": 1280, "height": 960},
            "sampler": {"type": "independent", "sample_count": self.spp},
        }
        up, sun = math.radians(rng.uniform(40, 75)), rng.uniform(0, 2 * np.pi)
        direction = [-math.cos(up) * math.cos(sun), -math.cos(up) * math.sin(sun), -math.sin(up)]
        scene["sun"] = {
            "type": "directional",
            "direction": direction,
            "irradiance": {"type": "rgb", "value": 2.2},
        }
        scene["sky"] = {"type": "constant", "radiance": {"type": "rgb", "value": 0.25}}
        image = self.mi.render(self.mi.load_dict(scene))
        srgb = self.mi.Bitmap(image).convert(
            self.mi.Bitmap.PixelFormat.RGB, self.mi.Struct.Type.UInt8, srgb_gamma=True
        )
        photo = cv2.cvtColor(np.array(srgb), cv2.COLOR_RGB2BGR)
        if self.blur > 0:
            photo = cv2.GaussianBlur(photo, (0, 0), self.blur)
            jpeg = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 73])[1]
            photo = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
        return photo


def size_errors(truth: dict[str, Any], read: dict[str, Any]) -> collections.Counter:
    """Per (true size, outcome) of every cell read: ``right``, ``small``, ``large``, ``colour``
    (size 0: empty)."""
    out: collections.Counter = collections.Counter()
    for name, got in read.items():
        want = truth.get(name)
        ts = 0 if want is None else want["size"]
        gs = 0 if got is None else got["size"]
        kind = "right" if got == want else "small" if gs < ts else "large" if gs > ts else "colour"
        out[(ts, kind)] += 1
    return out


def main(argv: list[str] | None = None) -> int:
    """Render and read ``SCENES`` random positions; print the outcomes by size."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.probe_pathtraced")
    parser.add_argument("scenes", type=int)
    parser.add_argument("--shape", default="bell", help="a vision.synth profile, or cone")
    parser.add_argument("--lift", type=float, default=0.0, help="mm added to every height")
    parser.add_argument("--wood", type=float, default=0.0, help="light pieces: the board's wood x")
    parser.add_argument("--blur", type=float, default=0.0, help="Gaussian blur (px), then JPEG")
    parser.add_argument("--spp", type=int, default=8, help="samples a pixel")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    codec, counts = new_game("gobblet"), collections.Counter()
    with tempfile.TemporaryDirectory() as folder:
        tracer = PathTracedGobblet(
            Path(folder), args.shape, args.lift, args.wood, args.blur, args.spp
        )
        reader = GobbletReader(tracer.geometry)
        for i in range(args.scenes):
            cells = random_position("gobblet", rng)
            start = time.perf_counter()
            photo = tracer.render(cells, rng)
            seconds = time.perf_counter() - start
            try:
                obs = timed_read(photo, tracer.geometry, reader).observation
            except BoardNotFound as exc:
                print(f"scene {i}: not read ({exc})", flush=True)
                continue
            counts += size_errors(cells, codec.observation_to_json(obs)["cells"])
            print(f"scene {i}: rendered in {seconds:.1f} s", flush=True)
    for size in range(5):
        print(
            size,
            {
                k: counts[(size, k)]
                for k in ("right", "small", "large", "colour")
                if counts[(size, k)]
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
