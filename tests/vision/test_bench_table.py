"""A filmed sample game with an illegal placement, and how the table bench counts it."""

from engine import ILLEGAL, Observation
from vision.bench_table import Tally, _reader, _table_has_seen, filmed_game
from vision.synth import Domain

from .forbidden import forbidden_squares

KEY = 7


def _probabilities(view, sure=0.9999):
    """Each cell read as ``view`` has it at ``sure``: a placement of two squares or more is then
    likelier than any legal explanation by more than every illegal margin the fit offers."""
    contents = set(view.values()) | {None}
    rest = (1.0 - sure) / (len(contents) - 1)
    return {n: {c: sure if c == v else rest for c in contents} for n, v in view.items()}


def test_a_filmed_game_shows_one_illegal_placement_and_goes_on_as_without_it():
    plain = [(s.truth, s.played) for s in filmed_game("blokus-duo", KEY, Domain.TRAIN, moves=4)]
    legal, attempts = [], []
    for shot in filmed_game("blokus-duo", KEY, Domain.TRAIN, moves=4, illegal=True):
        if shot.illegal is None:
            legal.append((shot.truth, shot.played))
            continue
        # judged against the accepted state (the referee moves on with the consumer)
        verdict = shot.referee.infer(Observation("blokus-duo", shot.truth))
        assert verdict.reason == shot.illegal
        attempts.append((shot.played, shot.pose is not None, verdict.kind))
    assert attempts == [(None, True, ILLEGAL)]
    # taken back: the legal boards and moves are those of the game without it
    assert legal == plain


def test_the_tally_flags_an_illegal_placement_seen_and_lets_stand_one_read_as_before():
    tally = Tally()
    before = None
    for shot in filmed_game("blokus-duo", KEY, Domain.TRAIN, moves=4, illegal=True):
        if shot.illegal is None:
            before = shot.truth
            continue
        assert sum(shot.truth[n] != before[n] for n in before) >= 2
        seen = Observation("blokus-duo", shot.truth, probabilities=_probabilities(shot.truth))
        missed = Observation("blokus-duo", before, probabilities=_probabilities(before))
        tally.judge_illegal(shot.referee, seen)
        tally.judge_illegal(shot.referee, missed)
        tally.judge_illegal(shot.referee, None)  # no board found
    assert (tally.illegal, tally.illegal_flagged, tally.illegal_let_stand) == (3, 1, 1)
    assert tally.moves == 0 and tally.boards == 0


def test_the_tally_counts_moves_lost_to_a_misread_of_a_cell_the_move_leaves_alone():
    from engine import new_game

    game = new_game("blokus-duo")
    first = next(m for m in game.legal_moves() if len(game.changes_after(m)) == 5)
    game.play(first)
    played = next(m for m in game.legal_moves() if len(game.changes_after(m)) == 5)
    after = {**game.view(), **game.changes_after(played)}
    old = next(iter(game.changes_after(first)))  # the first piece's square, accepted before
    empty = next(c for c, v in after.items() if v is None)
    own = next(iter(game.changes_after(played)))

    def read(cells, doubtful=()):
        probs = _probabilities(cells)
        for cell in doubtful:  # 60:40 for what the cell shows, against empty
            probs[cell] = {c: 0.0 for c in probs[cell]} | {cells[cell]: 0.6, None: 0.4}
        return Observation("blokus-duo", cells, probabilities=probs)

    tally = Tally()
    tally.judge(game, read(after), played)  # read right: accepted, nothing counted
    assert (tally.moves_right, tally.failed_elsewhere, tally.failed_only_elsewhere) == (1, 0, 0)
    # a square of the piece accepted before read empty, an empty square read as a piece: the
    # decoder keeps what those cells showed, the move is accepted all the same
    tally.judge(game, read({**after, old: None}), played)
    tally.judge(game, read({**after, empty: after[own]}), played)
    assert (tally.moves, tally.moves_right, tally.failed_elsewhere) == (3, 3, 0)
    # the piece seen surely on squares the rules forbid too, its own squares read right but
    # doubtfully: flagged illegal, lost to cells the move leaves alone only
    copy = dict.fromkeys(forbidden_squares(game, played), game.to_move)
    tally.judge(game, read({**after, **copy}, doubtful=played.cells()), played)
    assert (tally.moves, tally.moves_right, tally.moves_wrong) == (4, 3, 0)
    assert (tally.failed_elsewhere, tally.failed_only_elsewhere) == (1, 1)
    # the move's own square misread too: elsewhere, but not only elsewhere
    tally.judge(game, read({**after, **copy, own: None}, doubtful=played.cells()), played)
    assert (tally.failed_elsewhere, tally.failed_only_elsewhere) == (2, 1)


