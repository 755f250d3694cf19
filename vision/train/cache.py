"""A fit's work kept on disk (``referee train --cache DIR``), so that a fit stopped part way
(a killed process, the end of a working day on a slow machine) goes on where it stopped: the
rendered patches, a chunk of scenes at a time, and the fitted network.

Each entry is named by a digest of everything it depends on: the recipe, the seed, what it is
(which scenes; a network's patches, epochs and threads), the code and board files that render and
cut the scenes, the two fitted models the locator reads while cutting them and the training
libraries' versions. Any change to one of them names another entry, which is computed afresh;
an entry is never read for other inputs than its own. Entries are written whole (a temporary
file, flushed to disk, renamed over the name), so a fit killed while writing one leaves none.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from .dataset import Patches, build

ROOT = Path(__file__).resolve().parents[2]
#: What the renders and patches depend on besides the recipe, under the project's root: the code
#: that renders, locates and cuts a scene, the boxes' geometry and the models the locator reads.
SOURCES = ("vision/**/*.py", "engine/**/*.py", "hardware/boards/*.json")
MODELS_READ = ("vision/models/edges.json", "vision/models/still_look.json")


#: Scenes an entry of patches holds: a fit stopped part way renders at most these again.
CHUNK = 250


class FitCache:
    """The entries of one cache folder, for fits with the training ``libraries`` (name:
    version) installed."""

    def __init__(self, folder: str | Path, libraries: dict[str, str | None]) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.libraries = dict(libraries)

    def key(self, kind: str, recipe: dict[str, Any], seed: int, **what: Any) -> str:
        """The name of the entry of ``kind`` (``patches``, ``network``, ``change``) for
        ``recipe``, ``seed`` and ``what`` (JSON values), with this code and these libraries."""
        data = {
            "recipe": recipe,
            "seed": seed,
            "what": what,
            "code": code_digest(),
            "libraries": self.libraries,
        }
        digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()
        return f"{kind}-{digest[:24]}"

    def load_patches(self, key: str) -> tuple[Patches, float] | None:
        """The patches stored under ``key`` and the seconds their renders took (None: not
        stored)."""
        path = self.folder / f"{key}.npz"
        if not path.exists():
            return None
        with np.load(path) as data:
            patches = Patches(*(data[name] for name in Patches.__dataclass_fields__))
            return patches, float(data["render_seconds"])

    def store_patches(self, key: str, patches: Patches, seconds: float) -> None:
        """Store ``patches`` under ``key``, with the ``seconds`` their renders took."""
        fields = {name: getattr(patches, name) for name in Patches.__dataclass_fields__}
        fields["render_seconds"] = np.array(seconds)
        self._write(f"{key}.npz", lambda f: np.savez(f, **fields))

    def load_json(self, key: str) -> Any:
        """The JSON value stored under ``key`` (None: not stored)."""
        path = self.folder / f"{key}.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    def store_json(self, key: str, value: Any) -> None:
        """Store the JSON ``value`` under ``key``."""
        self._write(f"{key}.json", lambda f: f.write(json.dumps(value).encode("utf-8")))

    def path(self, key: str, suffix: str) -> Path:
        """The file of the entry ``key`` with ``suffix`` (which may not exist yet)."""
        return self.folder / f"{key}{suffix}"

    def store(self, key: str, suffix: str, write: Callable[[BinaryIO], Any]) -> Path:
        """Store the entry ``key`` with ``suffix``, written by ``write(file)``."""
        return self._write(f"{key}{suffix}", write)

    def build(
        self, recipe: dict[str, Any], scenes: range, seed: int, workers: int | None = None
    ) -> tuple[Patches, float]:
        """:func:`~vision.train.dataset.build` of ``scenes`` (the recipe's own domain), a chunk
        of :data:`CHUNK` scenes at a time, each read from this cache or rendered and stored;
        and the seconds the chunks' renders took."""
        parts, seconds = [], 0.0
        for start in range(0, len(scenes), CHUNK):
            chunk = scenes[start : start + CHUNK]
            key = self.key("patches", recipe, seed, first=chunk.start, stop=chunk.stop)
            kept = self.load_patches(key)
            if kept is None:
                began = time.perf_counter()
                part = build(recipe, chunk, seed, workers=workers)
                kept = part, time.perf_counter() - began
                self.store_patches(key, *kept)
            parts.append(kept[0])
            seconds += kept[1]
        return Patches.concat(parts), seconds

    def _write(self, name: str, write: Callable[[BinaryIO], Any]) -> Path:
        final = self.folder / name
        temporary = self.folder / f".{name}.{os.getpid()}.tmp"
        try:
            with open(temporary, "wb") as file:
                write(file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, final)
        finally:
            temporary.unlink(missing_ok=True)
        return final


@cache
def code_digest() -> str:
    """A digest of the :data:`SOURCES` and :data:`MODELS_READ` (computed once a process)."""
    h = hashlib.sha256()
    files = sorted({p for pattern in SOURCES for p in ROOT.glob(pattern)})
    for path in [*files, *(ROOT / m for m in MODELS_READ)]:
        h.update(str(path.relative_to(ROOT)).encode("utf-8"))
        h.update(path.read_bytes() if path.exists() else b"(none)")
    return h.hexdigest()
