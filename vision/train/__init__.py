"""Fitting the readers' models (development only: needs PyTorch, ``pip install -e .[train]``).

``referee train NAME`` renders domain-randomised scenes (:data:`vision.synth.Domain.TRAIN`),
cuts the patches the model will see through the real locator and sampler, fits a small
convolutional network and writes ``vision/models/NAME.onnx`` and ``NAME.json``. The recipe of
each model is data: ``vision/train/recipes.json``. See ``docs/vision/models.md``.
"""
