"""``[record] frames``: accepted positions saved as labelled photos that the photo bench reads."""

import json

from luma.core.device import dummy

from firmware.config import load_config
from firmware.display import Display
from firmware.loop import RefereeLoop
from firmware.scenario import scripted_game
from firmware.simulator import SimulatedTable
from vision.bench_photos import bench_photos, scan


def _play(tmp_path, frames_dir, moves=2):
    script = scripted_game("gobblet", seed=4)
    script.steps = script.steps[:moves]
    table = SimulatedTable(script, seed=2, hand_frames=2, still_frames=6)
    reports = []
    loop = RefereeLoop(
        table,
        Display(dummy(width=128, height=64, mode="1")),
        game="gobblet",
        journal_dir=tmp_path / "journal",
        records_dir=tmp_path / "records",
        frames_dir=frames_dir,
        actions=table.next_action,
        on_report=lambda r: reports.append(r.text),
    )
    while not table.finished:
        loop.step()
    loop.close()  # waits for the writer, and tells its warning if it has not been told yet
    return script, loop, reports


def test_the_opening_and_every_move_are_saved_and_read_back_by_the_photo_bench(tmp_path):
    frames = tmp_path / "frames"
    script, _, reports = _play(tmp_path, frames)
    labels = sorted(frames.glob("*.json"))
    assert len(labels) == 3  # the empty board checked at the start, then two moves
    assert sorted(p.name for p in frames.iterdir()) == sorted(
        [p.name for p in labels] + [p.with_suffix(".jpg").name for p in labels]
    )
    truths = [json.loads(p.read_text(encoding="utf-8")) for p in labels]
    assert all(t["cells"] == {n: None for n in t["cells"]} for t in truths[:1])
    for truth, step in zip(truths[1:], script.steps, strict=True):
        assert truth["cells"] == step.item["cells"]
        assert (truth["game"], truth["occluded"], truth["occluded_cells"]) == ("gobblet", False, [])
        assert truth["t"] > 0
    assert not any("warning" in r for r in reports)

    photos, problems = scan(tmp_path)
    assert problems == [] and list(photos) == ["gobblet"]
    bench, unreadable = bench_photos("gobblet", photos["gobblet"])
    assert unreadable == [] and bench.figures.scenes == 3 and bench.figures.hand_scenes == 0
    assert bench.figures.board_accuracy == 1.0 and bench.figures.clear_boards == 1.0
    assert bench.figures.not_found == 0 and bench.failures == ()


def test_a_disk_that_cannot_be_written_is_one_warning_and_the_game_goes_on(tmp_path):
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("", encoding="utf-8")
    script, loop, reports = _play(tmp_path, blocked / "frames")
    warnings = [r for r in reports if r.startswith("warning:")]
    assert len(warnings) == 1 and "cannot save frames" in warnings[0]
    assert len(loop.referee.game.history) == len(script.steps)


def test_frames_are_off_by_default_and_go_to_the_journal_folder_when_on(tmp_path):
    config = load_config()
    assert config.record.frames_dir(config.journal) is None
    user = tmp_path / "config.toml"
    user.write_text('[journal]\ndirectory = "/srv/j"\n[record]\nframes = true\n', encoding="utf-8")
    config = load_config(user)
    assert str(config.record.frames_dir(config.journal)) == "/srv/j/frames"
