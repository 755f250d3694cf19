"""The menu's "phone page": the live page's address as a QR code a phone camera reads."""

import cv2
import numpy as np
import pytest

from firmware import screens
from firmware.actions import Action, MenuItem
from tests.firmware.web_game import make_loop


def _decode(screen: screens.Screen) -> str:
    grey = np.array(screen.image.convert("L"))
    big = cv2.resize(grey, None, fx=6, fy=6, interpolation=cv2.INTER_NEAREST)
    padded = cv2.copyMakeBorder(big, 40, 40, 40, 40, cv2.BORDER_CONSTANT, value=255)
    text, _, _ = cv2.QRCodeDetector().detectAndDecode(padded)
    return text


@pytest.mark.parametrize(
    "url", ["http://192.168.1.20:8080/", "http://10.0.0.5:80/", "http://172.16.254.254:65535/"]
)
def test_the_qr_code_reads_back_as_the_address(url):
    screen = screens.phone_page(url)
    assert _decode(screen) == url
    host = url.split("//")[1].split(":")[0]
    assert host in screen.text


def test_without_a_page_the_screen_says_how_to_start_one():
    assert "--web" in screens.phone_page(None).text.replace("\n", " ")


def test_the_menu_shows_the_code_until_a_button_is_pressed(tmp_path):
    loop, _ = make_loop(None, tmp_path)
    loop.web_url = "http://192.168.1.20:8080/"
    for _ in range(list(MenuItem).index(MenuItem.PHONE) + 1):
        loop.press(Action.MENU)
    loop.press(Action.CHOOSE)
    assert _decode(loop.display.screen) == loop.web_url
    loop.step()  # frames go on: the code stays
    assert _decode(loop.display.screen) == loop.web_url
    loop.press(Action.CONFIRM)
    assert _decode(loop.display.screen) == ""
    loop.close()
