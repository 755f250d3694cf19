"""A short scripted Gobblet game played through the real loop (vision included) with the live
page's feed, for the web tests: ``play(server, moves)`` steps until that many moves are accepted."""

from pathlib import Path

from luma.core.device import dummy

from firmware.display import Display
from firmware.loop import RefereeLoop
from firmware.scenario import scripted_game
from firmware.simulator import SimulatedTable


def make_loop(
    feed, tmp: Path, game: str = "gobblet", seed: int = 7
) -> tuple[RefereeLoop, SimulatedTable]:
    """A loop filming a scripted game of ``game``, telling ``feed``."""
    script = scripted_game(game, seed=seed)
    table = SimulatedTable(script, seed=3, hand_frames=2, still_frames=6)
    loop = RefereeLoop(
        table,
        Display(dummy(width=128, height=64, mode="1")),
        game=game,
        options=script.options,
        journal_dir=tmp / "journal",
        records_dir=tmp / "records",
        actions=table.next_action,
        feed=feed,
    )
    return loop, table


def step_until_moves(loop: RefereeLoop, table: SimulatedTable, moves: int) -> None:
    """Step the loop until ``moves`` moves are accepted (or the table's script ends)."""
    while not table.finished and len(loop.referee.game.history) < moves:
        loop.step()
        for event in table.take_events():
            loop.event(event)
