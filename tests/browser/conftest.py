"""A headless Chromium driven by selenium (Debian's `chromium` and `chromium-driver`).

When Chromium cannot start the browser tests fail in CI (the `CI` variable is set) and are
skipped, with the reason, on a developer machine without it.
"""
import os
import shutil

import pytest


def _fail_or_skip(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"browser tests need Chromium in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def downloads(tmp_path_factory):
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="session")
def browser(downloads):
    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _fail_or_skip("the selenium package is not installed (pip install selenium)")
    binary = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
    if not binary or not driver_path:
        _fail_or_skip("chromium or chromedriver not found (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900"):
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(driver_path), options=options)
    except WebDriverException as exc:
        _fail_or_skip(f"Chromium did not start: {exc.msg or exc}")
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    yield driver
    driver.quit()
