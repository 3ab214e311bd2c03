"""Debian's Chromium, headless, driven by Selenium through the system chromedriver (never a
Selenium Manager download), for the browser tests of the HTML report.

Without Chromium those tests are skipped with a loud reason; install it with
`apt-get install chromium chromium-driver` (what `.ci/run` does), or point LITMUS_CHROMIUM and
LITMUS_CHROMEDRIVER at a Chromium and its matching driver.
"""

from __future__ import annotations

import os
import shutil
import tempfile

os.environ.setdefault("SE_OFFLINE", "1")  # Selenium Manager must never fetch a browser or driver

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1280,900")


def _find(variable: str, *names: str) -> str | None:
    if os.environ.get(variable):
        return os.environ[variable]
    return next((path for name in names if (path := shutil.which(name))), None)


def missing_reason() -> str | None:
    if _find("LITMUS_CHROMIUM", "chromium", "chromium-browser") is None:
        return ("BROWSER TESTS SKIPPED: no Chromium found (apt-get install chromium chromium-driver, "
                "or set LITMUS_CHROMIUM)")
    if _find("LITMUS_CHROMEDRIVER", "chromedriver") is None:
        return ("BROWSER TESTS SKIPPED: no chromedriver found (apt-get install chromium-driver, "
                "or set LITMUS_CHROMEDRIVER)")
    return None


def start_chromium(*extra: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _find("LITMUS_CHROMIUM", "chromium", "chromium-browser")
    for flag in (*CHROMIUM_FLAGS, *extra, f"--user-data-dir={tempfile.mkdtemp(prefix='litmus-chromium-')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(_find("LITMUS_CHROMEDRIVER", "chromedriver")), options=options)