def test_a_game_filmed_with_fresh_noise_shows_the_same_boards_each_in_noise_of_its_own():
    import numpy as np

    frozen = list(filmed_game("blokus-duo", KEY, Domain.TRAIN, moves=2))
    fresh = list(filmed_game("blokus-duo", KEY, Domain.TRAIN, moves=2, fresh_noise=True))
    assert [(s.truth, s.played) for s in fresh] == [(s.truth, s.played) for s in frozen]
    assert all(s.pose is not None for s in fresh)
    # the same picture through the same camera, with other noise: close, never the same
    for a, b in zip(frozen, fresh, strict=True):
        diff = np.abs(a.image.astype(int) - b.image.astype(int))
        assert diff.max() > 0 and np.median(diff) < 16
    # two boards of one table differ by their noise too, not only where the move is (frozen:
    # 0.35 % of their pixels)
    first, second = (s.image.astype(int) for s in fresh[:2])
    assert np.mean(first != second) > 0.5


def test_the_tally_lists_a_move_accepted_wrongly_with_the_cells_read_otherwise():
    from engine import new_game

    game = new_game("blokus-duo")
    first = next(m for m in game.legal_moves() if len(game.changes_after(m)) == 5)
    game.play(first)
    played, other = (m for m, _ in zip(game.legal_moves(), range(2), strict=False))
    shown = {**game.view(), **game.changes_after(played)}
    seen = {**game.view(), **game.changes_after(other)}  # the board of another legal move
    tally = Tally()
    tally.judge(game, Observation("blokus-duo", shown, probabilities=_probabilities(shown)), played)
    obs = Observation("blokus-duo", seen, probabilities=_probabilities(seen))
    tally.judge(game, obs, played, "table 2 board 5: ", "; the table has seen empty 3")
    assert (tally.moves_right, tally.moves_wrong) == (1, 1)
    [line] = tally.wrong
    line, bank = line.split("; the table has seen ")
    assert bank == "empty 3"
    head, misread = line.split("; misread ")
    assert head == f"table 2 board 5: {played} accepted as {other}"
    # every cell where the two boards differ, as shown -> read, and no other
    differ = {c for c in shown if shown[c] != seen[c]}
    listed = dict(item.split(": ") for item in misread.split(", "))
    assert set(listed) == differ
    for cell, change in listed.items():
        assert change == " -> ".join(
            "empty" if v is None else game.cell_to_json(v) for v in (shown[cell], seen[cell])
        )


def test_a_wrong_move_s_line_says_what_the_table_s_bank_had_seen():
    import numpy as np

    reader = _reader("gobblet")
    assert _table_has_seen(reader) == "; the table has seen nothing"
    classes = reader.model.classes
    empty, white_4 = classes.index("empty"), classes.index("white-4")
    reader.bank.add(np.zeros((3, 4)), np.array([empty, white_4, empty]))
    assert _table_has_seen(reader) == "; the table has seen empty 2, white-4 1"


def test_bench_table_lists_as_many_failures_as_moves_accepted_wrongly(capsys):
    import json

    from firmware.cli import main

    argv = ["bench", "table", "--game", "gobsmacked", "--tables", "1", "--splits", "heldout"]
    assert main([*argv, "--seed", "3", "--json", "--failures"]) == 0
    out, err = capsys.readouterr()
    figures = json.loads(out)["heldout"]["gobsmacked"]
    lines = err.splitlines()
    assert len(lines) == figures["moves_wrong"]
    assert all(line.startswith("heldout gobsmacked table 0 board ") for line in lines)
