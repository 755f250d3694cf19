"""A test helper: a legal move's piece shifted onto squares where the rules forbid it."""

from engine import ILLEGAL, Observation
from engine.grid import parse_square, square_name


def forbidden_squares(game, move, reach=8):
    """``move``'s squares shifted by up to ``reach`` files and ranks onto empty squares where
    the rules forbid the piece (the first such shift found)."""
    view = game.view()
    for dx in range(-reach, reach + 1):
        for dy in range(-reach, reach + 1):
            try:
                moved = [square_name(x + dx, y + dy) for x, y in map(parse_square, move.cells())]
            except IndexError:
                continue
            if all(view.get(n, "off") is None for n in moved):
                board = {**view, **dict.fromkeys(moved, game.to_move)}
                if game.infer(Observation(game.name, board)).kind == ILLEGAL:
                    return moved
    raise AssertionError("no such squares")
