"""The seeded scene corpora the reader tests share: rendered scenes, located by the real
:class:`BoardLocator` (not the renderer's homography) and read by the game's reader."""

from __future__ import annotations

from functools import cache

import cv2
import numpy as np

from engine import Observation, new_game
from vision.bench import board_right
from vision.geometry import load_geometry
from vision.locate import BoardLocator, BoardNotFound, BoardPose
from vision.readers import reader_for
from vision.synth import Domain, Scene, random_position, render_scene


def truth(game: str, cells: dict) -> dict:
    """The canonical contents of a scene's JSON ``cells``."""
    codec = new_game(game)
    return {name: codec.cell_from_json(value) for name, value in cells.items()}


def locate(game: str, image: np.ndarray) -> BoardPose:
    """The pose a fresh locator finds in ``image``."""
    return BoardLocator([load_geometry(game)]).locate(image, 0.0)


@cache
def corpus(
    game: str, scenes: int, seed: int, domain: Domain = Domain.NOMINAL
) -> tuple[tuple[Scene, BoardPose, Observation], ...]:
    """(scene, pose, observation) of ``scenes`` seeded scenes of ``domain``, about 40 % with a
    hand, read by one reader in turn; a scene whose board is not found is left out (the bench
    counts those)."""
    cv2.setNumThreads(1)
    rng = np.random.default_rng(seed)
    reader = reader_for(game)
    out = []
    for i in range(scenes):
        scene = render_scene(game, random_position(game, rng), seed * 1000 + i, domain=domain)
        try:
            pose = locate(game, scene.image)
            out.append((scene, pose, reader.read(scene.image, pose)))
        except BoardNotFound:
            continue
    return tuple(out)


def read_right(game: str, scene: Scene, obs: Observation) -> bool:
    """Read right as ``referee bench vision`` counts a whole board."""
    return board_right(
        load_geometry(game), truth(game, scene.cells), scene.hidden, scene.occluded, obs
    )
