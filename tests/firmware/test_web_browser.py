"""The live page in a real browser: it shows the loop's position and scores, follows the loop's
verdicts by itself, flags an illegal placement and replays finished games. One browser session
for the module."""

import time

import pytest

from firmware.journal import save_record
from firmware.loop import Phase
from firmware.web.server import WebServer
from tests.firmware import browser
from tests.firmware.games import random_game
from tests.firmware.web_game import make_loop, step_until_moves

WAIT = 10.0


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    browser.require()
    from selenium.webdriver.support.ui import WebDriverWait

    tmp = tmp_path_factory.mktemp("browser")
    duo = random_game("blokus-duo", 2)
    save_record(duo, tmp / "records", "20260101-120000-blokus-duo")
    server = WebServer("127.0.0.1", 0, records_dir=tmp / "records").start()
    loop, table = make_loop(server.feed, tmp, seed=1)  # a short game: 17 steps
    step_until_moves(loop, table, 2)
    driver = browser.chrome()
    driver.get(server.url)
    yield driver, WebDriverWait(driver, WAIT), loop, table, duo
    driver.quit()
    loop.close()
    server.stop()


def _board(driver, box: str = "board") -> dict[str, str]:
    cells = driver.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' svg [data-content]')]"
        ".map(e => [e.dataset.cell, e.dataset.content]);",
        f"#{box}",
    )
    return dict(cells)


def _expected(game) -> dict[str, str]:
    return {
        cell: "empty" if piece is None else f"{piece.color} {piece.size}"
        for cell, piece in game.view().items()
    }


def _scores(driver) -> dict[str, int]:
    rows = driver.execute_script(
        "return [...document.querySelectorAll('#scores tr')]"
        ".map(r => [r.dataset.player, r.cells[1].textContent]);"
    )
    return {player: int(score) for player, score in rows}


def test_the_page_shows_the_position_and_the_scores(page):
    driver, wait, loop, _, _ = page
    game = loop.referee.game
    wait.until(lambda d: _board(d) == _expected(game))
    assert _scores(driver) == game.scores
    moves = driver.find_elements("css selector", "#moves li")
    assert [m.text.split()[1] for m in moves] == [str(m) for m in game.history]
    assert driver.find_element("id", "turn").text == f"{game.to_move} to move"


def test_the_page_follows_the_loop_by_itself(page):
    driver, wait, loop, table, _ = page
    before = len(loop.referee.game.history)
    step_until_moves(loop, table, before + 1)
    accepted = time.monotonic()
    game = loop.referee.game
    wait.until(lambda d: len(d.find_elements("css selector", "#moves li")) == before + 1)
    shown = time.monotonic() - accepted
    assert _board(driver) == _expected(game)
    assert shown < WAIT
    assert driver.find_element("id", "connection").text == "live"


def test_an_illegal_placement_is_shown_in_red_with_the_cells_to_fix(page):
    driver, wait, loop, table, _ = page
    while not table.finished and loop.phase != Phase.ILLEGAL:
        loop.step()
        for event in table.take_events():
            loop.event(event)
    assert loop.phase == Phase.ILLEGAL, "the scripted game has an illegal placement"
    banner = wait.until(
        lambda d: (
            d.find_element("id", "banner")
            if "illegal" in d.find_element("id", "banner").get_attribute("class")
            else None
        )
    )
    verdict = loop.illegal
    assert verdict.reason in banner.text
    offered = loop.offered
    assert ("OK on the referee if it was" in banner.text) == (offered is not None)
    assert offered is None or str(offered) in banner.text
    for cell in verdict.cells:
        assert cell in banner.text
    red = driver.execute_script(
        "return [...document.querySelectorAll('#board svg polygon[stroke=\"#d62828\"]')].length;"
    )
    assert red == len(verdict.cells)


