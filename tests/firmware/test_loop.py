"""The referee loop: illegal placements, undo, a lost board, and a kill -9 mid-game."""

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
from gpiozero.pins.mock import MockFactory
from luma.core.device import dummy

import vision.models
from engine import Observation, new_game
from firmware.actions import Action
from firmware.buttons import Alarm
from firmware.camera import ImageFolder
from firmware.display import Display
from firmware.journal import CURRENT, Journal
from firmware.loop import Phase, RefereeLoop
from firmware.records import MoveLog
from firmware.scenario import scripted_game
from firmware.screens import ELLIPSIS
from firmware.simulator import SimulatedTable
from firmware.web.live import snapshot
from tests.vision.data.models import asking_models, edited_models, flagging_models
from tests.vision.data.scenes import bled
from vision.bench import corpus_scene
from vision.decode import RANKED
from vision.synth import Domain, render_scene

ROOT = Path(__file__).resolve().parents[2]


def _display() -> Display:
    return Display(dummy(width=128, height=64, mode="1"))


def _illegal_blokus(tmp_path, seed: int, after: int, pressed: list[Action]):
    """A Blokus loop (buzzer on a mock pin 18) over scripted game ``seed`` up to ``after``
    steps past its illegal placement; ``pressed`` are the players' presses, last first."""
    script = scripted_game("blokus", seed=seed)
    illegal_at = next(i for i, s in enumerate(script.steps) if s.expect == "illegal")
    script.steps = script.steps[: illegal_at + 1 + after]
    table = SimulatedTable(script, seed=5, hand_frames=3, still_frames=6)
    factory = MockFactory()
    alarm = Alarm(buzzer=18, pin_factory=factory)
    display = _display()
    loop = RefereeLoop(
        table,
        display,
        game="blokus",
        journal_dir=tmp_path,
        alarm=alarm,
        records_dir=tmp_path / "records",
        actions=lambda: pressed.pop() if pressed else table.next_action(),
    )
    return script, table, factory, alarm, display, loop


def test_illegal_placement_flashes_beeps_and_holds_until_the_board_is_put_back(tmp_path):
    # the illegal one, taken back, one more move
    script, table, factory, alarm, display, loop = _illegal_blokus(tmp_path, 7, 2, [])
    phases, blinking = [], []
    while not table.finished:
        loop.step()
        phases.append(loop.phase)
        blinking.append(display.screen is not None and display.screen.blink)
    first = phases.index(Phase.ILLEGAL)
    assert any(blinking[first:]), "the illegal screen flashes"
    assert "ILLEGAL" in display.screen.text or loop.phase == Phase.PLAY
    assert phases[-1] == Phase.PLAY  # put back, then a legal move
    assert factory.pin(18).state == 0  # the buzzer is silent again
    history = [str(m) for m in loop.referee.game.history]
    assert len(history) == sum(1 for s in script.steps if s.expect == "move")
    alarm.close()


def test_the_players_may_say_a_flagged_board_is_the_likeliest_legal_move(tmp_path):
    # a piece put down a cell off a legal place: that move is the likeliest legal explanation,
    # as a legal move with a misread square would be, and the players say it is the one
    pressed: list[Action] = []  # the placement stays on the board
    _, table, factory, alarm, display, loop = _illegal_blokus(tmp_path, 2, 0, pressed)
    while loop.phase != Phase.ILLEGAL and not table.finished:
        loop.step()
    assert loop.phase == Phase.ILLEGAL and factory.pin(18).state == 1
    offer = next(text for text, _ in display.screen.texts if text.startswith("OK if it was"))
    played = len(loop.referee.game.history)
    pressed.append(Action.CONFIRM)
    loop.step()
    # the move the screen named is accepted, journalled, and the alarm is silent
    assert loop.phase == Phase.PLAY and loop.illegal is None
    assert len(loop.referee.game.history) == played + 1
    named = f"OK if it was {loop.referee.game.history[-1]}"
    assert named.startswith(offer.removesuffix(ELLIPSIS)) and len(offer) > len("OK if it was ")
    assert factory.pin(18).state == 0
    journalled = Journal(tmp_path / CURRENT).resume().referee.game.history
    assert [str(m) for m in journalled] == [str(m) for m in loop.referee.game.history]
    loop.close()
    alarm.close()


