"""Screenshots of the live page for docs/web/: each game refereed by the real loop (a scripted game
filmed by the simulated table) with the page open in headless Chromium.

Run from the repository root: ``.venv/bin/python docs/web/make_pictures.py`` (needs the dev extra
and Debian's ``chromium`` and ``chromium-driver``)."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from firmware.journal import save_record
from firmware.loop import Phase
from firmware.web.server import WebServer
from tests.firmware import browser
from tests.firmware.games import random_game
from tests.firmware.web_game import make_loop, step_until_moves

OUT = Path(__file__).resolve().parent
#: game -> moves accepted before the picture.
GAMES = {"gobsmacked": 6, "spectrangle": 6, "gobblet": 6, "blokus": 8, "blokus-duo": 8}


def shot(driver, path: Path) -> None:
    """A screenshot of the page, as a small palette PNG."""
    time.sleep(1.5)  # the camera view and the last state arrive
    driver.save_screenshot(str(path))
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(128)
    small.save(path, optimize=True)
    print(f"{path.relative_to(OUT.parents[1])}: {path.stat().st_size // 1024} kB")


def main() -> None:
    driver = browser.chrome(1000, 640)
    try:
        for game, moves in GAMES.items():
            with (
                tempfile.TemporaryDirectory() as tmp,
                WebServer("127.0.0.1", 0, records_dir=Path(tmp) / "records") as server,
            ):
                loop, table = make_loop(server.feed, Path(tmp), game)
                if game == "gobblet":  # the illegal placement of the scripted game first
                    while not table.finished and loop.phase != Phase.ILLEGAL:
                        loop.step()
                        for event in table.take_events():
                            loop.event(event)
                    driver.get(server.url)
                    shot(driver, OUT / "illegal.png")
                step_until_moves(loop, table, moves)
                driver.get(server.url)
                shot(driver, OUT / f"{game}.png")
                loop.close()
        with (
            tempfile.TemporaryDirectory() as tmp,
            WebServer("127.0.0.1", 0, records_dir=Path(tmp)) as server,
        ):
            save_record(random_game("blokus-duo", 2), Path(tmp), "20261124-201500-blokus-duo")
            driver.get(server.url)
            time.sleep(1.0)
            driver.find_element("css selector", "#games a").click()
            time.sleep(1.0)
            driver.execute_script("document.getElementById('archive').scrollIntoView();")
            shot(driver, OUT / "replay.png")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
