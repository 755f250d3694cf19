"""Headless Chromium (Debian's ``chromium`` and ``chromium-driver``) driven by Selenium, for the
live page's tests and pictures. Absent, the tests skip, unless ``REFEREE_REQUIRE_BROWSER=1``
(CI installs it), where they fail."""

import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def available() -> bool:
    """True when both the browser and its driver are installed."""
    return os.path.exists(CHROMIUM) and os.path.exists(DRIVER)


def require() -> None:
    """Skip the calling test (or fail it when the browser is required)."""
    if available():
        return
    reason = (
        "chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
    )
    if os.environ.get("REFEREE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"REFEREE_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


def chrome(width: int = 1100, height: int = 800):
    """A headless Chromium session (``quit()`` it)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)
