"""What the players can ask of the appliance, whatever the input: GPIO buttons or a keyboard.

Three buttons make four actions: CONFIRM and UNDO (one button each) and the menu button, whose
short press is MENU (open the menu / show the next choice) and whose ~1.5 s hold is CHOOSE (take
the choice shown). :class:`Menu` is the list those two walk, the same for buttons and keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum


class Action(Enum):
    """One user action, as the referee loop receives it."""

    CONFIRM = "confirm"
    UNDO = "undo"
    MENU = "menu"
    CHOOSE = "choose"


class MenuItem(Enum):
    """The main menu's choices, in the order the menu shows them (value = label)."""

    PASS = "pass"
    EXCHANGE = "exchange"
    END = "end of game"
    PLAYERS = "players"
    TEAMS = "teams"
    NEW_GAME = "new game"
    PHONE = "phone page"
    SHUTDOWN = "shut down"


#: The simulator's keyboard: key name -> action (names as curses/pygame report them, lower case).
KEYS: dict[str, Action] = {
    "enter": Action.CONFIRM,
    "return": Action.CONFIRM,
    "space": Action.CONFIRM,
    "u": Action.UNDO,
    "backspace": Action.UNDO,
    "m": Action.MENU,
    "tab": Action.MENU,
    "c": Action.CHOOSE,
}

_TYPED = {" ": "space", "\n": "enter", "\r": "enter", "\t": "tab", "\x7f": "backspace"}


def action_for_key(key: str) -> Action | None:
    """The action of a key, by name (``"Enter"``, ``"u"``) or as typed (``" "``, ``"\\n"``)."""
    return KEYS.get(_TYPED.get(key, key.lower()))


class Menu:
    """A list of choices walked with :attr:`Action.MENU` and taken with :attr:`Action.CHOOSE`.

    Closed at first. MENU opens it on its first choice, then shows the next one (wrapping round);
    CHOOSE or CONFIRM takes the choice shown and closes it; UNDO closes it without a choice.
    """

    def __init__(self, title: str, choices: Sequence[str]) -> None:
        if not choices:
            raise ValueError("a menu needs at least one choice")
        self.title = title
        self.choices = tuple(choices)
        self.index = 0
        self.is_open = False

    @classmethod
    def main(cls) -> Menu:
        """The main menu: every :class:`MenuItem`."""
        return cls("Menu", [item.value for item in MenuItem])

    @property
    def current(self) -> str:
        """The choice shown."""
        return self.choices[self.index]

    def handle(self, action: Action) -> str | None:
        """Apply ``action``; returns the choice taken, else ``None``."""
        if action is Action.MENU:
            self.index = (self.index + 1) % len(self.choices) if self.is_open else 0
            self.is_open = True
            return None
        if not self.is_open:
            return None
        self.is_open = False
        if action in (Action.CHOOSE, Action.CONFIRM):
            return self.current
        return None
