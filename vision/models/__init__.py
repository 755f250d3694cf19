"""The readers' fitted models: ``NAME.onnx`` + ``NAME.json`` (see :mod:`vision.model`), written
by ``referee train`` from ``vision/train/recipes.json``.

The readers load them from :data:`MODELS_DIR` unless :func:`use_models` chose another folder
(``referee bench ... --models DIR``, ``referee read --models DIR``: a trial's ``referee train
--out DIR`` benched through the very commands that bench the committed models)."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

#: The folder of the committed model files.
MODELS_DIR = Path(__file__).parent

_chosen: Path | None = None


class ModelFileError(RuntimeError):
    """A model file is missing, unreadable or of another version (the readers' and the edge
    model's errors): the command line reports it in one line."""


def models_dir(directory: str | Path | None = None) -> Path:
    """The folder the readers load their models from: ``directory`` when given, else the one
    :func:`use_models` chose, else :data:`MODELS_DIR`."""
    return Path(directory) if directory else _chosen or MODELS_DIR


def train_command(name: str, folder: str | Path) -> str:
    """The command that writes model ``name`` into ``folder`` (the hint of a missing model)."""
    out = "" if Path(folder).resolve() == MODELS_DIR.resolve() else f" --out {folder}"
    return f"referee train {name}{out}"


_Model = TypeVar("_Model")


def load_model_file(
    directory: str | Path,
    filename: str,
    name: str,
    parse: Callable[[dict[str, Any]], _Model],
    error: type[ModelFileError],
) -> _Model:
    """``parse`` of the JSON model file ``filename`` in ``directory``; a missing or unreadable
    one raises ``error``, naming the command that writes model ``name`` there."""
    path = Path(directory) / filename
    try:
        return parse(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError) as exc:
        hint = train_command(name, directory)
        raise error(f"no {name} model in {path}: run `{hint}` ({exc})") from exc


def use_models(folder: str | Path) -> None:
    """Load every model from ``folder`` from now on (a model it lacks is an error, never a
    quiet fall-back to the committed one). Raises :class:`NotADirectoryError`."""
    global _chosen
    path = Path(folder)
    if not path.is_dir():
        raise NotADirectoryError(f"no folder of models {folder}")
    _chosen = path.resolve()