def test_an_illegal_placement_in_doubt_is_put_to_the_players(tmp_path, monkeypatch):
    # a model that asks about every illegal act likelier than the best legal explanation
    monkeypatch.setattr(vision.models, "_chosen", asking_models(tmp_path / "models", "blokus"))
    for pick in (Action.MENU, Action.CONFIRM):
        pressed: list[Action] = []
        run = tmp_path / pick.name
        _, table, factory, alarm, display, loop = _illegal_blokus(run, 7, 0, pressed)
        while loop.phase != Phase.CONFIRM and not table.finished:
            loop.step()
        assert loop.phase == Phase.CONFIRM and factory.pin(18).state == 0
        assert "What was done?" in display.screen.text
        texts = [text for text, _ in display.screen.texts]
        first = texts[texts.index("OK") + 1]
        assert any(text.startswith("illegal at ") for text in texts)
        # the live page asks the same, naming every cell of the act
        question = snapshot(loop, False, MoveLog(), 0)["question"]
        assert question["question"] == "What was done?" and question["ok"] == first
        assert question["menu"].startswith("illegal at ") and loop.question is not None
        # OK takes the legal explanation, MENU the illegal act as the reader saw it
        legal, act = loop.choices
        assert (str(legal) if legal is not None else "no move").startswith(
            first.removesuffix(ELLIPSIS)
        )
        assert isinstance(act, Observation) and act.game == "blokus"
        played = len(loop.referee.game.history)
        pressed.append(pick)
        loop.step()
        assert loop.question is None and snapshot(loop, False, MoveLog(), 1)["question"] is None
        assert loop.choices is None
        if pick is Action.MENU:  # the players say they did the illegal act: flagged
            assert loop.phase == Phase.ILLEGAL and loop.illegal is not None
            assert factory.pin(18).state == 1 and "ILLEGAL" in display.screen.text
            assert len(loop.referee.game.history) == played
        else:  # they say they did the legal explanation named first
            assert loop.phase == Phase.PLAY and loop.illegal is None
            assert factory.pin(18).state == 0
            history = loop.referee.game.history
            assert len(history) == played + (first != "no move")
            assert first == "no move" or str(history[-1]).startswith(first.removesuffix(ELLIPSIS))
        loop.close()
        alarm.close()


def test_undo_takes_back_the_last_move_and_the_journal_says_so(tmp_path):
    script = scripted_game("gobblet", seed=4)
    script.steps = script.steps[:2]
    table = SimulatedTable(script, seed=2, hand_frames=2, still_frames=6)
    loop = RefereeLoop(
        table,
        _display(),
        game="gobblet",
        journal_dir=tmp_path,
        records_dir=tmp_path / "records",
        actions=table.next_action,
    )
    while not table.finished:
        loop.step()
    assert len(loop.referee.game.history) == 2
    loop.press(Action.UNDO)
    assert len(loop.referee.game.history) == 1
    resumed = Journal(tmp_path / CURRENT).resume()
    assert [str(m) for m in resumed.referee.game.history] == [script.steps[0].note]


