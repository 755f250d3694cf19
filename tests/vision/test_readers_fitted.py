"""The fitted readers of every game, with the committed models, on seeded rendered scenes read
through the real locator: the nominal corpus and the held-out domain (ranges never fitted on).

Two product targets hold on the nominal sample and are asserted as they are there: a clear board
is never flagged, and a hand over the board is flagged or hides nothing misread (on the held-out
sample at most two scenes of 24 may fail either, a guard). The accuracy targets
(cells >= 99.9 %, boards >= 99 %) are the bench's to measure (`referee bench vision`); they
are not met yet on the held-out domain, so the accuracy asserted here is a guard against
regressions, a little under what the committed models read on these 24-scene samples
(held-out cells 92-99 %, boards 11/22-24/24; ``docs/benchmarks.md``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine import data, new_game
from vision.geometry import load_geometry
from vision.model import FORMAT, CellModel, ModelError, model_for
from vision.readers import reader_for
from vision.readers.fitted import FittedReader, SpectrangleReader
from vision.synth import Domain, random_position, render_scene

from .reader_corpus import corpus, locate, read_right, truth

GAMES = ("gobsmacked", "spectrangle", "gobblet", "blokus", "blokus-duo")
NEW = {"gobblet": {"color": "black", "size": 4}, "blokus": "violet"}
SCENES = 24
SEED = 4242


def _read(game: str, domain: Domain = Domain.NOMINAL) -> tuple:
    return tuple((scene, obs) for scene, _, obs in corpus(game, SCENES, SEED, domain))


@pytest.mark.parametrize("game", GAMES)
def test_the_registry_gives_a_fitted_reader_with_its_model(game):
    reader = reader_for(game)
    assert isinstance(reader, FittedReader)
    assert game in reader.model.games
    assert reader.game == game


def test_a_reader_refuses_another_games_board():
    with pytest.raises(ValueError, match="spectrangle"):
        SpectrangleReader(load_geometry("gobblet"), model=model_for("spectrangle"))


#: guards (see the module docstring): visible cells read right, whole boards read right; the
#: held-out Gobblet sets' feet fade into the board in half the scenes (since 2026-12-05), which
#: the committed network reads a size small (91.99 % and 11 of 24 here)
GUARDS = {"nominal": (0.985, 0.9), "heldout": (0.92, 0.55), ("heldout", "gobblet"): (0.9, 0.4)}


def _guard(domain: Domain, game: str) -> tuple[float, float]:
    return GUARDS.get((domain.name, game), GUARDS[domain.name])


@pytest.mark.parametrize("domain", [Domain.NOMINAL, Domain.HELDOUT], ids=lambda d: d.name)
@pytest.mark.parametrize("game", GAMES)
def test_visible_cells_are_read_accurately(game, domain):
    right = total = 0
    for scene, obs in _read(game, domain):
        t = truth(game, scene.cells)
        for name in t:
            if name not in scene.hidden:
                total += 1
                right += obs.cells.get(name, "missing") == t[name]
    assert right / total >= _guard(domain, game)[0]


@pytest.mark.parametrize("domain", [Domain.NOMINAL, Domain.HELDOUT], ids=lambda d: d.name)
@pytest.mark.parametrize("game", GAMES)
def test_clear_boards_are_never_flagged_and_hands_are_flagged_or_read_right(game, domain):
    clear = hands = right = flagged = missed = 0
    for scene, obs in _read(game, domain):
        t = truth(game, scene.cells)
        if scene.occluded:
            hands += 1
            under = [n for n in scene.hidden if n in obs.cells]
            # a hand over the board is flagged, or nothing it hides is misread
            missed += not (obs.occluded or all(obs.cells[n] == t[n] for n in under))
        else:
            clear += 1
            flagged += obs.occluded or obs.partial
        right += read_right(game, scene, obs)
    assert clear >= 8 and hands >= 4
    # the targets, asserted as they are where they hold; on the held-out domain a guard
    allowed = 0 if domain is Domain.NOMINAL else 2
    assert flagged <= allowed and missed <= allowed
    assert right >= _guard(domain, game)[1] * len(_read(game, domain))


@pytest.mark.parametrize("game", GAMES)
def test_probabilities_are_normalised_and_put_their_mass_on_the_truth(game):
    mass = []
    for scene, obs in _read(game):
        t = truth(game, scene.cells)
        for name, probs in obs.probabilities.items():
            assert abs(sum(probs.values()) - 1.0) < 1e-6
            assert min(probs.values()) > 0.0
            mass.append(probs.get(t[name], 0.0))
    assert np.median(mass) > 0.9


def test_a_spectrangle_cell_is_the_laying_its_three_edges_agree_on():
    reader = reader_for("spectrangle")
    classes = reader.model.classes
    edges = np.full((36 * 3, len(classes)), 0.01)
    edges[:, classes.index("empty")] = 1.0
    # cell 0 shows yellow, blue and green on its left, right and base edges (the piece YBG)
    for k, colour in enumerate(("yellow", "blue", "green")):
        edges[k] = 0.01
        edges[k, classes.index(colour)] = 1.0
    edges /= edges.sum(axis=1, keepdims=True)
    cells, contents, probs, foreign = reader.cell_probabilities(edges)
    codec = new_game("spectrangle")
    expected = codec.cell_from_json({"left": "yellow", "right": "blue", "base": "green"})
    assert cells[0] == "0" and contents[int(probs[0].argmax())] == expected
    assert contents[int(probs[1].argmax())] is None
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert (foreign < 0.05).all()


def test_a_missing_or_foreign_model_file_is_a_clear_error(tmp_path):
    with pytest.raises(ModelError, match="no model for blokus"):
        model_for("blokus", str(tmp_path))
    meta = dict(model_for("blokus").meta)
    (tmp_path / "old.json").write_text(json.dumps({**meta, "format": FORMAT + 1}))
    (tmp_path / "old.onnx").write_bytes(model_for("blokus").onnx)
    with pytest.raises(ModelError, match="format"):
        CellModel.load(tmp_path / "old.json")
    (tmp_path / "gone.json").write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="cannot read"):
        CellModel.load(tmp_path / "gone.json")


def _a_piece_put_down(game: str, seed: int) -> tuple[dict, str, dict, list[np.ndarray]]:
    """A random board, the first empty cell, the board with a piece put down on it, and the
    two rendered in one scene (a varied domain draws each piece from a stream of its own cell:
    the other pieces stay put)."""
    rng = np.random.default_rng(seed)
    before = random_position(game, rng)
    cell = next(n for n, v in before.items() if v is None)
    after = {**before, cell: random_position(game, rng)[cell] or NEW[game]}
    shots = [
        render_scene(game, cells, seed, hand=False, domain=Domain.TRAIN).image
        for cells in (before, after)
    ]
    return before, cell, after, shots


@pytest.mark.parametrize("game", ["gobblet", "blokus"])
def test_after_calibration_only_changed_cells_are_judged_again(game):
    reader = reader_for(game)
    before, cell, after, shots = _a_piece_put_down(game, 31)
    pose = locate(game, shots[0])
    codec = new_game(game)
    pose_cells = reader.sampler.targets
    reader.calibrate(shots[0], pose, {n: codec.cell_from_json(v) for n, v in before.items()})
    # the same board under a dimmer, warmer light: nothing changed, and most cells are not
    # even judged again (the fitted threshold lets through what a change that small could be)
    dim = np.clip(shots[0] * np.array([0.75, 0.85, 0.95]), 0, 255).astype(np.uint8)
    dim_pose = locate(game, dim)
    assert len(reader._changed(reader.sampler.sample(dim, dim_pose))) <= len(pose_cells) // 4
    assert reader.read(dim, dim_pose).cells == truth(game, before)
    # a piece put down: its cell (and at most its neighbours) go to the model
    moved = reader._changed(reader.sampler.sample(shots[1], locate(game, shots[1])))
    assert cell in {reader.sampler.cells[i] for i in moved}
    obs = reader.read(shots[1], locate(game, shots[1]))
    assert obs.cells == truth(game, after)
    reader.forget()
    assert len(reader._changed(reader.sampler.sample(dim, pose))) == len(reader.sampler.targets)


@pytest.mark.parametrize("game", ["gobblet", "blokus"])
def test_a_board_judged_unchanged_keeps_the_look_of_what_changed_on_it(game):
    # a piece is put down, but the referee judges the board unchanged (the reader missed the
    # piece, or the rules overruled it): calibrating that frame as the accepted board would
    # make the piece the look of an empty cell, never judged again; judged unchanged, its cell
    # keeps the empty look it had, and the next board still sends it to the model
    before, cell, _, shots = _a_piece_put_down(game, 32)
    codec = new_game(game)
    known = {n: codec.cell_from_json(v) for n, v in before.items()}
    pose, moved_pose = locate(game, shots[0]), locate(game, shots[1])
    for unchanged in (False, True):
        reader = reader_for(game)
        reader.calibrate(shots[0], pose, known)
        taught = reader.bank.counts()
        reader.calibrate(shots[1], moved_pose, known, unchanged=unchanged)
        judged = {
            reader.sampler.cells[i]
            for i in reader._changed(reader.sampler.sample(shots[1], moved_pose))
        }
        obs = reader.read(shots[1], moved_pose)
        if unchanged:
            assert cell in judged and obs.cells[cell] is not None
            assert reader.bank.counts() == taught  # nothing was taught by it
        else:  # as an accepted board, the piece is now the empty cell's look
            assert cell not in judged and obs.cells[cell] is None
    # a board that did not change but for a dimmer light takes the new look: the memory
    # follows the light
    dim = np.clip(shots[0] * np.array([0.8, 0.85, 0.9]), 0, 255).astype(np.uint8)
    dim_pose = locate(game, dim)
    reader = reader_for(game)
    reader.calibrate(shots[0], pose, known)
    first = reader.memory.patches
    now = reader.sampler.sample(dim, dim_pose)
    assert not len(reader._changed(now))  # a change of light is no change of a cell
    reader.calibrate(dim, dim_pose, known, unchanged=True)
    assert np.array_equal(reader.memory.patches, now) and not np.array_equal(now, first)


def test_a_frame_is_occluded_from_the_flag_threshold_and_hides_from_the_hide_threshold():
    from dataclasses import replace

    game = "blokus"
    scene = render_scene(game, random_position(game, np.random.default_rng(8)), 8, hand=True)
    pose = locate(game, scene.image)
    reader = reader_for(game)
    _, _, _, foreign = reader.cell_probabilities(reader.predict(scene.image, pose))
    top = float(foreign.max())
    hide = float(np.sort(foreign)[-6])  # five cells above it, one at it
    assert hide < top
    names = list(reader.sampler.cells)

    def read(flag: float, hide: float, clear: bool = False):
        model = replace(reader.model, foreign_threshold=flag, hide_threshold=hide)
        return FittedReader(reader.geometry, model=model).read(scene.image, pose, clear=clear)

    # no cell reaches the flag: the frame is clear and every cell is reported, however foreign
    # the lower threshold would find some of them
    clear = read(float(np.nextafter(top, np.inf)), hide)
    assert not clear.occluded and not clear.partial and len(clear.cells) == len(names)
    # one cell reaches the flag: the frame is occluded and every cell from the hide threshold
    # on is left out
    flagged = read(top, hide)
    assert flagged.occluded and flagged.partial
    left_out = {n for n, f in zip(names, foreign, strict=True) if f >= hide}
    assert set(names) - set(flagged.cells) == left_out and len(left_out) >= 6
    # the hide threshold may lie above the flag: the frame is occluded (not judged), and only
    # the cells from the hide threshold on are left out, here none
    above = read(hide, float(np.nextafter(top, np.inf)))
    assert above.occluded and not above.partial and len(above.cells) == len(names)
    # the players say nothing is over the board: it is read as the unflagged frame is
    told = read(top, hide, clear=True)
    assert not told.occluded and not told.partial and told.cells == clear.cells


def test_a_spectrangle_tile_is_never_read_twice():
    reader = reader_for("spectrangle")
    contents = reader._contents
    codec = new_game("spectrangle")

    def column(left: str, right: str, base: str) -> int:
        return contents.index(codec.cell_from_json({"left": left, "right": right, "base": base}))

    n = 36
    probs = np.full((n, len(contents)), 1e-4)
    probs[:, 0] = 1.0  # every cell empty but three
    probs[:3, 0] = 1e-4
    rgb_, rbg = column("red", "green", "blue"), column("red", "blue", "green")
    ryb = column("red", "yellow", "blue")
    # cells 0 and 1 both look most like the tile RGB (laid two ways); cell 1 is less sure and
    # nearly as likely the tile RYB; cell 2 is RYB beyond doubt
    probs[0, rgb_] = 0.9
    probs[1, rbg], probs[1, ryb], probs[1, column("red", "blue", "red")] = 0.5, 0.3, 0.4
    probs[2, ryb] = 0.95
    probs /= probs.sum(axis=1, keepdims=True)
    shown = np.ones(n, dtype=bool)
    best = reader.best_contents(probs, shown)
    assert best[0] == rgb_ and best[2] == ryb
    # RGB and RYB are taken: cell 1 gets its likeliest other tile, RRB
    assert best[1] == column("red", "blue", "red")
    assert (best[3:] == 0).all()
    # a cell left out of the observation claims nothing
    shown[0] = False
    assert reader.best_contents(probs, shown)[1] == rbg
    # without a duplicate the likeliest contents stand, untouched
    alone = probs[1:]
    assert (reader.best_contents(alone, np.ones(n - 1, dtype=bool)) == alone.argmax(1)).all()


def test_a_gobblet_board_shows_no_more_of_a_piece_than_the_box_holds():
    reader = reader_for("gobblet")
    codec = new_game("gobblet")
    names, contents, _, _ = reader.cell_probabilities(np.eye(len(reader.model.classes))[[0] * 16])
    column = {reader.label(codec.cell_to_json(c), ""): k for k, c in enumerate(contents) if c}
    big, third = column["white-4"], column["white-3"]
    probs = np.full((len(names), len(contents)), 0.01)
    probs[:, 0] = 1.0  # empty but five
    # five cells look most like a large white piece: one of them, the least sure, is nearly
    # as likely a size-3 piece, another nearly as likely empty
    rows = [(0.9, 0.05, 0.01)] * 3 + [(0.5, 0.45, 0.01), (0.6, 0.01, 0.35)]
    for row, (p4, p3, p0) in enumerate(rows):
        probs[row, 0], probs[row, big], probs[row, third] = p0, p4, p3
    probs /= probs.sum(axis=1, keepdims=True)
    shown = np.ones(len(names), dtype=bool)
    best = reader.best_contents(probs, shown)
    assert data.load("gobblet")["stacks"] == 3
    assert (best[:3] == big).all() and best[3] == third and best[4] == 0
    assert (best[5:] == 0).all()
    # a cell left out of the observation takes no piece from the box: one cell fewer must yield
    shown[0] = False
    best = reader.best_contents(probs, shown)
    assert best[0] == big and best[3] == third and best[4] == big
    # within the box the likeliest contents stand, untouched
    probs[3:5, big] = 0.0
    assert (reader.best_contents(probs, np.ones(len(names), dtype=bool)) == probs.argmax(1)).all()


@pytest.mark.parametrize("game", ["blokus", "blokus-duo"])
def test_a_blokus_board_shows_no_more_squares_of_a_colour_than_its_pieces_have(game):
    reader = reader_for(game)
    names, contents, _, _ = reader.cell_probabilities(np.eye(len(reader.model.classes))[[0]])
    squares = sum(len(p["squares"]) for p in data.load(game)["pieces"])
    assert [reader.capacity(c) for c in contents] == [None, squares, squares]
    orange = contents.index(new_game(game).cell_from_json("orange"))
    # a pale board read orange everywhere, the empty squares only a little less sure
    rng = np.random.default_rng(0)
    probs = np.full((len(names), len(contents)), 0.02)
    probs[:, orange] = 0.6 + 0.1 * rng.random(len(names))
    probs[:, 0] = 0.5
    real = rng.choice(len(names), squares // 2, replace=False)
    probs[real, orange] = 0.95  # the pieces really there, sure of themselves
    shown = np.ones(len(names), dtype=bool)
    best = reader.best_contents(probs / probs.sum(axis=1, keepdims=True), shown)
    read = np.flatnonzero(best == orange)
    assert len(read) == squares and set(real) <= set(read)
    assert set(best[np.setdiff1d(np.arange(len(names)), read)]) == {0}
    # as many orange squares as its pieces have: read as it is
    probs[squares:, orange] = 0.01
    assert (reader.best_contents(probs, shown) == probs.argmax(axis=1)).all()


@pytest.mark.parametrize(("game", "seed"), [("gobsmacked", 5801), ("blokus-duo", 5802)])
def test_a_still_board_filmed_again_with_a_camera_s_noise_is_not_judged_again(game, seed):
    # a camera films every frame with noise of its own: between two frames of a still board
    # noise alone must not send the cells back to the model, while a piece put down still does
    # (a pixel-by-pixel change test sent 17 of these 24 and all 196 cells back)
    from vision.synth.photo import film

    rng = np.random.default_rng(58)
    before = random_position(game, rng)
    cell = next(n for n, v in before.items() if v is None)
    piece = next(p for p in (random_position(game, rng)[cell] for _ in range(99)) if p)
    after = {**before, cell: piece}
    scenes = [
        render_scene(game, cells, seed, hand=False, domain=Domain.TRAIN, effects=False)
        for cells in (before, after)
    ]
    still, again = (
        film(scenes[0].image, scenes[0].params, np.random.default_rng(k)) for k in (1, 2)
    )
    moved = film(scenes[1].image, scenes[1].params, np.random.default_rng(3))
    reader = reader_for(game)
    codec = new_game(game)
    reader.calibrate(
        still, locate(game, still), {n: codec.cell_from_json(v) for n, v in before.items()}
    )
    judged = reader._changed(reader.sampler.sample(again, locate(game, again)))
    assert len(judged) <= len(reader.sampler.targets) // 10
    assert reader.read(again, locate(game, again)).cells == truth(game, before)
    put = reader._changed(reader.sampler.sample(moved, locate(game, moved)))
    assert cell in {reader.sampler.cells[i] for i in put}
