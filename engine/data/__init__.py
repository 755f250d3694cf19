"""Editable game data (piece sets, board layouts): the rulebooks' gaps and assumptions live here."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any


@cache
def load(name: str, path: str | None = None) -> dict[str, Any]:
    """The data file ``engine/data/NAME.json``, or the file at ``path`` when given."""
    if path is not None:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    return json.loads(resources.files(__package__).joinpath(f"{name}.json").read_text("utf-8"))
