"""One headless Chromium per test session for the HTML report (see `support.chromium`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.chromium import missing_reason, start_chromium


@pytest.fixture(scope="session")
def browser():
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    driver = start_chromium()
    yield driver
    driver.quit()


class Page:
    """The report opened in the session's browser, at a viewport width, with screenshots kept."""

    def __init__(self, driver, directory: Path) -> None:
        self.driver = driver
        self.directory = directory

    def open(self, html: str, width: int = 1280, name: str = "report.html", fragment: str = "") -> None:
        """Load `html` from a file, at `#fragment` when one is given."""
        path = self.directory / name
        path.write_text(html, encoding="utf-8")
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
        self.driver.get_log("browser")  # drop what an earlier page logged
        self.driver.get(path.as_uri() + (f"#{fragment}" if fragment else ""))

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    def screenshot(self, name: str) -> Path:
        path = self.directory / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    def console_errors(self) -> list[dict]:
        return [entry for entry in self.driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]


@pytest.fixture
def page(browser, tmp_path):
    """A page in the session's browser; screenshots go to this test's tmp_path."""
    return Page(browser, tmp_path)