def test_a_finished_game_replays_move_by_move(page):
    driver, wait, _, _, duo = page
    link = wait.until(lambda d: d.find_element("css selector", "#games a"))
    link.click()
    wait.until(
        lambda d: (
            d.find_element("id", "step-label").text == f"{len(duo.history)} / {len(duo.history)}"
        )
    )
    final = driver.find_element("id", "replay-move").text  # the last move and the final scores
    assert str(duo.history[-1]) in final
    assert all(f"{player} {score}" in final for player, score in duo.scores.items())
    driver.find_element("id", "first").click()
    driver.find_element("id", "next").click()
    first = duo.history[0]
    wait.until(lambda d: d.find_element("id", "step-label").text.startswith("1 /"))
    wait.until(
        lambda d: (
            {c for c, v in _board(d, "replay-board").items() if v != "empty"} == set(first.cells())
        )
    )
    assert str(first) in driver.find_element("id", "replay-move").text
    links = [a.text for a in driver.find_elements("css selector", "#replay-downloads a")]
    assert links == ["sgf", "txt", "jsonl"]


def test_a_hand_over_the_board_and_the_end_of_the_game_are_shown(page):
    driver, wait, loop, table, _ = page
    while not table.finished and loop.phase == Phase.ILLEGAL:  # the red banner goes first
        _step(loop, table)
    while not table.finished and not loop.feed.state["occluded"]:  # the loop's, not the server's
        _step(loop, table)
    wait.until(lambda d: d.find_element("id", "banner").text == "Hand over the board…")
    while not table.finished:
        _step(loop, table)
    game = loop.referee.game
    assert game.is_over
    expected = "Game over: a draw" if game.winner == "draw" else f"Game over: {game.winner} wins"
    wait.until(lambda d: d.find_element("id", "banner").text == expected)
    assert _scores(driver) == game.scores
    wait.until(lambda d: len(d.find_elements("css selector", "#games a")) == 2)  # listed too


def _step(loop, table) -> None:
    loop.step()
    for event in table.take_events():
        loop.event(event)


def test_the_page_breaks_none_of_its_own_policy(page):
    driver = page[0]
    problems = [
        entry["message"]
        for entry in driver.get_log("browser")
        if entry["level"] == "SEVERE" or "Content Security Policy" in entry["message"]
    ]
    assert problems == []


def _state(**fields) -> dict:
    """A state as the loop publishes it, with no game and nothing to show but ``fields``."""
    state = {
        "seq": 1,
        "game": None,
        "phase": "find board",
        "status": None,
        "scores": {},
        "log": [],
        "diagram": None,
        "over": False,
        "occluded": False,
        "illegal": None,
        "question": None,
        "problem": None,
        "to_move": None,
    }
    return {**state, **fields}


def test_the_page_shows_the_question_the_referee_asks(page, tmp_path):
    """A close call or an illegal act in doubt: the page says what the referee's screen asks,
    and which button takes which answer."""
    driver, wait, _, _, _ = page
    with WebServer("127.0.0.1", 0, records_dir=tmp_path) as server:
        asked = {"question": "What was done?", "ok": "no move", "menu": "illegal at b4"}
        state = _state(game="gobblet", phase="confirm", question=asked, to_move="white")
        server.publish(state)
        driver.get(server.url)
        wait.until(lambda d: "question" in d.find_element("id", "banner").get_attribute("class"))
        text = driver.find_element("id", "banner").text
        assert "What was done?" in text and "OK: no move" in text
        assert "MENU: illegal at b4" in text
        server.publish({**state, "seq": 2, "phase": "play", "question": None})
        wait.until(lambda d: not d.find_element("id", "banner").is_displayed())


def test_the_page_reconnects_by_itself_when_the_server_comes_back(page, tmp_path):
    """A phone that slept, or a referee restarted: the stream drops, the page comes back."""
    driver, wait, _, _, _ = page
    first = WebServer("127.0.0.1", 0, records_dir=tmp_path).start()
    port = first.port
    first.publish(_state(status="first"))
    driver.get(first.url)
    wait.until(lambda d: d.find_element("id", "banner").text == "first")
    first.stop()
    wait.until(lambda d: d.find_element("id", "connection").text == "reconnecting…")
    with WebServer("127.0.0.1", port, records_dir=tmp_path) as second:
        second.publish(_state(status="second"))
        wait.until(lambda d: d.find_element("id", "banner").text == "second")
        assert driver.find_element("id", "connection").text == "live"
