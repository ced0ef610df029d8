"""Headless Chromium for the tests of static pages (the leaderboard site, the explore page).

Needs Debian's ``chromium`` and ``chromium-driver`` and selenium from PyPI; the fixture skips, saying which
is missing, where they are not installed.
"""

from __future__ import annotations

import shutil

import pytest

LAPTOP = (1366, 768)  # the commonest laptop screen
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed: pip install selenium")
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver_path = shutil.which("chromedriver")
    if not binary or not driver_path:
        pytest.skip("headless Chromium not found (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
