"""Model folders for tests: the committed models with one of their fitted numbers changed."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from vision.models import MODELS_DIR


def edited_models(folder: Path, game: str, edit: Callable[[dict], dict]) -> Path:
    """``folder`` with the committed models, ``game``'s file as ``edit`` returns its JSON."""
    shutil.copytree(MODELS_DIR, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    path = folder / f"{game}.json"
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    return folder


def flagging_models(folder: Path, game: str) -> Path:
    """``folder`` with the committed models, ``game``'s with a flag threshold of 0: every board
    it reads is taken for one with something over it (as a clear board whose look the model
    mistakes for a hand)."""
    return edited_models(folder, game, lambda meta: {**meta, "foreign_threshold": 0.0})


def asking_models(folder: Path, game: str) -> Path:
    """``folder`` with the committed models, ``game``'s asking the players about every illegal
    act likelier than the best legal explanation (an ask margin of 0) and reporting none."""

    def asking(meta: dict) -> dict:
        decode = {**meta.get("decode", {}), "illegal_margin": 1e9, "ask_margin": 0.0}
        return {**meta, "decode": decode}

    return edited_models(folder, game, asking)
