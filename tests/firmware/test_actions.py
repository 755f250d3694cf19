"""The action vocabulary, the simulator's keys and the menu both inputs walk."""

import pytest

from firmware.actions import Action, Menu, MenuItem, action_for_key


@pytest.mark.parametrize(
    ("key", "action"),
    [
        ("Enter", Action.CONFIRM),
        ("\n", Action.CONFIRM),
        (" ", Action.CONFIRM),
        ("u", Action.UNDO),
        ("BackSpace", Action.UNDO),
        ("m", Action.MENU),
        ("\t", Action.MENU),
        ("C", Action.CHOOSE),
        ("x", None),
        ("F1", None),
    ],
)
def test_keys_map_to_the_button_actions(key, action):
    assert action_for_key(key) is action


def test_every_action_has_a_key():
    assert {action_for_key(k) for k in ("enter", "u", "m", "c")} == set(Action)


def test_the_main_menu_lists_every_item_in_order():
    menu = Menu.main()
    assert menu.choices == (
        "pass",
        "exchange",
        "end of game",
        "players",
        "teams",
        "new game",
        "phone page",
        "shut down",
    )
    assert [MenuItem(choice) for choice in menu.choices] == list(MenuItem)


def test_menu_opens_walks_round_and_chooses():
    menu = Menu("Game", ["gobblet", "blokus", "spectrangle"])
    assert not menu.is_open
    assert menu.handle(Action.CONFIRM) is None and not menu.is_open  # closed: not for the menu
    assert menu.handle(Action.MENU) is None and menu.is_open and menu.current == "gobblet"
    for expected in ("blokus", "spectrangle", "gobblet", "blokus"):
        menu.handle(Action.MENU)
        assert menu.current == expected
    assert menu.handle(Action.CHOOSE) == "blokus" and not menu.is_open
    menu.handle(Action.MENU)
    assert menu.current == "gobblet"  # reopens on the first choice


def test_confirm_chooses_and_undo_backs_out():
    menu = Menu.main()
    menu.handle(Action.MENU)
    menu.handle(Action.MENU)
    assert menu.handle(Action.CONFIRM) == "exchange"
    menu.handle(Action.MENU)
    assert menu.handle(Action.UNDO) is None and not menu.is_open


def test_a_menu_needs_choices():
    with pytest.raises(ValueError, match="at least one"):
        Menu("empty", [])
