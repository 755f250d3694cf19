"""The OLED screens: 1-bit 128x64 images whose texts always fit, whatever the names and reasons."""

from hypothesis import given, settings
from hypothesis import strategies as st

from firmware import screens
from firmware.screens import ELLIPSIS, HEIGHT, ON, WIDTH

words = st.text(
    alphabet=st.characters(categories=("L", "N", "P", "S", "Zs"), max_codepoint=0x1F600),
    max_size=120,
)
names = st.text(alphabet=st.characters(categories=("L", "N"), max_codepoint=0x24F), min_size=1)
scores = st.dictionaries(names, st.integers(-9_999, 999_999), min_size=1, max_size=4)
cells = st.lists(st.text("abcdefghijklmn0123456789", min_size=2, max_size=3), max_size=30)
status = st.none() | words


def screens_of(data):
    """One of every screen, drawn from hypothesis data."""
    s = data.draw(status)
    board = data.draw(scores)
    return [
        screens.menu(
            data.draw(words), data.draw(st.lists(names, min_size=1, max_size=9)), 0, status=s
        ),
        screens.scoreboard(board, data.draw(st.sampled_from([*board, None])), status=s),
        screens.last_move(data.draw(names), data.draw(words), data.draw(scores), status=s),
        screens.illegal(data.draw(words), data.draw(cells), status=s),
        screens.illegal(data.draw(words), data.draw(cells), status=s, offer=data.draw(words)),
        screens.check_board(data.draw(words), data.draw(cells), status=s),
        screens.board_not_found(data.draw(words), status=s),
        screens.hand_over_board(status=s),
        screens.hand_over_board(status=s, still=True),
        screens.confirm(data.draw(words), data.draw(words), status=s),
        screens.game_over(data.draw(names | st.just("draw")), board, status=s),
        screens.looking_again(status=s),
        screens.no_move_seen(status=s),
        screens.shutdown(confirmed=data.draw(st.booleans()), status=s),
    ]


def overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def lit(image, box):
    """The share of lit pixels in ``box``."""
    histogram = image.crop(box).convert("L").histogram()
    return histogram[ON] / sum(histogram)


@settings(derandomize=True, max_examples=100, deadline=None)
@given(data=st.data())
def test_no_text_ever_leaves_the_screen_or_overlaps_another(data):
    for screen in screens_of(data):
        assert screen.image.size == (WIDTH, HEIGHT) and screen.image.mode == "1"
        for text, box in screen.texts:
            assert box[0] >= 0 and box[1] >= 0 and box[2] <= WIDTH and box[3] <= HEIGHT, text
        for i, (text, box) in enumerate(screen.texts):
            for other, other_box in screen.texts[i + 1 :]:
                assert not overlap(box, other_box), (text, other)


def test_scores_are_big_and_the_player_to_move_stands_out():
    screen = screens.scoreboard({"orange": 37, "violet": 5}, "violet")
    boxes = dict(screen.texts)
    assert "violet to play" in boxes
    for digits in ("37", "5"):
        assert boxes[digits][3] - boxes[digits][1] >= 28  # a third of the screen's height
    assert lit(screen.image, boxes["violet"]) > 0.5  # light label, dark text
    assert lit(screen.image, boxes["orange"]) < 0.5


def test_four_players_still_get_digits_twice_the_small_print():
    screen = screens.scoreboard({"p1": 120, "p2": 88, "p3": 7, "p4": 199}, "p3")
    boxes = dict(screen.texts)
    small = boxes["p1"][3] - boxes["p1"][1]
    assert all(boxes[s][3] - boxes[s][1] >= 1.4 * small for s in ("120", "88", "7", "199"))
    assert lit(screen.image, boxes["p3"]) > 0.5 > lit(screen.image, boxes["p4"])


def test_illegal_is_inverted_flashing_and_names_the_cells():
    screen = screens.illegal("a piece of the same colour touches along an edge", ["d9", "e9"])
    assert screen.blink
    assert lit(screen.image, (0, 0, WIDTH, HEIGHT)) > 0.6  # a light screen among dark ones
    assert screen.text.startswith("ILLEGAL")
    assert "fix d9 e9" in screen.text and "touches along" in screen.text
    flashed = screens.inverted(screen.image)
    assert lit(flashed, (0, 0, WIDTH, HEIGHT)) < 0.4
    assert screens.inverted(flashed).tobytes() == screen.image.tobytes()


