"""A fit's cache (vision.train.cache): what it keeps gives the same fit as rendering and fitting
again, it is read only for the inputs it was made from, and a write that fails leaves nothing."""

from __future__ import annotations

import numpy as np
import pytest

from vision.synth import Domain
from vision.train import cache as cache_module
from vision.train.cache import FitCache
from vision.train.cli import recipes
from vision.train.dataset import Patches, build

LIBRARIES = {"numpy": "2.4.6"}


def _recipe() -> dict:
    return {**recipes()["blokus"], "games": ["blokus"]}


def _same(a: Patches, b: Patches) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in Patches.__dataclass_fields__)


def test_cached_renders_are_the_renders_a_chunk_at_a_time_and_are_read_back(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "CHUNK", 2)
    recipe = _recipe()
    cache = FitCache(tmp_path, LIBRARIES)
    made, seconds = cache.build(recipe, range(5), seed=3, workers=1)
    assert _same(made, build(recipe, range(5), 3, workers=1))
    entries = sorted(tmp_path.glob("patches-*.npz"))
    assert len(entries) == 3 and seconds > 0  # scenes 0-1, 2-3 and 4
    stamps = [p.stat().st_mtime_ns for p in entries]
    again, seconds_again = cache.build(recipe, range(5), seed=3, workers=1)
    assert _same(again, made) and seconds_again == seconds  # the renders' own time, kept
    assert [p.stat().st_mtime_ns for p in entries] == stamps
    # a longer run reads the whole chunks it shares (scenes 0-3) and renders the others
    longer, _ = cache.build(recipe, range(7), seed=3, workers=1)
    assert len(list(tmp_path.glob("patches-*.npz"))) == 5  # and 4-5, 6
    assert sum(p.stat().st_mtime_ns in stamps for p in tmp_path.glob("patches-*.npz")) == 3
    assert _same(longer, build(recipe, range(7), 3, workers=1))
    assert not list(tmp_path.glob(".*"))  # no temporary file left


def test_an_entry_is_named_by_everything_it_depends_on(tmp_path):
    recipe = _recipe()
    cache = FitCache(tmp_path, LIBRARIES)
    key = cache.key("patches", recipe, 3, first=0, stop=2)
    assert key == FitCache(tmp_path, dict(LIBRARIES)).key(
        "patches", dict(recipe), 3, first=0, stop=2
    )
    others = {
        cache.key("network", recipe, 3, first=0, stop=2),
        cache.key("patches", recipe, 4, first=0, stop=2),
        cache.key("patches", recipe, 3, first=0, stop=3),
        cache.key("patches", {**recipe, "context_rings": [0, 2, 4]}, 3, first=0, stop=2),
        FitCache(tmp_path, {"numpy": "2.4.7"}).key("patches", recipe, 3, first=0, stop=2),
    }
    assert key not in others and len(others) == 5


def test_a_write_that_fails_leaves_no_entry(tmp_path):
    cache = FitCache(tmp_path, LIBRARIES)

    def half(file):
        file.write(b"half an entry")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        cache.store("network-x", ".pt", half)
    assert not list(tmp_path.iterdir())
    cache.store_json("change-x", {"change_threshold": 0.5})
    assert cache.load_json("change-x") == {"change_threshold": 0.5}
    assert cache.load_json("change-y") is None and cache.load_patches("patches-y") is None


def test_a_cached_network_is_the_network_its_fit_gave(tmp_path):
    torch = pytest.importorskip("torch")
    from vision.train.fit import _fit_network, predict

    recipe = {**_recipe(), "context": [0.1, 0.5, 0.9]}
    data = build(recipe, range(3), seed=5, domain=Domain.NOMINAL, workers=1)
    cache = FitCache(tmp_path, LIBRARIES)
    fitted = _fit_network(recipe, data, 5, 1, 1, cache)
    assert len(list(tmp_path.glob("network-*.pt"))) == 1
    kept = _fit_network(recipe, data, 5, 1, 1, cache)
    assert kept.fit_seconds == fitted.fit_seconds
    ours, theirs = (
        predict(kept.net, data.x, data.context),
        predict(fitted.net, data.x, data.context),
    )
    assert np.array_equal(ours, theirs)
    # another number of epochs is another fit, and so are other patches
    _fit_network(recipe, data, 5, 2, 1, cache)
    assert len(list(tmp_path.glob("network-*.pt"))) == 2
    fewer = Patches(*(getattr(data, f)[:-1] for f in Patches.__dataclass_fields__))
    _fit_network(recipe, fewer, 5, 1, 1, cache)
    assert len(list(tmp_path.glob("network-*.pt"))) == 3
    assert torch.get_num_threads() == 1


def test_a_cached_change_test_is_read_back_as_it_was_fitted(tmp_path):
    from vision.train.fit import _change_test

    recipe = _recipe()
    cache = FitCache(tmp_path, LIBRARIES)
    fitted = _change_test(recipe, 2, 3, 1, cache)
    (entry,) = tmp_path.glob("change-*.json")
    stamp = entry.stat().st_mtime_ns
    assert _change_test(recipe, 2, 3, 1, cache) == fitted
    assert entry.stat().st_mtime_ns == stamp
    assert _change_test(recipe, 2, 3, 1, None) == fitted  # what the cache keeps is the fit's
