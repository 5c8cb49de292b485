"""The inspector over plain HTTP: who gets in, what a page may do, bad input.

Every test talks to a real ``convmem ui`` process, once per storage backend.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

from conftest import FIXTURES, Cli, ev, write_events
from convmem.ui.server import allowed_hosts, display_host, is_loopback
from inspector.conftest import Ui


@pytest.fixture
def loaded(cli: Cli) -> Cli:
    """The English fixture session ``en1`` ingested (items, a correction)."""
    assert cli("ingest", str(FIXTURES / "en_basic.jsonl")).code == 0
    return cli


def _item_id(cli: Cli, content: str) -> str:
    items = cli("items", "--session", "en1", "--status", "active", "--json").json()
    return next(i["id"] for i in items if i["content"] == content)


def test_a_request_without_the_token_is_refused(loaded: Cli, ui: Ui) -> None:
    status, _, body = ui.get("/", cookie=False)
    assert status == 403 and "Token needed" in body
    status, _, _ = ui.get("/?token=not-the-token", cookie=False)
    assert status == 403
    status, _, _ = ui.get("/session?s=en1", headers={"Cookie": f"convmem_ui_{ui.port}=wrong"})
    assert status == 403
    # the printed address lets the browser in and hands it the cookie
    status, headers, body = ui.get("/?token=" + ui.token, cookie=False)
    assert status == 200 and "en1" in body
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"convmem_ui_{ui.port}={ui.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert ui.get("/session?s=en1")[0] == 200


def test_every_page_carries_a_strict_policy(loaded: Cli, ui: Ui) -> None:
    for path in ("/", "/session?s=en1", "/nope", "/static/app.css"):
        _, headers, _ = ui.get(path)
        csp = headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert "frame-ancestors 'none'" in csp and "form-action 'self'" in csp
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "same-origin"


def test_another_host_name_is_refused(loaded: Cli, ui: Ui) -> None:
    """A page whose domain was re-pointed at 127.0.0.1 reaches the port, not the data."""
    status, _, body = ui.get("/", headers={"Host": f"attacker.example:{ui.port}"})
    assert status == 400 and "en1" not in body
    assert ui.get("/", headers={"Host": f"localhost:{ui.port}"})[0] == 200


def _steer(ui: Ui, item_id: str, **extra: str) -> tuple[int, str]:
    form = {"id": item_id, "action": "retract", "reason": "test", **extra}
    headers = {"Origin": ui.base, "Sec-Fetch-Site": "same-origin"}
    status, _, body = ui.request("POST", "/item/act", urlencode(form), headers=headers)
    return status, body


def test_changes_need_the_form_value_and_the_same_origin(loaded: Cli, ui: Ui) -> None:
    item_id = _item_id(loaded, "We decided to use SQLite for the local index.")
    status, page = ui.get(f"/item/act?id={item_id}&action=retract")[::2]
    assert status == 200
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    assert csrf and csrf != ui.token  # derived from the token, not the token itself
    assert _steer(ui, item_id)[0] == 403  # no form value
    assert _steer(ui, item_id, csrf="0" * len(csrf))[0] == 403
    for headers in (
        {"Origin": "http://attacker.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
    ):
        form = urlencode({"id": item_id, "action": "retract", "csrf": csrf})
        assert ui.request("POST", "/item/act", form, headers=headers)[0] == 403
    form = urlencode({"id": item_id, "action": "retract", "csrf": csrf})
    assert ui.request("POST", "/item/act", form, cookie=False)[0] == 403  # no token
    assert loaded("inspect", item_id, "--json").json()["item"]["status"] == "active"
    status, _ = _steer(ui, item_id, csrf=csrf)
    assert status == 303
    data = loaded("inspect", item_id, "--json").json()
    assert data["item"]["status"] == "retracted"
    last = data["lifecycle"][-1]
    assert (last["event"], last["actor"], last["detail"]["reason"]) == ("retracted", "ui", "test")


@pytest.mark.parametrize(
    ("path", "status", "sentence"),
    [
        ("/timeline?s=en1&before=abc", 400, "“before” must be a whole number"),
        ("/timeline?s=en1&show=everything", 400, "“show” must be one of"),
        ("/timeline", 400, "needs “s=”"),
        ("/session?s=no-such-session", 404, "There is no session 'no-such-session'"),
        ("/item?id=mem_nope", 404, "There is no memory item 'mem_nope'"),
        ("/item/act?id=mem_nope&action=retract", 404, "There is no memory item"),
        ("/memory?s=en1&kind=wish", 400, "“kind” must be one of"),
        ("/block?id=99999", 404, "There is no block #99999"),
        ("/event?s=en1&seq=99999", 404, "has no event 99999"),
        ("/validation?s=en1&before=1e9", 400, "must be a whole number"),
        ("/no/such/page", 404, "no such page"),
    ],
)
def test_bad_input_is_one_sentence(
    loaded: Cli, ui: Ui, path: str, status: int, sentence: str
) -> None:
    got, _, body = ui.get(path)
    assert got == status
    assert sentence in body.replace("&#39;", "'").replace("&#34;", '"')
    assert "Traceback" not in body


def test_a_wrong_action_on_an_item_says_why(loaded: Cli, ui: Ui) -> None:
    item_id = _item_id(loaded, "We decided to use SQLite for the local index.")
    status, _, body = ui.get(f"/item/act?id={item_id}&action=resolve")
    assert status == 200 and "does not apply to it now" in body
    page = ui.get(f"/item/act?id={item_id}&action=retract")[2]
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    status, body = _steer(ui, item_id, csrf=csrf, action="resolve")
    assert status == 409 and "is active, not disputed" in body


def test_blocks_of_two_sessions_are_not_compared(cli: Cli, ui: Ui, tmp_path: Path) -> None:
    for session in ("one", "two"):
        path = write_events(
            tmp_path / f"{session}.jsonl",
            [ev(1, "user/message", "We must use port 8080.", session)],
        )
        assert cli("ingest", str(path)).code == 0
        assert cli("assemble", "--session", session).code == 0
    logs = [cli("explain", "--session", s, "--json").json()["id"] for s in ("one", "two")]
    status, _, body = ui.get(f"/compare?a={logs[0]}&b={logs[1]}")
    assert status == 400 and "within one session" in body


def test_the_command_names_the_missing_extra(home: Path) -> None:
    """Without the ui extra, `convmem ui` says what to install (in one sentence)."""
    code = "import sys; sys.modules['starlette'] = None; from convmem.cli import main; main(['ui'])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "pip install 'convmem[ui]'" in proc.stderr and "starlette" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_listening_addresses() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.7")
    assert allowed_hosts("0.0.0.0", 80) is None  # every name: only the token guards it
    assert allowed_hosts("127.0.0.1", 8000) == {
        "127.0.0.1:8000",
        "localhost:8000",
        "[::1]:8000",
    }
    assert allowed_hosts("192.0.2.7", 80) == {"192.0.2.7:80"}
    assert display_host("::1") == "[::1]" and display_host("0.0.0.0") == "127.0.0.1"


def test_skills_and_rules_with_their_source_lines(cli: Cli, ui: Ui) -> None:
    assert cli("skills", "ingest", str(FIXTURES / "skills" / "release")).code == 0
    rules = cli("rules", "show", "--json").json()
    rule = next(r for r in rules if r["text"] == "Never push directly to the main branch.")
    status, _, body = ui.get("/skills")
    assert status == 200 and "Cut a release of the orders-api service" in body
    assert rule["text"] in body
    assert f"SKILL.md:{rule['source_line']}" in body


def test_validation_runs_are_listed(cli: Cli, ui: Ui, tmp_path: Path) -> None:
    config = str(FIXTURES / "validation" / "validation.toml")
    events = [
        ev(1, "user/message", "Please ship it."),
        ev(2, "assistant/message", "Done: I ran git push --force on main."),
    ]
    path = write_events(tmp_path / "v.jsonl", events)
    assert cli("--config", config, "ingest", str(path)).code == 0
    status, _, body = ui.get("/validation?s=s1")
    assert status == 200 and "no-force-push" in body and "seq:2" in body


def test_open_hands_the_address_to_the_browser(home: Path, tmp_path: Path) -> None:
    seen = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {seen}\n')
    browser.chmod(0o755)
    proc = subprocess.Popen(
        [sys.executable, "-m", "convmem", "ui", "--open", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CONVMEM_HOME": str(home), "BROWSER": str(browser)},
    )
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().split()[-1]
        deadline = time.monotonic() + 20
        while not seen.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen.read_text() == address and "token=" in address
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_a_busy_port_is_one_sentence(cli: Cli) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("ui", "--port", str(port))
    assert result.code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.err


def test_doctor_findings_name_a_broken_hook_and_its_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from convmem.config import load_settings
    from convmem.ui.pages_more import doctor_findings

    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    hooks = {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {"type": "command", "command": "/gone/venv/bin/convmem hook claude-code"}
                    ]
                }
            ]
        }
    }
    (project / ".claude" / "settings.local.json").write_text(json.dumps(hooks), "utf-8")
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("DSH_HOME", raising=False)
    findings = doctor_findings(load_settings(home=tmp_path / "home", env={}), live=False)
    broken = [f for f in findings if "/gone/venv/bin/convmem" in f["message"]]
    assert broken and broken[0]["level"] == "error" and broken[0]["fix"]