def test_illegal_offers_the_likeliest_legal_move_below_the_cells():
    screen = screens.illegal(
        "orange piece touches orange by an edge at e8",
        ["e8", "f8"],
        status="camera too far",
        offer="OK if it was I5@e7",
    )
    boxes = dict(screen.texts)
    assert "OK if it was I5@e7" in boxes and "fix e8 f8" in boxes
    assert boxes["fix e8 f8"][3] <= boxes["OK if it was I5@e7"][1]  # the offer below the cells


def test_a_board_not_set_up_is_inverted_still_and_offers_ok():
    screen = screens.check_board("violet's first piece must cover d9 or i4", ["a1"])
    assert not screen.blink and lit(screen.image, (0, 0, WIDTH, HEIGHT)) > 0.6
    assert screen.text.startswith("CHECK BOARD") and "fix a1" in screen.text
    boxes = dict(screen.texts)
    assert boxes["fix a1"][3] <= boxes["OK if set up"][1]


def test_too_many_cells_are_counted_not_cut():
    screen = screens.illegal("overlap", [f"a{i}" for i in range(1, 15)])
    fix = next(text for text, _ in screen.texts if text.startswith("fix"))
    shown = fix.split()[1:-1]
    assert (
        fix.endswith(f"+{14 - len(shown)}")
        and shown == [f"a{i}" for i in range(1, 15)][: len(shown)]
    )


def test_only_the_illegal_screen_blinks():
    others = [
        screens.menu("Menu", ["pass"], 0),
        screens.scoreboard({"white": 1}, "white"),
        screens.last_move("p1", "a1", {}),
        screens.check_board("not set up", ["a1"]),
        screens.board_not_found(),
        screens.hand_over_board(),
        screens.hand_over_board(still=True),
        screens.confirm("a", "b"),
        screens.game_over("draw", {"white": 0}),
        screens.looking_again(),
        screens.no_move_seen(),
    ]
    assert not any(screen.blink for screen in others)


def test_the_menu_keeps_the_current_choice_in_view_and_highlighted():
    choices = ["gobsmacked", "spectrangle", "gobblet", "blokus", "blokus-duo", "toy"]
    for index, choice in enumerate(choices):
        for s in (None, "camera lost"):
            screen = screens.menu("Choose a game", choices, index, status=s)
            boxes = dict(screen.texts)
            assert choice in boxes and f"{index + 1}/{len(choices)}" in boxes
            assert lit(screen.image, boxes[choice]) > 0.5
            assert (s in boxes) == (s is not None)


def test_confirm_says_which_button_picks_which_explanation():
    screen = screens.confirm("b3-c4 (+3)", "b3xc4 gobble", first_key="OK", second_key="MENU")
    lines = screen.text.splitlines()
    assert lines.index("OK") < lines.index("MENU")
    ok, menu = dict(screen.texts)["OK"], dict(screen.texts)["MENU"]
    first, second = dict(screen.texts)["b3-c4 (+3)"], dict(screen.texts)["b3xc4 gobble"]
    assert abs((ok[1] + ok[3]) - (first[1] + first[3])) <= 4  # same row
    assert abs((menu[1] + menu[3]) - (second[1] + second[3])) <= 4
    assert "UNDO: neither" in lines
    more = screens.confirm("b3-c4 (+3)", "b3xc4 gobble", more=True).text.splitlines()
    assert "UNDO: others" in more and "UNDO: neither" not in more


def test_game_over_shows_the_winner_or_a_draw():
    assert "winner" in screens.game_over("orange", {"orange": 3, "violet": 1}).text
    draw = screens.game_over("draw", {"white": 0, "black": 0}).text
    assert "DRAW" in draw and "winner" not in draw and "white 0" in draw


def test_long_text_is_wrapped_then_ellipsized():
    lines = screens.wrap("one two three four five six seven eight nine ten", 10, 50, 2)
    assert len(lines) == 2 and lines[-1].endswith(ELLIPSIS)
    assert all(screens.text_width(line, 10) <= 50 for line in lines)
    assert screens.wrap("short", 10, 50, 2) == ["short"]
    assert (
        " ".join(screens.wrap("fits in three lines here", 10, 60, 3)) == "fits in three lines here"
    )
    assert screens.wrap("x" * 40, 10, 50, 3)[0].startswith("xxxx")  # a long word is cut


def test_text_is_reduced_to_what_the_font_can_draw():
    assert screens.plain("Partie terminée:  égalité\n") == "Partie terminee: egalite"
    assert screens.plain("team ★ 2") == "team ? 2"
    assert screens.ellipsize("spectrangle", 10, 1000) == "spectrangle"
    cut = screens.ellipsize("spectrangle", 10, 30)
    assert cut.endswith(ELLIPSIS) and screens.text_width(cut, 10) <= 30
