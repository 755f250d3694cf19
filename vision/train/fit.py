"""Fit a recipe's model: a small convolutional network over patches, exported to ONNX.

The network is deliberately small (three 3x3 convolutions, a hidden layer): it runs on a Pi
through onnxruntime in a few milliseconds for a whole board. Training adds what the renderer may
still miss: every turn of a square patch (a mirror for edge patches), per-channel gains, gamma,
offsets and noise. So the referee reads a doubtful patch in those views too and averages them
(the model file's ``views``, :func:`view_level`).
"""

from __future__ import annotations

import io
import json
import os
import platform
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from ..adapt import Adaptation
from ..decode import WRONG_COST
from ..model import FORMAT, INPUTS, OUTPUTS, CellModel, context_size
from .adapt import fit_adaptation
from .cache import FitCache
from .change import fit_change
from .dataset import VALIDATION_START, Patches, build
from .decode import fit_margins, judge_games
from .kernel import expected_costs
from .one_se import check_rule


def validation_indices(recipe: dict[str, Any], scenes: int) -> range:
    """The scene indices of the validation split of a training run of ``scenes`` scenes: the
    recipe's ``valid_scenes`` for a run of its ``scenes``, as many in proportion for a run of
    more or fewer (a small trial), rendered from other indices of the same domain."""
    count = round(scenes * int(recipe["valid_scenes"]) / int(recipe["scenes"]))
    return range(VALIDATION_START, VALIDATION_START + max(1, count))


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - the message is the point
        raise SystemExit(
            "referee train needs PyTorch: pip install -e '.[train]' "
            "(CPU wheels: --extra-index-url https://download.pytorch.org/whl/cpu)"
        ) from None
    return torch


#: The distributions whose versions a fit's numbers depend on (the renders: OpenCV, NumPy,
#: Mitsuba and Dr.Jit; the fit: PyTorch; the export and the views' fit: ONNX, onnxruntime): the
#: ones ``vision/train/constraints.txt`` pins, recorded in every model file a full fit writes
#: (``trained.libraries``).
FIT_LIBRARIES = (
    "torch",
    "numpy",
    "opencv-python-headless",
    "mitsuba",
    "drjit",
    "onnx",
    "onnxruntime",
)

#: What :func:`network`'s standardised channels add to a patch channel's spread before dividing
#: by it: a flat patch (an empty cell in even light) stays near zero instead of amplifying noise.
SPREAD_FLOOR = 0.02


def network(
    channels: int,
    px: int,
    classes: int,
    width: int,
    context: int = 0,
    full: int = 1,
    standardise: bool = False,
    separable: bool = False,
):
    """The patch classifier (a ``torch.nn.Module``): ``net(x, c)`` gives the logits of
    patches ``x`` (N x C x px x px) with their frames' contexts ``c`` (N x ``context``, or
    N x ``context`` x 1 x 1 as the exported network takes it; ignored when ``context`` is 0),
    ``net.embed(x, c)`` the last hidden layer. ``full``: convolutions at the patch's full
    resolution, before the first pooling. ``standardise``: the first convolution also sees
    every channel standardised over its own patch (less its mean, over its spread plus
    :data:`SPREAD_FLOOR`), computed inside the network: a piece of nearly the board's own colour
    stands out of its patch as much as a dark one. ``separable``: the convolutions after the
    first pooling are depthwise-separable (a 3x3 of each channel alone, then a 1x1 across the
    channels), a fraction of the cost of a full one: a finer patch for the same time a frame."""
    torch = _torch()
    nn = torch.nn
    w = width
    side = px // 8

    def block(into: int, out: int, split: bool = False) -> list:
        if split:  # each channel alone, then across them
            conv = [nn.Conv2d(into, into, 3, padding=1, groups=into), nn.Conv2d(into, out, 1)]
        else:
            conv = [nn.Conv2d(into, out, 3, padding=1)]
        return [*conv, nn.BatchNorm2d(out), nn.ReLU()]

    class Standardised(nn.Module):
        """The patch, and beside it each channel less its mean over its spread."""

        def forward(self, x):
            centred = x - x.mean(dim=(2, 3), keepdim=True)
            spread = torch.sqrt((centred * centred).mean(dim=(2, 3), keepdim=True))
            return torch.cat([x, centred / (spread + SPREAD_FLOOR)], 1)

    class PatchNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(
                *([Standardised()] if standardise else []),
                *block(2 * channels if standardise else channels, w),
                *[layer for _ in range(full - 1) for layer in block(w, w)],
                nn.MaxPool2d(2),
                *block(w, 2 * w, separable),
                nn.MaxPool2d(2),
                *block(2 * w, 2 * w, separable),
                nn.MaxPool2d(2),
                nn.Flatten(),
            )
            # the frame context enters beside the patch's features, through a layer of its own;
            # exported as an N x K x 1 x 1 input (OpenCV 4's ONNX importer cannot concatenate
            # a 2-D network input with the features), flattened first
            self.context = (
                nn.Sequential(nn.Flatten(), nn.Linear(context, w), nn.ReLU()) if context else None
            )
            self.hidden = nn.Sequential(
                nn.Linear(2 * w * side * side + (w if context else 0), 4 * w), nn.ReLU()
            )
            self.out = nn.Sequential(nn.Dropout(0.2), nn.Linear(4 * w, classes))

        def embed(self, x, c=None):
            f = self.features(x)
            if self.context is not None:
                f = torch.cat([f, self.context(c)], 1)
            return self.hidden(f)

        def forward(self, x, c=None):
            return self.out(self.embed(x, c))

    return PatchNet()


