"""The players at a simulated table: they know what they did, and tell the referee so.

:class:`HonestPlayers` press the buttons real players would press when the referee's screen asks
something of them, and only then: they answer "which move?" and "what was done?" with what they
did (UNDO when neither option is), take the likeliest legal move offered beside an illegal flag
when it is the move they made, say "OK, it is clear" when the referee waits for a hand that is
not there, "OK, it is set up" when the referee finds the board they set up for the game not
set up, undo a move the referee accepted that is not the one they made, and press OK once ("you
missed my move") when their move was judged "no change". Nothing else: a move called illegal
with no offer stays as the referee left it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine import MOVE, NO_CHANGE, Game

from .actions import Action
from .loop import Phase, RefereeLoop, board_after, board_json
from .simulator import SimulatedTable


class HonestPlayers:
    """The players of one simulated ``table``, refereed by ``loop``. ``presses`` counts what
    they pressed, by why: ``answer`` (a question), ``offer`` (the offered move taken),
    ``clear`` (the board is clear), ``setup`` (the board is set up for the game), ``undo`` (a
    wrong move undone, at most ``undo_limit`` times between two calls of :meth:`new_step`),
    ``missed`` (their move judged "no change": OK in play, once between two such calls)."""

    def __init__(self, loop: RefereeLoop, table: SimulatedTable, undo_limit: int = 1) -> None:
        self.loop = loop
        self.table = table
        self.undo_limit = undo_limit
        self.presses: Counter[str] = Counter()
        #: the presses since the last :meth:`new_step`, by why
        self.step_presses: Counter[str] = Counter()
        #: moves the referee accepted that were not the move made, since the last new_step
        self.step_wrong = 0
        self._seen = loop.last_outcome

    def new_step(self) -> None:
        """The players are about to do the next thing of their game."""
        self.step_presses.clear()
        self.step_wrong = 0

    def answer(self) -> bool:
        """Answer the question on the screen, if any, with what was done: OK or MENU for the
        option that left the table's board, UNDO when neither did. True if they answered."""
        choices = self.loop.choices
        if choices is None:
            return False
        for i, option in enumerate(choices):
            if self._is_truth(board_after(self._game, option)):
                self._press(Action.CONFIRM if i == 0 else Action.MENU, "answer")
                return True
        self._press(Action.UNDO, "answer")
        return True

    def act(self) -> None:
        """Whatever the screen asks of them now (:meth:`answer`, an offer, "OK if it is clear",
        "OK if set up"), then say a move judged "no change" was missed, or undo a move just
        accepted that is not theirs."""
        if not self.answer():
            offered = self.loop.offered
            if offered is not None and self._is_truth(board_after(self._game, offered)):
                self._press(Action.CONFIRM, "offer")
            elif self.loop.unset is not None and self._is_truth(self._game.view()):
                self._press(Action.CONFIRM, "setup")
            elif self.loop.offering_clear and not self._hand_over_board:
                self._press(Action.CONFIRM, "clear")
        outcome = self.loop.last_outcome
        if outcome is self._seen or outcome is None:
            return
        self._seen = outcome
        missed = outcome.verdict.kind == NO_CHANGE and not self._is_truth(self._game.view())
        if missed and self.loop.phase is Phase.PLAY and not self.step_presses["missed"]:
            self._press(Action.CONFIRM, "missed")
        if outcome.verdict.kind == MOVE and not self._is_truth(self._game.view()):
            self.step_wrong += 1
            if self.step_presses["undo"] < self.undo_limit:
                self._press(Action.UNDO, "undo")
                self._seen = self.loop.last_outcome

    @property
    def _game(self) -> Game:
        assert self.loop.referee is not None
        return self.loop.referee.game

    @property
    def _hand_over_board(self) -> bool:
        beat = self.table.beat
        return beat is not None and beat.hand

    def _is_truth(self, view: dict[str, Any]) -> bool:
        return board_json(self._game, view) == self.table.board

    def _press(self, action: Action, why: str) -> None:
        self.presses[why] += 1
        self.step_presses[why] += 1
        self.loop.press(action)
