"""What a patch means: a fitted model over the patches of :mod:`vision.sampling`.

A model is data, in ``vision/models/``: ``NAME.onnx`` (a small convolutional network, run with
onnxruntime on one thread (:class:`Network`); two outputs, ``logits`` and ``embedding``, its
last hidden layer, which :mod:`vision.adapt` compares with what this table has shown) and
``NAME.json`` (the games it reads, its classes, the :class:`~vision.sampling.PatchSpec` it was
fitted with, the *foreign* and change thresholds, the adaptation's bounds and how it was
trained). ``referee train`` (``vision/train/``) writes both, reproducibly from a seed.

A network fitted with a frame *context* (the model file's ``context``) also takes, beside each
patch, the same few numbers of its whole frame (:func:`frame_context`): what the board looks
like in this frame, with this light and camera curve, so that a patch is judged against the rest
of its board rather than against fixed colours. A file that names ``context_rings`` adds the
same for rings round the patches' centres: how big the frame's pieces look, ring by ring (a
stout set's small piece fills as many rings as a slender set's larger one).

Classes are strings: ``empty``, the game's contents (``orange``, ``white-3``,
``black-circle``, an edge colour) and ``foreign`` (a hand, a sleeve, anything that is neither
the board nor a piece).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from .adapt import Adaptation
from .models import ModelFileError, models_dir, train_command
from .native import import_uninterrupted
from .sampling import PatchSpec

onnxruntime = import_uninterrupted("onnxruntime")

FOREIGN = "foreign"
EMPTY = "empty"
#: Version of the model file format written (2: the network also outputs ``embedding``; 3: the
#: file may name a frame ``context``, a second input of the network; 4: it may name
#: ``context_rings``).
FORMAT = 4
#: Model file formats this code reads.
FORMATS = (2, 3, 4)
#: The network's outputs, by name (OpenCV 4's ``forward()`` without names gives the first
#: unconnected one, which need not be the logits).
OUTPUTS = ("logits", "embedding")
#: The network's inputs, by name: the patches, and the frame context of a network that has one.
INPUTS = ("patches", "context")


class ModelError(ModelFileError):
    """A model file is missing or unreadable."""


@dataclass(frozen=True, eq=False)
class CellModel:
    """A fitted patch classifier: :meth:`predict_proba` gives class probabilities per patch."""

    name: str
    games: tuple[str, ...]
    classes: tuple[str, ...]
    spec: PatchSpec
    #: a frame any of whose cells' ``foreign`` probability reaches this is occluded (fitted on
    #: validation, :func:`vision.train.fit.foreign_thresholds`)
    foreign_threshold: float
    #: in an occluded frame, the cells whose ``foreign`` probability reaches this are hidden
    #: (left out of the observation); it may lie above ``foreign_threshold`` (a flagged frame
    #: then leaves out only the cells from it on, maybe none)
    hide_threshold: float
    #: a target whose change score (:mod:`vision.change`) reaches this has changed since the
    #: last accepted frame; None: every target is classified every time
    change_threshold: float | None
    #: the middle share of a patch's side its change score is taken over (1: the whole patch)
    change_window: float
    #: the side in pixels of the square its change score averages the difference over (1: none)
    change_box: int
    #: how far this table's accepted positions may move a prediction (:mod:`vision.adapt`)
    adaptation: Adaptation
    #: quantiles of the frame context (:func:`frame_context`); empty: the network has none
    context: tuple[float, ...]
    #: edges in pixels from a square patch's centre of the rings the frame context also takes
    #: (:func:`ring_means`); empty: none
    context_rings: tuple[float, ...]
    #: a target whose likeliest class is below this probability is read again in every other
    #: view of its patch (:meth:`~vision.sampling.PatchSpec.views`) and the views' logits
    #: averaged (the model file's ``views``, fitted by :func:`vision.train.fit.view_level`);
    #: 0: one view
    views_below: float
    meta: dict[str, Any]
    onnx: bytes
    #: the model file it was read from
    meta_path: Path

    @property
    def foreign(self) -> int:
        """Column of the ``foreign`` class."""
        return self.classes.index(FOREIGN)

    @classmethod
    def load(cls, path: str | Path) -> CellModel:
        """The model of ``NAME.json`` (and the ``NAME.onnx`` beside it)."""
        path = Path(path)
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
            onnx = path.with_suffix(".onnx").read_bytes()
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot read model {path}: {exc}") from None
        if meta.get("format") not in FORMATS:
            known = ", ".join(map(str, FORMATS))
            raise ModelError(f"model {path} has format {meta.get('format')}, not one of {known}")
        if meta.get("context_rings") and meta["patch"]["kind"] != "square":
            raise ModelError(f"model {path} has context rings, which need square patches")
        return cls(
            name=path.stem,
            games=tuple(meta["games"]),
            classes=tuple(meta["classes"]),
            spec=PatchSpec.from_json(meta["patch"]),
            foreign_threshold=float(meta["foreign_threshold"]),
            hide_threshold=float(meta.get("hide_threshold", meta["foreign_threshold"])),
            change_threshold=(
                float(meta["change_threshold"]) if meta.get("change_threshold") else None
            ),
            change_window=float(meta.get("change_window", 1.0)),
            change_box=int(meta.get("change_box", 1)),
            adaptation=Adaptation.from_json(meta.get("adapt")),
            context=tuple(float(q) for q in meta.get("context", ())),
            context_rings=tuple(float(r) for r in meta.get("context_rings", ())),
            views_below=float(meta.get("views", {}).get("below", 0.0)),
            meta=meta,
            onnx=onnx,
            meta_path=path,
        )

    def network(self) -> Network:
        """A new runnable copy of this model's network (one per reader)."""
        return Network(self.onnx)

    def frame_context(self, patches: np.ndarray) -> np.ndarray:
        """The frame context of all the targets' ``patches`` of one frame (empty when the
        network takes none)."""
        if not self.context:
            return np.zeros(0, np.float32)
        rings = ring_means(patches, self.context_rings) if self.context_rings else None
        return frame_context(self.spec.middle(patches), self.context, rings)

    def forward(
        self,
        patches: np.ndarray,
        net: Network | None = None,
        context: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Logits (N x K float64) and embeddings (N x D float64) of patches (N x C x px x px).

        ``context``: the frame context (:meth:`frame_context` of *all* the frame's targets, or
        one row per patch); by default that of ``patches``, taken as a whole frame. Ignored by
        a network without one.

        A patch whose likeliest class is below :attr:`views_below` is read in every view
        (:meth:`~vision.sampling.PatchSpec.views`): its logits and embedding are the means of
        all its views'. Confident patches, most of a board, cost one pass."""
        if len(patches) == 0:
            return np.zeros((0, len(self.classes))), np.zeros((0, 0))
        net = net if net is not None else self.network()
        ctx = None
        if self.context:
            ctx = self.frame_context(patches) if context is None else np.asarray(context)
        logits, embedding = self._pass(patches, net, ctx)
        if self.views_below > 0:
            doubt = np.flatnonzero(softmax(logits).max(axis=1) < self.views_below)
            if len(doubt):
                views = self.spec.views(patches[doubt])
                rows = ctx if ctx is None or ctx.ndim == 1 else np.tile(ctx[doubt], (len(views), 1))
                # every view in one pass (one call's overhead, not one a view)
                view_logits, view_embedding = self._pass(np.concatenate(views), net, rows)
                shape = (len(views), len(doubt))
                logits[doubt] = np.mean([logits[doubt], *view_logits.reshape(*shape, -1)], axis=0)
                embedding[doubt] = np.mean(
                    [embedding[doubt], *view_embedding.reshape(*shape, -1)], axis=0
                )
        return logits, embedding

    def _pass(
        self, patches: np.ndarray, net: Network, ctx: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """One pass of the network over ``patches`` with the context ``ctx`` (one row, or one
        row per patch; None: the network takes none)."""
        n = len(patches)
        rows = None
        if ctx is not None:
            rows = np.broadcast_to(ctx.astype(np.float32), (n, ctx.shape[-1]))
            # N x K x 1 x 1: OpenCV 4's importer cannot concatenate a 2-D input (fit.network)
            rows = np.ascontiguousarray(rows).reshape(n, -1, 1, 1)
        logits, embedding = net.run(np.ascontiguousarray(patches, dtype=np.float32), rows)
        return (
            logits.astype(np.float64).reshape(n, -1),
            embedding.astype(np.float64).reshape(n, -1),
        )

    def predict_proba(
        self,
        patches: np.ndarray,
        net: Network | None = None,
        context: np.ndarray | None = None,
    ) -> np.ndarray:
        """Class probabilities (N x K float64) of patches (N x C x px x px float32)."""
        return softmax(self.forward(patches, net, context)[0])


def frame_context(
    middles: np.ndarray, quantiles: tuple[float, ...], rings: np.ndarray | None = None
) -> np.ndarray:
    """What one frame's board looks like, as a network's second input: each target's mean over
    the middle of its patch (``middles``, N x C x ...: :meth:`~vision.sampling.PatchSpec.middle`,
    per channel), then the ``quantiles`` of those over the frame's targets; channel by channel
    (C x Q values, float32). Pieces and empty cells both enter it, in whatever share the
    position has: the network learns to read a patch against it, whatever the light and the
    camera's curve did to every colour of the frame alike.

    ``rings`` (N x C x R, :func:`ring_means`): each channel's Q values are followed by the
    ``quantiles`` of each ring's means in turn (C x Q x (1 + R) values, still channel by
    channel, so that a change of the light moves them as it moves the patches)."""
    n, c = middles.shape[:2]
    means = np.asarray(middles, np.float32).mean(axis=(2, 3))[:, :, None]
    if rings is not None:
        means = np.concatenate([means, np.asarray(rings, np.float32)], axis=2)
    if n == 0:
        return np.zeros(c * len(quantiles) * means.shape[2], np.float32)
    # Q x C x (1 + R) -> C x (1 + R) x Q
    values = np.quantile(means, quantiles, axis=0).transpose(1, 2, 0)
    return values.reshape(-1).astype(np.float32)


def context_size(channels: int, quantiles: tuple[float, ...], rings: tuple[float, ...]) -> int:
    """The length of a frame context of ``channels``, ``quantiles`` and ring ``rings`` edges
    (:func:`frame_context`)."""
    return channels * len(quantiles) * (1 + max(0, len(rings) - 1))


def ring_means(patches: np.ndarray, edges: tuple[float, ...]) -> np.ndarray:
    """Each square patch's per-channel means over the rings round its centre between
    consecutive ``edges`` (pixels from the centre: 0, 2, 4 gives the disc of radius 2 and the
    ring from 2 to 4): N x C x (len(edges) - 1), float32."""
    px = patches.shape[-1]
    yy, xx = np.mgrid[:px, :px] - (px - 1) / 2
    radius = np.hypot(yy, xx)
    flat = np.asarray(patches, np.float32).reshape(*patches.shape[:2], -1)
    masks = [((radius >= lo) & (radius < hi)).reshape(-1) for lo, hi in pairwise(edges)]
    if any(not m.any() for m in masks):
        raise ValueError(f"context rings {edges} leave a ring without pixels in a {px} px patch")
    out = np.empty((*patches.shape[:2], len(masks)), np.float32)
    for r, mask in enumerate(masks):
        out[:, :, r] = flat[:, :, mask].mean(axis=2)
    return out


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise probabilities of ``logits`` (N x K)."""
    z = logits - logits.max(axis=1, keepdims=True) if len(logits) else logits
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class Network:
    """A model's network, ready to run: an onnxruntime session on one thread (as the speed
    targets count, and as OpenCV runs the rest of a frame), one per reader."""

    def __init__(self, onnx: bytes) -> None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only
        # no memory arena: it keeps the peak of the largest batch (doubtful patches read in every
        # view), 19 MB resident in the loop with a 40 px Gobblet network, for no speed
        options.enable_cpu_mem_arena = False
        try:
            self._session = onnxruntime.InferenceSession(
                onnx, options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own types for bad files
            raise ModelError(f"cannot load the network: {exc}") from None

    def run(
        self, patches: np.ndarray, context: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The outputs ``logits`` and ``embedding`` of ``patches`` (float32 N x C x px x px)
        and, for a network that takes one, their ``context`` rows (N x K x 1 x 1)."""
        feeds = {INPUTS[0]: patches}
        if context is not None:
            feeds[INPUTS[1]] = context
        logits, embedding = self._session.run(list(OUTPUTS), feeds)
        return logits, embedding


def model_for(game: str, directory: str | None = None) -> CellModel:
    """The model that reads ``game`` (from :func:`~vision.models.models_dir` unless
    ``directory`` is given)."""
    return _model_in(game, str(models_dir(directory)))


@cache
def _model_in(game: str, directory: str) -> CellModel:
    folder = Path(directory)
    for path in sorted(folder.glob("*.json")):
        try:
            games = json.loads(path.read_text(encoding="utf-8")).get("games", ())
        except (OSError, ValueError):
            continue
        if game in games:
            return CellModel.load(path)
    raise ModelError(f"no model for {game} in {folder}: run `{train_command(game, folder)}`")