def _two_outputs(net):
    """``net`` as a module giving (logits, embedding)."""
    torch = _torch()

    class TwoOutputs(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def forward(self, x, c=None):
            embedding = self.net.embed(x, c)
            return self.net.out(embedding), embedding

    return TwoOutputs()


def with_embedding(onnx_bytes: bytes) -> bytes:
    """A format-1 network (``logits`` only) with its last hidden layer as a second output,
    ``embedding``: the same weights, so the same logits."""
    import onnxruntime

    session = onnxruntime.InferenceSession(onnx_bytes, providers=["CPUExecutionProvider"])
    if "embedding" in (output.name for output in session.get_outputs()):
        return onnx_bytes
    import onnx

    model = onnx.load_from_string(onnx_bytes)
    relu = [n for n in model.graph.node if n.op_type == "Relu"][-1].output[0]
    batch = model.graph.output[0].type.tensor_type.shape.dim[0].dim_param or "n"
    width = next(n for n in model.graph.node if n.op_type == "Gemm" and relu in n.input)
    weight = next(i for i in model.graph.initializer if i.name == width.input[1])
    model.graph.node.append(onnx.helper.make_node("Identity", [relu], ["embedding"]))
    model.graph.output.append(
        onnx.helper.make_tensor_value_info(
            "embedding", onnx.TensorProto.FLOAT, [batch, weight.dims[1]]
        )
    )
    onnx.checker.check_model(model)
    return model.SerializeToString()


def augment(x, c, kind: str, gen):
    """Random turns/mirrors and photometric changes of a batch (N x C x px x px tensor) and,
    alike, of its frame contexts (N x C*Q: the same gain, tint, gamma and offset, as the whole
    frame of each patch would have had them). A polar patch turns by any of its angles (its
    columns rolled)."""
    torch = _torch()
    n = x.shape[0]
    if kind == "square":
        x = torch.rot90(x, int(torch.randint(0, 4, (1,), generator=gen)), (2, 3))
    elif kind == "polar":
        x = torch.roll(x, int(torch.randint(0, x.shape[3], (1,), generator=gen)), 3)
    if torch.rand(1, generator=gen) < 0.5:  # every kind may be mirrored
        x = torch.flip(x, (3,))
    views = x.shape[1] // 3
    gain = torch.exp(0.15 * torch.randn(n, 1, 1, 1, generator=gen))
    tint = torch.exp(0.06 * torch.randn(n, 3, 1, 1, generator=gen)).repeat(1, views, 1, 1)
    gamma = torch.exp(0.15 * torch.randn(n, 1, 1, 1, generator=gen))
    offset = 0.03 * torch.randn(n, 1, 1, 1, generator=gen)
    x = torch.clamp(x, min=0.0) ** gamma * gain * tint + offset
    x = x + 0.015 * torch.randn(x.shape, generator=gen)
    if c.shape[1]:
        c = c.reshape(n, x.shape[1], -1)
        c = torch.clamp(c, min=0.0) ** gamma[..., 0] * gain[..., 0] * tint[..., 0] + offset[..., 0]
        c = c.reshape(n, -1)
    return x, c


@dataclass(frozen=True)
class Fitted:
    """A fitted network and how long its fit took (its thresholds and validation figures are
    fitted on the exported model, :func:`fit_reading`)."""

    net: Any
    fit_seconds: float


def predict(net, x: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The torch network ``net``'s class probabilities of patches ``x`` with contexts ``c``."""
    torch = _torch()
    net.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(x), 4096):
            logits = net(
                torch.from_numpy(x[i : i + 4096].astype(np.float32)),
                torch.from_numpy(c[i : i + 4096].astype(np.float32)),
            )
            out.append(torch.softmax(logits, 1).numpy())
    return np.concatenate(out) if out else np.zeros((0, 1))


#: Levels tried by :func:`view_level`.
VIEW_LEVELS = np.round(np.arange(0.5, 1.0001, 0.05), 2)
#: The largest share of the validation targets a model reads in every view: three more passes
#: over a quarter of the targets add at most three quarters of one pass over them all (the
#: network's pass is most of a frame's time, ``docs/benchmarks.md``).
VIEW_SHARE = 0.25


def view_level(probs: np.ndarray) -> float:
    """A model file's ``views.below`` from its validation targets' class probabilities read in
    one view (``probs``): the highest of :data:`VIEW_LEVELS` below which the likeliest class of
    at most :data:`VIEW_SHARE` of the targets lies. More views never cost accuracy, they cost
    time: as many targets as the share allows, the most doubtful first (0: none)."""
    top = probs.max(axis=1)
    fits = [float(v) for v in VIEW_LEVELS if np.mean(top < v) <= VIEW_SHARE]
    return max(fits, default=0.0)


#: Foreign thresholds tried by :func:`foreign_thresholds`.
THRESHOLDS = np.round(np.arange(0.05, 0.9951, 0.005), 3)


@dataclass(frozen=True)
class SceneReads:
    """How every validation scene is read at one foreign threshold, by the rule the referee
    is judged by (``vision-samples/README.md``, :func:`vision.bench.hand_scene_right`): a scene
    is *flagged* when any target is hidden; a clear scene flagged is a referee waiting for a
    hand that is not there; a scene with a hand is read wrong only when it is not flagged and a
    target is read as something it is not (a false verdict)."""

    with_hand: np.ndarray
    flagged: np.ndarray
    misread: np.ndarray

    @classmethod
    def at(cls, probs: np.ndarray, valid: Patches, foreign: int, threshold: float) -> SceneReads:
        """The scenes of ``valid`` read with ``probs`` at ``threshold``."""
        hidden = probs[:, foreign] >= threshold
        shown = _shown(probs, foreign)
        under_hand = valid.y == foreign
        wrong = ~hidden & (shown != np.where(under_hand, valid.under, valid.y))
        scenes, owner = valid.scenes()

        def anywhere(per_target: np.ndarray) -> np.ndarray:
            return np.bincount(owner, weights=per_target, minlength=len(scenes)) > 0

        return cls(anywhere(under_hand), anywhere(hidden), anywhere(wrong))

    @property
    def clear_flagged(self) -> int:
        """Clear scenes flagged."""
        return int(np.sum(self.flagged & ~self.with_hand))

    @property
    def hands_missed(self) -> int:
        """Scenes with a hand neither flagged nor read right."""
        return int(np.sum(self.with_hand & ~self.flagged & self.misread))

    @property
    def right(self) -> np.ndarray:
        """Per scene, whether it is read right."""
        clear = ~self.with_hand
        return np.where(clear, ~self.flagged & ~self.misread, self.flagged | ~self.misread)


@dataclass(frozen=True)
class Thresholds:
    """A model's two foreign thresholds: a frame is flagged (occluded) when any target's
    foreign probability reaches ``flag``; the cells of a flagged frame from ``hide`` on are
    left out of its observation (above ``flag``, a flagged frame may show every cell)."""

    flag: float
    hide: float


def foreign_thresholds(probs: np.ndarray, valid: Patches, foreign: int) -> Thresholds:
    """The foreign thresholds fitted on the validation scenes ``valid`` (``probs``: the model's
    class probabilities of its targets).

    ``flag``: of :data:`THRESHOLDS`, the one of least expected cost (:func:`flag_costs`), where
    a scene with a hand missed costs :data:`~vision.decode.WRONG_COST` (a false verdict, as in
    the decoder's fit) and a clear scene flagged costs 1 (the referee waits).

    ``hide``: of :data:`THRESHOLDS`, the middle of those that report fewest targets wrongly
    in the scenes with a hand flagged at ``flag``: a target under the hand shown as something
    it is not, or a target in view left out. Whether a hand is there and which cells it hides
    are two questions: a frame flagged is not judged, and how many of its cells it shows is
    its own trade.

    ``probs`` judge a cell as the reader does: by the largest foreign probability of its
    targets (:func:`cell_foreign`)."""
    pf = probs[:, foreign]
    costs = flag_costs(probs, valid, foreign)
    flag = _middle(THRESHOLDS[costs <= costs.min() + 1e-9])
    reads = SceneReads.at(probs, valid, foreign, flag)
    _, owner = valid.scenes()
    judged = (reads.flagged & reads.with_hand)[owner]
    under_hand = valid.y == foreign
    shown = _shown(probs, foreign)
    misread = under_hand & (shown != valid.under)
    errors = np.array(
        [np.sum(judged & np.where(pf >= t, ~under_hand, misread)) for t in THRESHOLDS]
    )
    return Thresholds(flag, _middle(THRESHOLDS[errors == errors.min()]))


def flag_costs(probs: np.ndarray, valid: Patches, foreign: int) -> np.ndarray:
    """The expected cost of each of :data:`THRESHOLDS` as the flag (:func:`foreign_thresholds`):
    a scene is flagged when its most foreign target reaches the threshold; one with a hand
    that would be read wrong unflagged (:class:`SceneReads`) costs
    :data:`~vision.decode.WRONG_COST` below it, a clear scene costs 1 at or above it. Each
    scene's score (the logit of its most foreign target's probability) is smoothed by a kernel
    over the scores of its kind (:func:`vision.train.kernel.expected_costs`): counted as they
    fall, the least cost jumps with the one scene nearest it."""
    unflagged = SceneReads.at(probs, valid, foreign, np.inf)
    _, owner = valid.scenes()
    missed = unflagged.with_hand & unflagged.misread
    return expected_costs(
        _logit(_largest(owner, probs[:, foreign])),
        np.where(missed, WRONG_COST, 0.0),
        (~unflagged.with_hand).astype(float),
        _logit(THRESHOLDS),
    )


def _logit(p: np.ndarray) -> np.ndarray:
    """``log(p / (1 - p))``, ``p`` kept within 1e-6 of 0 and 1."""
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def cell_foreign(probs: np.ndarray, valid: Patches, foreign: int) -> np.ndarray:
    """``probs`` with each target's foreign probability raised to the largest of its cell's
    targets (in its scene): the reader hides a cell whole, a Spectrangle cell when any of its
    three edges looks foreign (:meth:`~vision.readers.fitted.FittedReader.read`), so the
    thresholds are fitted on what it hides. A square game's targets are its cells."""
    _, owner = np.unique(np.stack([valid.scene, valid.cell], axis=1), axis=0, return_inverse=True)
    owner = owner.ravel()
    out = probs.copy()
    out[:, foreign] = _largest(owner, probs[:, foreign])[owner]
    return out


def _largest(owner: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per group ``0 .. owner.max()``, the largest of its ``values`` (which are at least 0)."""
    largest = np.zeros(owner.max(initial=-1) + 1)
    np.maximum.at(largest, owner, values)
    return largest


def _shown(probs: np.ndarray, foreign: int) -> np.ndarray:
    """The class each target would be reported as if it were not hidden: its likeliest other
    than ``foreign``."""
    return np.where(np.arange(probs.shape[1]) == foreign, -1.0, probs).argmax(axis=1)


def _middle(values: np.ndarray) -> float:
    """The middle one of sorted ``values`` (the one furthest from both ends of a flat best)."""
    return float(values[len(values) // 2])


def validation_figures(
    probs: np.ndarray, valid: Patches, foreign: int, thresholds: Thresholds
) -> dict[str, Any]:
    """How the validation split is read at ``thresholds``: targets of clear cells read right,
    targets under a hand hidden in the flagged scenes, and whole scenes read right and clear
    scenes flagged (:class:`SceneReads`); ``probs`` judge cells whole (:func:`cell_foreign`)."""
    shown = _shown(probs, foreign)
    clear = valid.y != foreign
    reads = SceneReads.at(probs, valid, foreign, thresholds.flag)
    _, owner = valid.scenes()
    hidden = reads.flagged[owner] & (probs[:, foreign] >= thresholds.hide)
    return {
        "valid_patches": len(valid.y),
        "valid_scenes": len(reads.right),
        "valid_clear_accuracy": round(float(np.mean(shown[clear] == valid.y[clear])), 6),
        "valid_clear_hidden": round(float(np.mean(hidden[clear])), 6),
        "valid_foreign_hidden": round(float(np.mean(hidden[~clear])), 6) if (~clear).any() else 0.0,
        "valid_scenes_right": round(float(np.mean(reads.right)), 4),
        "valid_clear_flagged": reads.clear_flagged,
        "valid_hands_missed": reads.hands_missed,
    }


def fit(recipe: dict[str, Any], train: Patches, seed: int, epochs: int, threads: int = 1) -> Fitted:
    """Fit the recipe's network on ``train`` with ``threads`` threads (two take 0.7 times as
    long as one on a quiet two-core machine; on a busy one, spinning threads made a step ten
    times slower: give it only the cores that are free)."""
    torch = _torch()
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    classes = recipe["classes"]
    spec = recipe["patch"]
    net = recipe_network(recipe)
    bf16 = _precision(recipe) == "bf16"
    if bf16:  # bfloat16 products on channels-last tensors: 2.4 times the steps a second here
        net = net.to(memory_format=torch.channels_last)
    x = torch.from_numpy(train.x.astype(np.float32))
    c = torch.from_numpy(train.context.astype(np.float32))
    y = torch.from_numpy(train.y.astype(np.int64))
    counts = np.bincount(train.y, minlength=len(classes)).astype(np.float64)
    weights = torch.tensor((counts.sum() / np.maximum(counts, 1.0) / len(classes)) ** 0.5)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights.float(), label_smoothing=0.02)
    batch = 256
    steps = epochs * max(1, len(x) // batch)
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    start = time.perf_counter()
    for epoch in range(epochs):
        net.train()
        order = torch.randperm(len(x), generator=gen)
        total = 0.0
        for i in range(0, len(x) - batch + 1, batch):
            idx = order[i : i + batch]
            xb, cb = augment(x[idx], c[idx], spec["kind"], gen)
            if bf16:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    logits = net(xb.contiguous(memory_format=torch.channels_last), cb)
                loss = loss_fn(logits.float(), y[idx])
            else:  # the batch as augment gives it: made contiguous, a fit's weights would differ
                loss = loss_fn(net(xb, cb), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * batch
        print(f"  epoch {epoch + 1}/{epochs}: loss {total / len(x):.4f}", flush=True)
    if bf16:  # the weights stay float32; exported and read in the usual layout
        net = net.to(memory_format=torch.contiguous_format)
    return Fitted(net, round(time.perf_counter() - start, 1))


def recipe_network(recipe: dict[str, Any]):
    """The recipe's :func:`network`, before its fit."""
    spec = recipe["patch"]
    channels = 3 * len(spec["heights_mm"])
    context = context_size(
        channels, tuple(recipe.get("context", ())), tuple(recipe.get("context_rings", ()))
    )
    width, full = int(recipe.get("width", 16)), int(recipe.get("full", 1))
    standardise = bool(recipe.get("standardise", False))
    separable = bool(recipe.get("separable", False))
    classes = len(recipe["classes"])
    return network(channels, spec["px"], classes, width, context, full, standardise, separable)


def _precision(recipe: dict[str, Any]) -> str:
    """A recipe's ``precision``: ``float32`` (the default) or ``bf16`` (the network's products in
    bfloat16 on channels-last tensors, its weights and loss in float32)."""
    precision = str(recipe.get("precision", "float32"))
    if precision not in ("float32", "bf16"):
        raise ValueError(f"a recipe's precision is float32 or bf16, not {precision!r}")
    return precision


def export(fitted: Fitted, recipe: dict[str, Any], name: str, out: Path, info: dict) -> Path:
    """Write ``out/NAME.onnx`` and ``out/NAME.json``; return the JSON's path. Its foreign
    thresholds are 1.0 (nothing flagged) until :func:`fit_reading` fits them."""
    torch = _torch()
    spec = recipe["patch"]
    channels = 3 * len(spec["heights_mm"])
    quantiles = list(recipe.get("context", ()))
    rings = list(recipe.get("context_rings", ()))
    net = fitted.net.eval()
    dummy = [torch.zeros(1, channels, spec["px"], spec["px"])]
    if quantiles:
        dummy.append(torch.zeros(1, context_size(channels, tuple(quantiles), tuple(rings)), 1, 1))
    inputs = list(INPUTS[: len(dummy)])
    buf = io.BytesIO()
    torch.onnx.export(
        _two_outputs(net),
        tuple(dummy),
        buf,
        input_names=inputs,
        output_names=list(OUTPUTS),
        dynamic_axes={n: {0: "n"} for n in (*inputs, *OUTPUTS)},
        opset_version=13,
        dynamo=False,
    )
    out.mkdir(parents=True, exist_ok=True)
    _write_whole(out / f"{name}.onnx", buf.getvalue())
    meta = {
        "format": FORMAT,
        "games": recipe["games"],
        "classes": recipe["classes"],
        "patch": spec,
        **({"context": quantiles} if quantiles else {}),
        **({"context_rings": rings} if quantiles and rings else {}),
        "foreign_threshold": 1.0,
        "hide_threshold": 1.0,
        "change_threshold": info.get("change_threshold"),
        "change_window": info.get("change_window", 1.0),
        "change_box": info.get("change_box", 1),
        "adapt": Adaptation().to_json(),
        "trained": {
            **info,
            "fit_seconds": fitted.fit_seconds,
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        },
    }
    path = out / f"{name}.json"
    _write_meta(path, meta)
    return path


def fit_environment(threads: int) -> dict[str, Any]:
    """What a fit's numbers depend on beyond its recipe and seed: the threads it ran on, the
    versions of the libraries that render and fit (``vision/train/constraints.txt`` pins them)
    and the processor (PyTorch picks its kernels, and so its rounding, by instruction set)."""
    return {"fit_threads": threads, "libraries": fit_libraries(), "processor": processor()}


def fit_libraries() -> dict[str, str | None]:
    """The installed versions of the libraries that render and fit (None: not installed)."""
    return {name: _installed(name) for name in FIT_LIBRARIES}


def processor() -> dict[str, str | None]:
    """This machine's architecture, processor model (``/proc/cpuinfo``; None where there is
    none) and the instruction set PyTorch's kernels use here (None without PyTorch)."""
    try:
        import torch
    except ImportError:
        capability = None
    else:
        capability = str(torch.backends.cpu.get_cpu_capability())
    return {"machine": platform.machine(), "model": _cpu_model(), "kernels": capability}


def _cpu_model() -> str | None:
    """The processor's model name as Linux reports it (None off Linux)."""
    try:
        lines = Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else None


def _installed(distribution: str) -> str | None:
    """The installed version of ``distribution`` (None: not installed)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def train(
    name: str,
    recipe: dict[str, Any],
    *,
    seed: int = 1,
    scenes: int | None = None,
    epochs: int | None = None,
    out: Path,
    workers: int | None = None,
    cache: FitCache | None = None,
) -> Path:
    """Render, fit and export one model; return its JSON's path. With a ``cache``, the renders,
    the network and the change test are read from it where it has them and stored in it as
    they are done: the same renders and network as without, a stopped fit going on where it
    stopped."""
    n = int(scenes or recipe["scenes"])
    indices = validation_indices(recipe, n)
    print(f"{name}: rendering {n} + {len(indices)} scenes", flush=True)
    data, data_s = _render(recipe, range(n), seed, workers, cache)
    valid, valid_s = _render(recipe, indices, seed, workers, cache)
    render_s = data_s + valid_s
    print(f"{name}: {len(data.y)} patches, {len(valid.y)} to validate ({render_s:.0f} s)")
    # the renders are done: the fit may have the cores they had
    threads = workers or os.cpu_count() or 1
    epochs = int(epochs or recipe["epochs"])
    fitted = _fit_network(recipe, data, seed, epochs, threads, cache)
    change = _change_test(recipe, max(1, n // 4), seed, workers, cache)
    print(f"{name}: {json.dumps(change)}", flush=True)
    info = {
        "seed": seed,
        "scenes": n,
        "epochs": epochs,
        "domain": "train",
        **({"domain_widened": recipe["domain"]} if recipe.get("domain") else {}),
        "patches": len(data.y),
        "render_seconds": round(render_s, 1),
        **change,
        **fit_environment(threads),
    }
    path = export(fitted, recipe, name, out, info)
    print(f"{name}: fitted in {fitted.fit_seconds} s -> {path}", flush=True)
    fit_reading(path, valid)
    refit_adaptation(name, recipe, out, seed, workers)
    return refit_decode(name, recipe, out, seed, workers)


def _render(
    recipe: dict[str, Any], scenes: range, seed: int, workers: int | None, cache: FitCache | None
) -> tuple[Patches, float]:
    """The patches of ``scenes`` and the seconds their renders took (those of a cache's
    entries when they were rendered)."""
    if cache is not None:
        return cache.build(recipe, scenes, seed, workers)
    start = time.perf_counter()
    data = build(recipe, scenes, seed, workers=workers)
    return data, time.perf_counter() - start


def _fit_network(
    recipe: dict[str, Any],
    data: Patches,
    seed: int,
    epochs: int,
    threads: int,
    cache: FitCache | None,
) -> Fitted:
    """:func:`fit`, or the network a ``cache`` kept of the same fit."""
    if cache is None:
        return fit(recipe, data, seed, epochs, threads)
    torch = _torch()
    key = cache.key("network", recipe, seed, data=data.digest(), epochs=epochs, threads=threads)
    path = cache.path(key, ".pt")
    if path.exists():
        kept = torch.load(path, weights_only=True)
        net = recipe_network(recipe)
        net.load_state_dict(kept["state"])
        print(f"  the network of {path}", flush=True)
        return Fitted(net, float(kept["fit_seconds"]))
    fitted = fit(recipe, data, seed, epochs, threads)
    state = {"state": fitted.net.state_dict(), "fit_seconds": fitted.fit_seconds}
    cache.store(key, ".pt", lambda f: torch.save(state, f))
    return fitted


def _change_test(
    recipe: dict[str, Any], pairs: int, seed: int, workers: int | None, cache: FitCache | None
) -> dict[str, float]:
    """:func:`~vision.train.change.fit_change` on ``pairs``, or what a ``cache`` kept of it."""
    if cache is None:
        return fit_change(recipe, pairs, seed, workers)
    key = cache.key("change", recipe, seed, pairs=pairs)
    change = cache.load_json(key)
    if change is None:
        change = fit_change(recipe, pairs, seed, workers)
        cache.store_json(key, change)
    return change


def refit_threshold(
    name: str,
    recipe: dict[str, Any],
    out: Path,
    seed: int,
    workers: int | None,
    scenes: int | None = None,
) -> Path:
    """Fit which targets are read in every view and the foreign thresholds (:func:`fit_reading`)
    of the existing model ``out/NAME.json`` again on the validation scenes :func:`train`
    rendered for it (the same seed and indices; ``scenes``: those of a training run of that
    many scenes, default the model's); the network is kept. Return the JSON's path."""
    path = out / f"{name}.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    indices = validation_indices(recipe, int(scenes or meta["trained"]["scenes"]))
    fit_reading(path, build(recipe, indices, seed, workers=workers))
    return path


def fit_reading(path: Path, valid: Patches) -> Thresholds:
    """Fit how the model of ``path`` reads, on the validation patches ``valid``, its network
    run as the referee runs it (onnxruntime): first which targets it reads in every view
    (:func:`view_level`, from its probabilities in one view), then its foreign thresholds
    (:func:`foreign_thresholds`) with those views. Both, and the validation figures, are
    written to the model file."""
    meta = json.loads(path.read_text(encoding="utf-8"))
    model = replace(CellModel.load(path), views_below=0.0)
    level = view_level(_model_probs(model, valid))
    model = replace(model, views_below=level)
    probs = cell_foreign(_model_probs(model, valid), valid, model.foreign)
    thresholds = foreign_thresholds(probs, valid, model.foreign)
    meta["views"] = {"below": level}
    meta["foreign_threshold"] = round(thresholds.flag, 4)
    meta["hide_threshold"] = round(thresholds.hide, 4)
    meta["trained"].update(validation_figures(probs, valid, model.foreign, thresholds))
    _write_meta(path, meta)
    figures = json.dumps(meta["trained"], sort_keys=True)
    print(f"{path.stem}: views below {level}, {thresholds}, {figures} -> {path}", flush=True)
    return thresholds


def _model_probs(model: CellModel, valid: Patches) -> np.ndarray:
    """``model``'s class probabilities of every validation target (each with its frame's
    context, as the referee gives it)."""
    net = model.network()
    return np.concatenate(
        [
            model.predict_proba(valid.x[i : i + 4096], net, valid.context[i : i + 4096])
            for i in range(0, len(valid.x), 4096)
        ]
    )


def refit_change(
    name: str,
    recipe: dict[str, Any],
    out: Path,
    seed: int,
    workers: int | None,
    pairs: int | None = None,
) -> Path:
    """Fit the change threshold of the existing model ``out/NAME.json`` again on ``pairs``
    rendered pairs (default: a quarter of its training scenes, as :func:`train` does); the
    network is kept. Return the JSON's path."""
    path = out / f"{name}.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    pairs = pairs or max(1, int(meta["trained"]["scenes"]) // 4)
    change = fit_change(recipe, pairs, seed, workers)
    meta["change_threshold"] = change["change_threshold"]
    meta["change_window"] = change["change_window"]
    meta["change_box"] = change["change_box"]
    trained = {k: v for k, v in meta["trained"].items() if not k.startswith("change_")}
    meta["trained"] = {**trained, **change}
    _write_meta(path, meta)
    print(f"{name}: {json.dumps(change)} -> {path}")
    return path


def refit_adaptation(
    name: str,
    recipe: dict[str, Any],
    out: Path,
    seed: int,
    workers: int | None,
    games: int | None = None,
) -> Path:
    """Fit the adaptation (:mod:`vision.adapt`) of the existing model ``out/NAME.json`` on
    ``games`` sample games (default the recipe's ``adapt_games``); the network is kept (given
    its ``embedding`` output if it was written before it had one). Return the JSON's path."""
    path = out / f"{name}.json"
    onnx_path = path.with_suffix(".onnx")
    _write_whole(onnx_path, with_embedding(onnx_path.read_bytes()))
    meta = json.loads(path.read_text(encoding="utf-8"))
    # a format-1 file now has the embedding (format 2); a later format stays what it is
    meta["format"] = max(int(meta.get("format", 1)), 2)
    meta.setdefault("adapt", Adaptation().to_json())
    _write_meta(path, meta)
    adaptation, figures = fit_adaptation(
        path, recipe, int(games or recipe.get("adapt_games", 24)), seed, workers
    )
    meta["adapt"] = adaptation.to_json()
    trained = {k: v for k, v in meta["trained"].items() if not k.startswith("adapt_")}
    meta["trained"] = {**trained, **figures}
    _write_meta(path, meta)
    shown = {k: v for k, v in meta["adapt"].items() if k != "prototypes"}
    print(f"{name}: adapt {json.dumps(shown)} {json.dumps(figures)} -> {path}")
    return path


def refit_decode(
    name: str,
    recipe: dict[str, Any],
    out: Path,
    seed: int,
    workers: int | None,
    games: int | None = None,
) -> Path:
    """Fit the illegal, close and ask margins (:mod:`vision.decode`) of the existing model
    ``out/NAME.json`` on ``games`` sample games (default the recipe's ``decode_games``), its
    network and adaptation kept. Return the JSON's path."""
    path = out / f"{name}.json"
    games = int(games or recipe.get("decode_games", 24))
    close_rule = recipe.get("decode_close", "least")
    check_rule("decode_close", close_rule)  # before the games are filmed
    judged = judge_games(path, recipe, games, seed, workers)
    margins, figures = fit_margins(judged, close_rule)
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta["decode"] = margins
    meta["trained"].update(figures)
    _write_meta(path, meta)
    print(f"{name}: decode {json.dumps(meta['decode'])} {json.dumps(figures)} -> {path}")
    return path


def _write_meta(path: Path, meta: dict[str, Any]) -> None:
    """Write a model file's JSON."""
    _write_whole(path, (json.dumps(meta, indent=1) + "\n").encode("utf-8"))


def _write_whole(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` all at once (a temporary file renamed over it): a bench
    reading a models folder while a fit rewrites it never reads half a file."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)
