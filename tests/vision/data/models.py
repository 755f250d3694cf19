"""Model folders for tests: the committed models with one of their fitted numbers changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from vision.models import MODELS_DIR


def flagging_models(folder: Path, game: str) -> Path:
    """``folder`` with the committed models, ``game``'s with a flag threshold of 0: every board
    it reads is taken for one with something over it (as a clear board whose look the model
    mistakes for a hand)."""
    shutil.copytree(MODELS_DIR, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    path = folder / f"{game}.json"
    meta = json.loads(path.read_text())
    path.write_text(json.dumps({**meta, "foreign_threshold": 0.0}))
    return folder
