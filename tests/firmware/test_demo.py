"""The simulated game night: every game played through camera frames, vision, engine, screens and
journal; the final scores are checked against a count made here, without the engine."""

import json
from pathlib import Path

import pytest
from PIL import Image

from engine import GAMES
from firmware.demo import DEMO_GAMES, play_demo_game
from tests.engine.test_gobsmacked import recount as gobsmacked_recount

DATA = Path(__file__).resolve().parents[2] / "engine" / "data"


def _record(out: Path, game: str) -> dict:
    (path,) = (out / game / "records").glob("*.json")
    return json.loads(path.read_text())


def _spectrangle_count(actions: list, players: list[str]) -> dict[str, int]:
    """Value x touching sides x bonus, with the README's cell indexing; minus hands at the end."""
    data = json.loads((DATA / "spectrangle.json").read_text())
    values = {"".join(sorted(code)): v for code, v in data["pieces"].items()}
    bonus = {int(c): int(x) for c, x in data["bonus"].items()}

    def neighbours(i: int) -> list[int]:
        row = int(i**0.5)
        k = i - row * row
        out = [i - 1] if k > 0 else []
        out += [i + 1] if k < 2 * row else []
        if k % 2 == 0 and row < 5:
            out.append((row + 1) ** 2 + k + 1)
        if k % 2 == 1:
            out.append((row - 1) ** 2 + k - 1)
        return out

    board: set[int] = set()
    scores = dict.fromkeys(players, 0)
    turn = 0
    for action in actions:
        if isinstance(action, dict):
            if action["event"] in ("pass", "exchange"):
                turn += 1
            elif action["event"] == "end":
                for player, hand in action["remaining"].items():
                    scores[player] -= sum(values["".join(sorted(code))] for code in hand)
            continue
        edges, cell = action.split("@")
        cell = int(cell)
        sides = sum(1 for n in neighbours(cell) if n in board)
        scores[players[turn % len(players)]] += (
            values["".join(sorted(edges))] * max(1, sides) * bonus.get(cell, 1)
        )
        board.add(cell)
        turn += 1
    return scores


def _blokus_count(moves: list[str], view: dict, game: str) -> dict[str, int]:
    """-1 a square left, +15 when all are placed, +5 more when the monomino came last."""
    data = json.loads((DATA / f"{game}.json").read_text())
    total = sum(len(p["squares"]) for p in data["pieces"])
    scores = {}
    for colour in ("orange", "violet"):
        left = total - sum(1 for v in view.values() if v == colour)
        mine = [m for m in moves if view[m.split("@")[1].split(",")[0]] == colour]
        last_mono = bool(mine) and len(mine[-1].split("@")[1].split(",")) == 1
        scores[colour] = -left + (15 + 5 * last_mono if left == 0 else 0)
    return scores


def _gobblet_lines(view: dict) -> set[str]:
    lines = [[f"{f}{r}" for f in "abcd"] for r in range(1, 5)]
    lines += [[f"{f}{r}" for r in range(1, 5)] for f in "abcd"]
    lines += [["a1", "b2", "c3", "d4"], ["a4", "b3", "c2", "d1"]]
    out = set()
    for line in lines:
        colours = {view[c]["color"] if view[c] else None for c in line}
        if len(colours) == 1 and None not in colours:
            out |= colours
    return out


def test_the_demo_plays_every_game_the_referee_knows():
    assert set(DEMO_GAMES) == set(GAMES)


@pytest.mark.parametrize("game", DEMO_GAMES)
def test_demo_game_verdicts_and_final_scores(game, tmp_path):
    result = play_demo_game(game, tmp_path, seed=7, echo=False)
    assert result.verdicts == result.expected  # every move seen, the illegal one flagged
    assert "illegal" in result.verdicts
    record = _record(tmp_path, game)
    moves = [a for a in record["actions"] if isinstance(a, str)]
    (replay,) = (tmp_path / game / "records").glob("*.jsonl")
    boards = [json.loads(line) for line in replay.read_text().splitlines()]
    view = [b for b in boards if "cells" in b][-1]["cells"]
    if game == "gobsmacked":
        assert result.scores == gobsmacked_recount(moves, "p1")
        assert all(v is not None for v in view.values())  # the board is full
    elif game == "spectrangle":
        players = [f"p{i + 1}" for i in range(record["options"]["players"])]
        assert result.scores == _spectrangle_count(record["actions"], players)
        assert any(
            isinstance(a, dict) and a["event"] == "exchange" for a in record["actions"]
        ) or any(isinstance(a, dict) and a["event"] == "pass" for a in record["actions"])
    elif game == "gobblet":
        winners = _gobblet_lines(view)
        assert result.winner in winners or (result.winner == "draw" and not winners)
    else:
        assert result.scores == _blokus_count(moves, view, game)
    gif = Image.open(result.gif)
    assert gif.n_frames > 10 and gif.size == (512, 256)
