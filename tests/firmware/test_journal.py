"""The journal survives crashes and resumes the same game; finished games replay from disk."""

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import EVENT, MOVE, Event, Referee, new_game
from engine.games import GAMES, game_class
from firmware import cli
from firmware.journal import CURRENT, Journal, JournalError, replay_items, save_record
from tests.firmware import toygame

ROOT = Path(__file__).resolve().parents[2]


def play(referee: Referee, journal: Journal | None, items) -> int:
    """Feed ``items``, journaling each outcome; returns how many lines were journaled."""
    written = 0
    for item in items:
        outcome = referee.feed(item)
        assert outcome.verdict.kind in (MOVE, EVENT), outcome.verdict
        if journal is not None:
            written += journal.record(outcome)
    return written


def same_game(a: Referee, b: Referee) -> None:
    assert a.game.to_record() == b.game.to_record()
    assert (a.game.scores, a.game.to_move, a.game.is_over) == (
        b.game.scores,
        b.game.to_move,
        b.game.is_over,
    )


def journal_lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[1:-1]


@settings(derandomize=True, max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), length=st.integers(0, 60))
def test_resume_rebuilds_the_game_that_was_journaled(seed, length):
    with pytest.MonkeyPatch.context() as registry, tempfile.TemporaryDirectory() as folder:
        registry.setitem(GAMES, toygame.NAME, toygame.MODULE)
        path = Path(folder) / "current.jsonl"
        referee = Referee(toygame.NAME)
        with Journal.create(path, toygame.NAME, referee.defaults) as journal:
            written = play(referee, journal, toygame.random_stream(seed, length))
        resumed = Journal(path).resume()
        assert resumed.problems == ()
        assert resumed.entries == written == length
        same_game(resumed.referee, referee)


def test_header_names_the_game_and_its_options(tmp_path, toy):
    path = tmp_path / "j.jsonl"
    Journal.create(path, toy, {"players": 2, "first": "p2"})
    header = json.loads(path.read_text())
    assert header["game"] == toy and header["options"] == {"players": 2, "first": "p2"}
    resumed = Journal(path).resume()
    assert resumed.referee.game.to_move == "p2" and resumed.entries == 0


def test_only_accepted_moves_and_events_are_journaled(tmp_path, toy):
    path = tmp_path / "j.jsonl"
    referee = Referee(toy)
    journal = Journal.create(path, toy, {})
    board = referee.game.observation_to_json(referee.game.current_observation())
    wrong_player = {**board, "cells": {**board["cells"], "b2": "p2"}}
    refused = [board, wrong_player, {"event": "exchange"}, {"event": "undo"}]
    assert [journal.record(referee.feed(item)) for item in refused] == [False] * 4
    assert journal.record(referee.feed({**board, "cells": {**board["cells"], "b2": "p1"}}))
    assert journal.record(referee.feed({"event": "pass", "player": "p2"}))
    journal.close()
    assert [json.loads(line) for line in journal_lines(path)] == [
        {"move": "b2", "player": "p1"},
        {"event": "pass", "player": "p2"},
    ]


def test_a_line_cut_short_is_reported_skipped_and_appending_goes_on(tmp_path, toy):
    path = tmp_path / "j.jsonl"
    items = list(toygame.random_stream(11, 30))
    referee = Referee(toy)
    with Journal.create(path, toy, {}) as journal:
        play(referee, journal, items)
    data = path.read_bytes()
    path.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 6])  # power cut in the last line

    expected = Referee(toy)
    play(expected, None, items[:-1])
    journal = Journal(path)
    resumed = journal.resume()
    assert [p.line for p in resumed.problems] == [len(items) + 1]
    assert "unreadable" in str(resumed.problems[0])
    same_game(resumed.referee, expected)

    # the game goes on: the next move is journaled on a line of its own
    move = next(resumed.referee.game.legal_moves())
    resumed.referee.game.play(move)
    journal.append({"move": str(move)})
    again = Journal(path).resume()
    assert [p.line for p in again.problems] == [len(items) + 1]
    same_game(again.referee, resumed.referee)


def test_garbage_and_unreplayable_lines_are_skipped_not_fatal(tmp_path, toy):
    path = tmp_path / "j.jsonl"
    with Journal.create(path, toy, {}) as journal:
        for item in ({"move": "a1"}, {"move": "a1"}, [1, 2], {"hello": 1}, {"event": "shuffle"}):
            journal.append(item)
    with path.open("ab") as handle:
        handle.write(b"\xff\xfe not json\n")
        handle.write(b'{"move": "b1"}\n')
    resumed = Journal(path).resume()
    assert [p.line for p in resumed.problems] == [3, 4, 5, 6, 7]
    assert "a1 is taken" in resumed.problems[0].reason
    assert resumed.entries == 2
    assert resumed.referee.game.view()["a1"] == "p1" and resumed.referee.game.view()["b1"] == "p2"


def test_a_journal_without_a_header_or_file_is_an_error(tmp_path, toy):
    with pytest.raises(JournalError, match="cannot read"):
        Journal(tmp_path / "missing.jsonl").resume()
    with pytest.raises(JournalError, match=r"Journal\.create"):
        Journal(tmp_path / "missing.jsonl").append({"move": "a1"})
    headless = tmp_path / "headless.jsonl"
    headless.write_text('{"move": "a1"}\n')
    with pytest.raises(JournalError, match="no journal header"):
        Journal(headless).resume()
    unknown = tmp_path / "unknown.jsonl"
    Journal.create(unknown, "chess", {})
    with pytest.raises(JournalError, match="cannot start chess"):
        Journal(unknown).resume()