def test_a_clear_board_taken_for_a_hand_is_judged_once_the_players_say_it_is_clear(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(vision.models, "_chosen", flagging_models(tmp_path / "models", "gobblet"))
    script = scripted_game("gobblet", seed=4)
    script.steps = script.steps[:2]
    moves = [s.note for s in script.steps]

    def play(name: str, press: bool) -> tuple[RefereeLoop, bool]:
        # long still periods: a board found occluded settles again before the next move
        table = SimulatedTable(script, seed=2, hand_frames=2, still_frames=14)
        display = _display()
        pressed_at: list[float] = []

        def players() -> Action | None:
            offered = display.screen is not None and "OK if it is clear" in display.screen.text
            if press and offered and table.t not in pressed_at:
                pressed_at.append(table.t)  # one press for what the screen asks
                return Action.CONFIRM
            return table.next_action()

        loop = RefereeLoop(
            table,
            display,
            game="gobblet",
            journal_dir=tmp_path / name,
            records_dir=tmp_path / name / "records",
            actions=players,
        )
        offered = page = False
        while not table.finished:
            loop.step()
            shown = display.screen is not None and "OK if it is clear" in display.screen.text
            assert loop.offering_clear or not shown  # never left on the screen once answered
            offered |= shown
            page |= snapshot(loop, True, MoveLog(), 0)["clear_offered"]
        assert page == offered  # the live page offers it too
        return loop, offered

    # nobody presses OK: the referee waits for ever, saying so, and accepts nothing
    waiting, offered = play("waiting", press=False)
    assert offered and waiting.phase == Phase.CHECK_BOARD and not waiting.referee.game.history
    # OK whenever the screen offers it: the opening and every move are judged as usual
    judged, _ = play("judged", press=True)
    assert judged.phase == Phase.PLAY
    assert [str(m) for m in judged.referee.game.history] == moves


def test_an_illegal_placement_put_right_is_judged_once_the_players_say_the_board_is_clear(
    tmp_path, monkeypatch
):
    # every board read is taken for one with a hand over it, the board taken back too: with the
    # illegal flag up, the screen must still let the players say that it is clear
    monkeypatch.setattr(vision.models, "_chosen", flagging_models(tmp_path / "models", "gobblet"))
    script = scripted_game("gobblet", seed=4)
    taken_back = next(i for i, s in enumerate(script.steps) if s.note == "taken back")
    script.steps = script.steps[: taken_back + 1]
    table = SimulatedTable(script, seed=2, hand_frames=2, still_frames=14)
    display = _display()
    seen: list[tuple[Phase, bool]] = []

    def players() -> Action | None:
        if display.screen is not None and "OK if it is clear" in display.screen.text:
            seen.append((loop.phase, loop.offered is None))
            return Action.CONFIRM
        return table.next_action()

    loop = RefereeLoop(
        table,
        display,
        game="gobblet",
        journal_dir=tmp_path / "j",
        records_dir=tmp_path / "r",
        actions=players,
    )
    while not table.finished:
        loop.step()
    assert (Phase.ILLEGAL, True) in seen  # offered under the flag, and no move offered with it
    assert loop.phase == Phase.PLAY and loop.illegal is None
    moves = [s.note for s in script.steps if s.expect == "move"]
    assert [str(m) for m in loop.referee.game.history] == moves


def test_a_board_not_set_up_is_shown_and_accepted_as_set_up_once_the_players_say_it_is(
    tmp_path,
):
    # a piece where no first move may go: the check says so, OK takes the board as set up, and
    # the first move put down beside it is then judged against that board
    game = new_game("blokus")
    move = next(iter(game.legal_moves()))
    first = {c: game.cell_to_json(v) for c, v in game.changes_after(move).items()}
    assert "a1" not in first
    boards = [{"a1": "orange"}, {"a1": "orange", **first}]
    folder = tmp_path / "frames"
    folder.mkdir()
    for b, cells in enumerate(boards):
        image = render_scene("blokus", cells, 5, hand=False).image
        for i in range(8):
            cv2.imwrite(str(folder / f"{b}{i}.png"), image)
    display = _display()
    loop = RefereeLoop(
        ImageFolder(folder, fps=10.0),
        display,
        game="blokus",
        journal_dir=tmp_path / "j",
        records_dir=tmp_path / "r",
    )
    for _ in range(8):
        loop.step()
    assert loop.phase == Phase.CHECK_BOARD and loop.unset is not None
    assert "a1" in loop.unset.cells
    assert "CHECK BOARD" in display.screen.text and "OK if set up" in display.screen.text
    problem = snapshot(loop, False, MoveLog(), 0)["problem"]
    assert problem["setup"] and problem["reason"] == loop.unset.reason
    loop.press(Action.CONFIRM)
    assert loop.phase == Phase.PLAY and loop.unset is None
    assert not loop.referee.game.history
    for _ in range(8):  # the first move put down: a1 stays as accepted
        loop.step()
    assert loop.phase == Phase.PLAY and list(loop.referee.game.history) == [move]
    assert "CHECK BOARD" not in display.screen.text
    loop.close()


def test_neither_of_a_close_call_shows_the_next_two_likeliest_moves(tmp_path, monkeypatch):
    # a model that calls every board close: the players page through the likeliest explanations
    def closing(meta: dict) -> dict:
        return {**meta, "decode": {**meta.get("decode", {}), "close_margin": 1e9}}

    monkeypatch.setattr(vision.models, "_chosen", edited_models(tmp_path / "m", "blokus", closing))
    script = scripted_game("blokus", seed=4)
    script.steps = script.steps[:1]
    table = SimulatedTable(script, seed=2, hand_frames=2, still_frames=14)
    display = _display()
    loop = RefereeLoop(
        table,
        display,
        game="blokus",
        journal_dir=tmp_path / "j",
        records_dir=tmp_path / "r",
        actions=table.next_action,
    )
    while loop.phase != Phase.CONFIRM and not table.finished:
        loop.step()
    pages = []
    while loop.more_options:
        assert "UNDO: others" in display.screen.text
        pages.append(loop.choices)
        loop.press(Action.UNDO)
        assert loop.phase == Phase.CONFIRM  # the next two, not the board looked at again
    pages.append(loop.choices)
    assert "UNDO: neither" in display.screen.text
    shown = {m for page in pages for m in page}
    assert len(pages) > 1 and 2 * len(pages) - 1 <= len(shown) <= RANKED
    assert pages[0] != pages[1] and not set(pages[0]) & set(pages[1])
    loop.press(Action.UNDO)  # neither, at the last two: the board is looked at again
    assert loop.phase == Phase.PLAY and not loop.referee.game.history
    while loop.phase != Phase.CONFIRM and not table.finished:
        loop.step()
    assert loop.choices == pages[0]  # asked again from the likeliest
    truth = script.steps[0].note
    assert truth in {str(m) for m in shown}
    page = next(p for p in pages if truth in {str(m) for m in p})
    while loop.choices != page:
        loop.press(Action.UNDO)
    loop.press(Action.CONFIRM if str(page[0]) == truth else Action.MENU)
    assert [str(m) for m in loop.referee.game.history] == [truth]
    loop.close()


def test_a_move_the_referee_missed_is_asked_about_once_the_players_say_so(tmp_path, monkeypatch):
    # a change test that sees no change anywhere once a board is accepted: the first move reads
    # as "no change"; OK in play says a move was missed, and the board is read again, every
    # cell, and "Which move?" offers the move (and "no move" only beside a single one)
    def blind(meta: dict) -> dict:
        return {**meta, "change_threshold": 1e9}

    monkeypatch.setattr(vision.models, "_chosen", edited_models(tmp_path / "m", "gobblet", blind))
    script = scripted_game("gobblet", seed=4)
    script.steps = script.steps[:1]
    table = SimulatedTable(script, seed=2, hand_frames=2, still_frames=24)
    display = _display()
    loop = RefereeLoop(
        table,
        display,
        game="gobblet",
        journal_dir=tmp_path / "j",
        records_dir=tmp_path / "r",
        actions=table.next_action,
    )
    while table.beat is not table.beats[-1]:  # up to the board after the move
        loop.step()
    judged = loop.last_outcome
    while loop.last_outcome is judged:
        loop.step()
    assert loop.phase == Phase.PLAY and not loop.referee.game.history
    assert loop.last_outcome.verdict.kind == "no-change"
    loop.press(Action.CONFIRM)
    assert "Looking again" in display.screen.text
    loop.step()  # the board is looked at again: the screen says so until it is read
    assert loop.phase == Phase.PLAY and "Looking again" in display.screen.text
    while loop.phase != Phase.CONFIRM and not table.finished:
        loop.step()
    truth = script.steps[0].note
    assert loop.phase == Phase.CONFIRM and truth in {str(m) for m in loop.choices}
    assert None not in loop.choices[:1]
    page = snapshot(loop, False, MoveLog(), 0)["question"]
    assert page is not None and truth in (page["ok"], page["menu"])
    loop.press(Action.CONFIRM if str(loop.choices[0]) == truth else Action.MENU)
    assert [str(m) for m in loop.referee.game.history] == [truth]
    loop.close()


def test_ok_in_play_with_no_move_on_the_board_says_so(tmp_path):
    folder = tmp_path / "frames"
    folder.mkdir()
    image = render_scene("gobblet", {}, 5, hand=False).image
    for i in range(40):
        cv2.imwrite(str(folder / f"{i:02d}.png"), image)
    display = _display()
    loop = RefereeLoop(
        ImageFolder(folder, fps=10.0),
        display,
        game="gobblet",
        journal_dir=tmp_path / "j",
        records_dir=tmp_path / "r",
    )
    for _ in range(8):
        loop.step()
    assert loop.phase == Phase.PLAY
    loop.press(Action.CONFIRM)
    for _ in range(8):
        loop.step()
    assert loop.phase == Phase.PLAY and not loop.referee.game.history
    assert "No move seen" in display.screen.text
    loop.close()


def test_no_board_is_reported_after_a_grace_period(tmp_path):
    folder = tmp_path / "frames"
    folder.mkdir()
    rng = np.random.default_rng(1)
    for i in range(6):
        cv2.imwrite(str(folder / f"{i:02d}.png"), rng.integers(0, 255, (240, 320, 3), np.uint8))
    camera = ImageFolder(folder, fps=2.0)
    display = _display()
    loop = RefereeLoop(
        camera, display, game="blokus", journal_dir=tmp_path / "j", records_dir=tmp_path / "r"
    )
    for _ in range(6):
        loop.step()
    assert loop.phase == Phase.FIND_BOARD
    assert "NO BOARD" in display.screen.text


def _folder_loop(
    tmp_path: Path, game: str, frames: list[np.ndarray]
) -> tuple[RefereeLoop, Display]:
    """A referee loop of ``game`` (and its OLED) that plays ``frames`` from a folder."""
    folder = tmp_path / "frames"
    folder.mkdir(parents=True)
    for i, frame in enumerate(frames):
        cv2.imwrite(str(folder / f"{i:02d}.png"), frame)
    display = _display()
    loop = RefereeLoop(
        ImageFolder(folder, fps=2.0),
        display,
        game=game,
        journal_dir=tmp_path / "j",
        records_dir=tmp_path / "records",
    )
    return loop, display


def _screens(tmp_path: Path, game: str, frames: list[np.ndarray]) -> list[str]:
    """The OLED's text after each of ``frames``, played by a referee loop from a folder."""
    loop, display = _folder_loop(tmp_path, game, frames)
    texts = []
    for _ in frames:
        loop.step()
        texts.append(display.screen.text)
    return texts


def test_a_camera_too_far_is_told_on_the_screen(tmp_path):
    """While the markers look too small the status line says so; when the board is then lost,
    the "no board" screen says the camera is too far."""
    far = Domain(name="far", zoom=(2.8, 2.8))
    scene = render_scene("blokus", {}, 1, hand=False, domain=far)
    blank = np.full_like(scene.image, 128)
    texts = _screens(tmp_path, "blokus", [scene.image] * 4 + [blank] * 8)
    assert "camera too far" in texts[3]
    assert "NO BOARD" in texts[-1] and "Camera too far" in texts[-1]


def test_a_mat_too_bright_is_told_on_the_screen(tmp_path):
    """While the markers are read only in linear light (the paper's light bled into them), the
    status line says the mat is too bright; on the same frames without the bleed it does not."""
    far = Domain(name="far", zoom=(1.8, 1.8))
    clean = render_scene("spectrangle", {}, 1, hand=False, effects=False, domain=far).image
    texts = {
        name: _screens(tmp_path / name, "spectrangle", [frame] * 4)
        for name, frame in (("clean", clean), ("bled", bled(clean, 1.5, 1.5)))
    }
    assert not any("mat too bright" in t for t in texts["clean"])
    assert all("mat too bright" in t for t in texts["bled"][1:])


def test_markers_found_only_from_their_outlines_are_told_on_the_screen(tmp_path):
    """A far, defocused, over-exposed camera whose markers no pass decodes one by one: the mat
    is found from their outlines (``vision.register``), and the status line says the markers
    are blurred, steadily, frame after frame."""
    far = corpus_scene("spectrangle", 64, split="heldout", seed=99)
    texts = _screens(tmp_path, "spectrangle", [far.image] * 6)
    assert all("markers blurred" in t for t in texts), texts


def test_a_table_whose_reads_the_moves_contradict_is_told_on_the_screen(tmp_path):
    """Once the accepted boards contradict the reader's reads at this table beyond chance (as
    under a glare that whitens the pieces), the status line says the pieces are hard to read."""
    scene = render_scene("spectrangle", {}, 1, hand=False)
    loop, display = _folder_loop(tmp_path, "spectrangle", [scene.image] * 6)
    for _ in range(3):
        loop.step()
    assert "reads unsure" not in display.screen.text
    reader = loop.vision.reader(loop.vision.locator.pose.geometry)
    model = reader.model
    sure_wrong = np.zeros((9, len(model.classes)))  # red edges read as purple, surely
    sure_wrong[:, model.classes.index("purple")] = 6.0
    reader.temperature.observe(sure_wrong, np.full(9, model.classes.index("red")))
    assert reader.reads_contradicted
    loop.step()
    assert "reads unsure: light?" in display.screen.text


def test_kill_minus_nine_loses_no_accepted_move(tmp_path):
    """The loop is killed (SIGKILL) at a random moment; every move it had reported as accepted
    is in the journal, and a new loop resumes exactly there."""
    rng = random.Random(11)
    for trial in range(2):
        journal = tmp_path / f"trial{trial}"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "tests" / "firmware" / "loop_runner.py"),
                str(journal),
                str(trial + 1),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        accepted: list[str] = []
        wanted = rng.randint(2, 6)
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("ACCEPTED "):
                accepted.append(line.split()[1])
            if len(accepted) >= wanted or line.startswith("DONE"):
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        resumed = Journal(journal / CURRENT).resume()
        history = [str(m) for m in resumed.referee.game.history]
        assert history[: len(accepted)] == accepted
        loop = RefereeLoop(
            ImageFolder.__new__(ImageFolder),
            _display(),
            game="gobblet",
            journal_dir=journal,
            records_dir=journal / "records",
        )
        assert [str(m) for m in loop.referee.game.history] == history
