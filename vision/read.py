"""``referee read IMAGE``: the observation read from one photo."""

from __future__ import annotations

import argparse
import json
import sys

from engine import new_game

from .image_file import ImageFileError, read_image
from .locate import BoardNotFound
from .pipeline import VisionPipeline


def cmd_read(args: argparse.Namespace) -> int:
    """Read one photo and print its observation (``--json``: exactly the observation format)."""
    try:
        frame = read_image(args.image)
    except ImageFileError as exc:
        print(f"referee: {exc}", file=sys.stderr)
        return 2
    try:
        obs, pose = VisionPipeline(args.game).read_image(frame)
    except BoardNotFound as exc:
        print(f"referee: no board found in {args.image}: {exc}", file=sys.stderr)
        return 1
    game = new_game(pose.game)
    out = game.observation_to_json(obs)
    if args.json:
        print(json.dumps(out))
        return 0
    print(
        f"{pose.game}: {len(pose.markers_seen)} markers seen, "
        f"reprojection error {pose.reprojection_error:.2f} px"
    )
    if obs.occluded:
        hidden = [n for n in game.cell_names if n not in obs.cells]
        print(f"something is over the board: {len(hidden)} cells hidden ({' '.join(hidden)})")
    for name in game.cell_names:
        if name in obs.cells and obs.cells[name] is not None:
            conf = obs.confidence.get(name)
            sure = f"  ({conf:.2f})" if conf is not None else ""
            print(f"  {name:4s} {json.dumps(out['cells'][name])}{sure}")
    empty = sum(1 for n in game.cell_names if n in obs.cells and obs.cells[n] is None)
    print(f"  {empty} empty cells")
    return 0
