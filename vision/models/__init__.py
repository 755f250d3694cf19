"""The readers' fitted models: ``NAME.onnx`` + ``NAME.json`` (see :mod:`vision.model`), written
by ``referee train`` from ``vision/train/recipes.json``."""

from pathlib import Path

#: The folder of the committed model files.
MODELS_DIR = Path(__file__).parent
