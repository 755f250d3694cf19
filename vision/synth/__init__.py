"""Seeded synthetic scenes of the games (the test and benchmark corpus), see
``docs/vision/synthetic.md``."""

from .camera import Camera
from .domain import Domain
from .positions import random_game, random_position
from .scene import Scene, random_board_shift, render_scene

__all__ = [
    "Camera",
    "Domain",
    "Scene",
    "random_board_shift",
    "random_game",
    "random_position",
    "render_scene",
]
