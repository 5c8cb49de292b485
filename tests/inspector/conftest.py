"""Fixtures for the inspector's tests: a real ``convmem ui`` process and real Chromium.

``ui`` starts ``python -m convmem ui --port 0`` on the test's data dir (and, on the
PostgreSQL backend, its schema, through ``CONVMEM_STORE``), reads the address it
prints, and stops it after the test. ``browser`` is headless Chromium from the
operating system's packages, driven by Playwright (never a browser download).
Without Chromium or Playwright the browser tests are skipped, except in CI
(``CONVMEM_CI=1``), where a missing browser fails the run.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

#: Where Chromium is looked for, in order (``CONVMEM_CHROMIUM`` first).
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def _require(reason: str) -> None:
    if os.environ.get("CONVMEM_CI") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def find_chromium() -> str | None:
    named = os.environ.get("CONVMEM_CHROMIUM")
    if named:
        return named if Path(named).exists() else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Ui:
    """A running ``convmem ui``: its address, token and a small HTTP client."""

    def __init__(self, proc: subprocess.Popen[str], address: str) -> None:
        self.proc = proc
        self.address = address
        parts = urlsplit(address)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.host, self.port = parts.hostname or "", int(parts.port or 0)
        self.token = dict(p.split("=", 1) for p in parts.query.split("&"))["token"]

    def url(self, path: str = "/") -> str:
        return self.base + path

    def request(
        self,
        method: str,
        path: str,
        body: str | None = None,
        headers: dict[str, str] | None = None,
        cookie: bool = True,
    ) -> tuple[int, dict[str, str], str]:
        """One request; with ``cookie``, carrying the token's cookie as a browser would."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        sent = dict(headers or {})
        if cookie:
            sent.setdefault("Cookie", f"convmem_ui_{self.port}={self.token}")
        if body is not None:
            sent.setdefault("Content-Type", "application/x-www-form-urlencoded")
        conn.request(method, path, body=body, headers=sent)
        resp = conn.getresponse()
        text = resp.read().decode("utf-8", "replace")
        got = {k.lower(): v for k, v in resp.getheaders()}
        conn.close()
        return resp.status, got, text

    def get(self, path: str, **kwargs: Any) -> tuple[int, dict[str, str], str]:
        return self.request("GET", path, **kwargs)


@pytest.fixture
def ui(home: Path) -> Iterator[Ui]:
    """``convmem ui`` serving the test's data dir (start it after loading the data)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "convmem", "ui", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CONVMEM_HOME": str(home)},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"(http://127\.0\.0\.1:\d+/\?token=[\w-]+)", line)
    if not found:
        proc.kill()
        err = proc.stderr.read() if proc.stderr else ""
        raise AssertionError(f"convmem ui did not print its address: {line!r} {err}")
    try:
        yield Ui(proc, found.group(1))
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        assert "Traceback" not in err, err


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium from the OS packages, through Playwright.

    Module-scoped: Playwright's sync API keeps an asyncio loop running in the main
    thread while it is open, which later tests that run their own loop (MCP) cannot
    share, so it closes when the module's tests are done."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _require("Playwright is not installed: pip install -e '.[dev]'")
    executable = find_chromium()
    if executable is None:
        _require("Chromium is not installed: apt-get install -y chromium")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any, ui: Ui) -> Iterator[Any]:
    """A fresh browser context that has opened the printed address (so holds the
    cookie), with its page; fails the test on any script error or CSP report."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(15_000)
    tab = context.new_page()
    problems: list[str] = []
    tab.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    tab.on(
        "console",
        lambda msg: (
            problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None
        ),
    )

    def on_dialog(dialog: Any) -> None:
        problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    tab.on("dialog", on_dialog)
    tab.goto(ui.address)
    try:
        yield tab
    finally:
        context.close()
    assert not problems, problems