def test_kill_9_in_the_middle_of_writing_loses_no_acknowledged_move(tmp_path, toy):
    path = tmp_path / "current.jsonl"
    seed = 5
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.firmware.journal_writer", str(path), str(seed)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
    )
    acknowledged = []
    try:
        while len(acknowledged) < 150:
            line = writer.stdout.readline()
            assert line, "the writer stopped by itself"
            acknowledged.append(json.loads(line))
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        # through the buffered reader: communicate() with a timeout reads the pipe itself and
        # would drop acknowledgements readline() had already buffered
        rest = writer.stdout.read()
        writer.wait(timeout=10)
    assert writer.returncode == -signal.SIGKILL
    acknowledged += [
        json.loads(line) for line in rest.splitlines(keepends=True) if line[-1:] == b"\n"
    ]

    lines = [json.loads(line) for line in journal_lines(path) if line.strip()]
    assert lines[: len(acknowledged)] == acknowledged
    assert len(lines) <= len(acknowledged) + 1  # at most the line being acknowledged at the kill

    resumed = Journal(path).resume()
    assert resumed.problems == () and resumed.entries == len(lines)
    expected = Referee(toy)  # the same stream judged from the boards, not the journal
    play(expected, None, list(toygame.random_stream(seed, len(lines))))
    same_game(resumed.referee, expected)


def test_a_finished_game_is_saved_as_a_record_and_a_replayable_stream(tmp_path, toy, capsys):
    rng = random.Random(4)
    game = new_game(toy, first="p2")
    while not game.is_over:
        if len(game.history) == 5:  # p2, p1, p2, p1, p2 played: p1 passes
            assert game.handle(Event("pass", "p1")).kind == EVENT
        game.play(rng.choice(list(game.legal_moves())))
    saved = save_record(game, tmp_path / "records", stem="night")
    assert saved.record.name == "night.json" and saved.replay.name == "night.jsonl"

    record = json.loads(saved.record.read_text())
    assert record == json.loads(json.dumps(game.to_record()))
    assert type(game).from_record(record).to_record() == game.to_record()

    replay = [json.loads(line) for line in saved.replay.read_text().splitlines()]
    assert replay == replay_items(game)
    assert replay[0] == {"event": "start", "players": 2, "first": "p2"}
    assert replay[6] == {"event": "pass", "player": "p1"}
    assert len(replay) == 1 + 16 + 1
    fed = Referee(toy)
    play(fed, None, replay)
    assert fed.game.to_record() == game.to_record()

    assert cli.main(["replay", str(saved.replay), "--game", toy, "--json"]) == 0
    verdicts = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(verdicts) == len(replay)
    assert {v["verdict"] for v in verdicts} == {"move", "event"}
    assert verdicts[-1]["scores"] == game.scores and verdicts[-1]["winner"] == game.winner
    assert verdicts[-1]["over"] is True


@pytest.mark.parametrize("name", list(GAMES))
def test_every_game_resumes_and_replays_from_disk(tmp_path, name):
    rng = random.Random(1)
    referee = Referee(name)
    journal = Journal.create(tmp_path / CURRENT, name, referee.defaults)
    while not referee.game.is_over and len(referee.game.history) < 400:
        action = referee.game.random_move(rng)
        if isinstance(action, Event):
            item = action.to_json()  # a button
        else:
            after = referee.game.copy()  # the board the camera sees once the move is made
            after.play(action)
            item = after.observation_to_json(after.current_observation())
        outcome = referee.feed(item)
        assert outcome.verdict.kind in (MOVE, EVENT), outcome.verdict
        assert journal.record(outcome)
    journal.close()
    resumed = Journal(tmp_path / CURRENT).resume()
    assert resumed.problems == () and resumed.entries == len(referee.game.history)
    same_game(resumed.referee, referee)

    saved = save_record(referee.game, tmp_path / "records")
    assert saved.record.name.endswith(f"-{name}.json")
    replayed = Referee(name)
    play(replayed, None, [json.loads(line) for line in saved.replay.read_text().splitlines()])
    same_game(replayed, referee)


def test_records_keep_events_and_never_overwrite(tmp_path, toy):
    referee = Referee(toy)
    play(referee, None, [{"event": "pass"}, {"event": "pass", "player": "p2"}])
    first = save_record(referee.game, tmp_path, stem="same")
    second = save_record(referee.game, tmp_path, stem="same")
    assert second.record.name == "same-2.json" and first.record.exists()
    lines = [json.loads(line) for line in second.replay.read_text().splitlines()]
    assert lines[1:] == [{"event": "pass"}, {"event": "pass", "player": "p2"}]


@pytest.mark.parametrize("name", [n for n in GAMES if game_class(n).opening_decides_first])
def test_a_game_opened_by_the_second_colour_resumes_and_replays_as_played(tmp_path, name):
    """With no first player named, the first piece decided who starts: the journal and the
    record keep it (without it the journal's moves would be replayed for the other colour)."""
    rng = random.Random(3)
    referee = Referee(name)
    opener = referee.game.players[1]
    journal = Journal.create(tmp_path / CURRENT, name, referee.defaults)
    board = referee.game.copy()
    board.open_with(opener)
    for _ in range(6):
        board.play(board.random_move(rng))
        outcome = referee.feed(board.observation_to_json(board.current_observation()))
        assert outcome.verdict.kind == MOVE and journal.record(outcome)
    journal.close()
    assert referee.game.players[0] == opener
    resumed = Journal(tmp_path / CURRENT).resume()
    assert resumed.problems == ()
    same_game(resumed.referee, referee)
    saved = save_record(referee.game, tmp_path / "records")
    replayed = Referee(name)
    play(replayed, None, [json.loads(line) for line in saved.replay.read_text().splitlines()])
    same_game(replayed, referee)
