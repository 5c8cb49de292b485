"""Private data stays private: file modes, ``<private>`` spans, secrets.

The data dir is created 0700 and the database (and its -wal and -shm files) 0600,
whatever the umask. Text inside ``<private>…</private>`` is never stored: the raw
bytes of every file in the data dir are searched for it after it went through each
capture path (canonical ingest, Claude Code transcripts and hooks, DSH logs and the
live DSH server), including the archive and the FTS shadow tables. Well-known secret
formats are replaced by a labelled marker before storage; the settings turn both off.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, write_events
from convmem.capture import Event
from convmem.config import load_settings
from convmem.memory.store import MemoryStore
from convmem.runtime import MemoryRuntime
from helpers.crash import child_env, dsh_log_path

CANARY = "PRIVATE-CANARY-7f3a9"

#: Hook calls in these tests run in-process: no resident hook process is left behind.
NO_DAEMON = {"CONVMEM_HOOK_DAEMON": "0"}


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _raw_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _leaks(folder: Path, needle: str) -> list[str]:
    forms = {needle.encode(), needle.encode("utf-16-le"), needle.lower().encode()}
    return [name for name, data in _raw_bytes(folder).items() if any(f in data for f in forms)]


# --- file modes ---------------------------------------------------------------------------


@pytest.mark.parametrize("mask", [0o000, 0o022, 0o077])
def test_data_dir_0700_and_database_files_0600_under_any_umask(tmp_path: Path, mask: int) -> None:
    home = tmp_path / "deep" / "home"
    events = write_events(
        tmp_path / "e.jsonl", [{"session_id": "s", "seq": 1, "type": "user/message", "text": "hi"}]
    )
    proc = subprocess.run(
        [sys.executable, "-m", "convmem", "ingest", str(events)],
        env=child_env(home),
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.umask(mask),
    )
    assert proc.returncode == 0, proc.stderr
    assert _mode(home) == 0o700
    assert _mode(home / "memory.sqlite") == 0o600
    with umask(mask), MemoryRuntime.open(load_settings(home=home, env={})) as rt:
        rt.on_events([Event("s", 2, "user/message", "The budget is 3000 tokens.")])
        side = [home / "memory.sqlite-wal", home / "memory.sqlite-shm"]
        assert all(p.exists() for p in side)
        assert {p.name: _mode(p) for p in side} == {p.name: 0o600 for p in side}
    for path in home.iterdir():  # whatever else the data dir holds is not world-readable
        assert _mode(path) & 0o077 == 0, (path, oct(_mode(path)))


# --- <private> ------------------------------------------------------------------------------

PRIVATE_TEXTS = [
    f"my address is <private>{CANARY} 12 Elm St</private>, remember the port 8080",
    f"<PRIVATE>{CANARY}</Private> and <private>second {CANARY}</private>",
    f"unclosed <private>{CANARY} to the end of the message",
    f"multi\nline <private>\n{CANARY}\n</private> tail",
    "x" * 19_990 + f" <private>{CANARY} straddles the cap</private>",  # truncated + archived
    "y" * 30_000 + f" <private>{CANARY} only in the archive</private>",
    # evasions (issue 13, item 5): nesting, variants of the tag, full-width brackets,
    # and a span split across two events
    f"a <private>outer <private>inner</private> {CANARY} tail</private> b",
    f"<private >{CANARY}</private > spaced",
    f'< private class="x">{CANARY}</ PRIVATE> attributes',
    f"self-closing <private/>{CANARY}",
    f"全角 ＜private＞{CANARY}＜／private＞ 公开部分",
    f"＜ｐｒｉｖａｔｅ＞{CANARY}＜／ｐｒｉｖａｔｅ＞ full-width letters",
    f"first half <private>{CANARY} continues in the next message",
    f"{CANARY} is still private</private> and this part is public",
]


def _canonical(sid: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for text in PRIVATE_TEXTS:
        for etype in ("user/message", "tool/result", "compaction/summary", "assistant/message"):
            out.append({"session_id": sid, "seq": len(out) + 1, "type": etype, "text": text})
    out.append(
        {
            "session_id": sid,
            "seq": len(out) + 1,
            "type": "tool/call",
            "content": [{"type": "tool_use", "name": "Bash", "input": {"cmd": PRIVATE_TEXTS[0]}}],
        }
    )
    return out


def _claude(sid: str) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for text in PRIVATE_TEXTS:
        lines.append({"type": "user", "sessionId": sid, "message": {"content": text}})
        lines.append(
            {
                "type": "assistant",
                "message": {
                    "content": [
                        {"type": "text", "text": text},
                        {"type": "tool_use", "id": "t", "name": "Bash", "input": {"c": text}},
                    ]
                },
            }
        )
        lines.append(
            {
                "type": "user",
                "message": {
                    "content": [{"type": "tool_result", "tool_use_id": "t", "content": text}]
                },
            }
        )
    lines.append(
        {"type": "user", "isCompactSummary": True, "message": {"content": PRIVATE_TEXTS[0]}}
    )
    return lines


def _dsh(sid: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = [{"type": "session", "version": 4, "id": sid, "cwd": "/w"}]
    for text in PRIVATE_TEXTS:
        content = [{"type": "text", "text": text}]
        for etype in ("user/message", "assistant/message"):
            data = {"content": content, "source": {"kind": "user"}}
            records.append({"type": etype, "seq": len(records), "data": data})
        records.append(
            {"type": "tool/result", "seq": len(records), "data": {"message": {"content": content}}}
        )
    summary = {"summary": PRIVATE_TEXTS[0]}
    records.append({"type": "compaction/summary", "seq": len(records), "data": summary})
    return records


def test_private_spans_never_reach_any_file_through_any_capture_path(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    events = write_events(tmp_path / "events.jsonl", _canonical("canonical"))
    transcript = write_events(tmp_path / "claude-session.jsonl", _claude("claude"))
    dsh_home = tmp_path / "dsh"
    log = dsh_log_path(dsh_home, "session-dsh")
    log.parent.mkdir(parents=True)
    plain = write_events(tmp_path / "session.v4.jsonl", _dsh("session-dsh"))
    import zstandard

    log.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    assert cli("ingest", str(events)).code == 0
    assert cli("ingest", "--format", "claude-code", str(transcript)).code == 0
    assert cli("ingest", "--format", "dsh", str(plain), "--session", "dsh-file").code == 0
    payload = {"hook_event_name": "PostToolUse", "session_id": "hooked", "transcript_path": ""}
    payload["transcript_path"] = str(transcript)
    assert cli("hook", "claude-code", input=json.dumps(payload), env=NO_DAEMON).code == 0
    requests = [
        {"id": 1, "op": "session_start", "session_id": "session-dsh"},
        {
            "id": 2,
            "op": "events",
            "events": [{"session_id": "live", "event": r} for r in _dsh("live")[1:]],
        },
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "convmem", "serve", "dsh"],
        input="".join(json.dumps(r) + "\n" for r in requests),
        env=child_env(home, DSH_HOME=str(dsh_home)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and all(json.loads(x)["ok"] for x in proc.stdout.splitlines())

    with MemoryRuntime.open(load_settings(home=home, env={})) as rt:
        store = rt.store
        sessions = {s["session_id"]: s["events"] for s in store.sessions()}
        expected = {"canonical", "claude-session", "dsh-file", "session-dsh", "live", "hooked"}
        assert set(sessions) >= expected
        assert all(count > 5 for count in sessions.values()), sessions
        assert store.db.scalar("SELECT count(*) FROM archive") > 0
        markers = store.db.scalar(
            "SELECT count(*) FROM events WHERE text LIKE '%[private: not stored]%'"
        )
        assert markers >= 20
        for table in ("events_fts", "memory_fts"):
            found = store.db.scalar(
                f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (f'"{CANARY}"',)
            )
            assert found == 0, table
        assert _leaks(home, CANARY) == []  # db, -wal, -shm and logs, while open
    assert _leaks(home, CANARY) == []


def test_private_spans_in_a_query_are_not_stored(cli: Cli, home: Path, tmp_path: Path) -> None:
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "s",
        "prompt": f"what is my <private>{CANARY}</private> budget?",
        "transcript_path": str(tmp_path / "missing.jsonl"),
    }
    assert cli("hook", "claude-code", input=json.dumps(payload), env=NO_DAEMON).code == 0
    assert (home / "memory.sqlite").exists()
    assert _leaks(home, CANARY) == []


def test_a_control_character_cannot_hide_a_private_tag() -> None:
    with MemoryRuntime(MemoryStore.open(":memory:"), load_settings(env={})) as rt:
        rt.on_events([Event("s", 1, "user/message", f"a <priv\x00ate>{CANARY}</private> b")])
        assert rt.store.events("s")[0].text == "a [private: not stored] b"


def test_private_spans_kept_when_turned_off(tmp_path: Path) -> None:
    settings = load_settings(env={}).with_values(capture__drop_private=False)
    with MemoryRuntime(MemoryStore.open(":memory:"), settings) as rt:
        rt.on_events([Event("s", 1, "user/message", PRIVATE_TEXTS[0])])
        assert CANARY in rt.store.events("s")[0].text


# --- secrets ----------------------------------------------------------------------------------

_PEM_BODY = "MIIEowIBAAKCAQEA7V1c0mZ3J2Q4s5fW9xYh\nq2bT8zLk3Jv0n6HqZ1rXy4=\n"
SECRETS: list[tuple[str, str, str]] = [
    ("aws-access-key", "key AKIAIOSFODNN7EXAMPLE in use", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-access-key", "temp ASIAY34FZKBOKMUTVV7A", "ASIAY34FZKBOKMUTVV7A"),
    *[
        (
            "aws-secret-key",
            form.replace("KEY40", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            "wJalrX",
        )
        for form in (
            "aws_secret_access_key = KEY40",
            "AWS_SECRET_ACCESS_KEY=KEY40",
            "aws_secret_access_key: KEY40",
            '{"aws_secret_access_key": "KEY40"}',
            "export AWS_SECRET_ACCESS_KEY='KEY40'",
        )
    ],
    ("api-key", "ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345", "AbCdEfGhIjKl"),
    ("api-key", "openai sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGhIjKl"),
    ("api-key", "legacy sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghij", "AbCdEfGhIjKl"),
    ("github-token", "GITHUB_TOKEN=ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "ghp_AbCdEf"),
    (
        "github-token",
        "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "11ABCDEFG",
    ),
    ("slack-token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", "AbCdEfGhIjKlMnOp"),
    ("google-api-key", "AIzaSyA-1234567890abcdefghijklmnopqrstu", "1234567890abcdefghij"),
    (
        "jwt",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N",
    ),
    ("bearer-token", "Authorization: Bearer 0123456789abcdefABCDEF.ghij", "0123456789abcdefABCDEF"),
    (
        "bearer-token",
        "curl -H 'authorization: bearer AbCdEfGhIjKlMnOpQrSt'",
        "AbCdEfGhIjKlMnOpQrSt",
    ),
    *[
        (
            "private-key",
            f"-----BEGIN {k}-----\n{_PEM_BODY}-----END {k}-----",
            "7V1c0mZ3J2Q4s5fW9xYh",
        )
        for k in (
            "RSA PRIVATE KEY",
            "EC PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "DSA PRIVATE KEY",
            "PGP PRIVATE KEY BLOCK",
        )
    ],
    ("aws-access-key", "hidden by a control character: AKIA\x00IOSFODNN7EXAMPLE", "IOSFODNN7"),
]


@pytest.mark.parametrize(("label", "text", "secret"), SECRETS, ids=[s[0] for s in SECRETS])
def test_secret_formats_become_a_labelled_marker_before_storage(
    tmp_path: Path, label: str, text: str, secret: str
) -> None:
    home = tmp_path / "home"
    long = "z" * 25_000 + " " + text  # only in the archive's copy
    with MemoryRuntime.open(load_settings(home=home, env={})) as rt:
        rt.on_events(
            [
                Event("s", 1, "user/message", f"here it is: {text} -- done"),
                Event("s", 2, "tool/result", long),
                Event("s", 3, "tool/call", f"Bash(echo {text})"),
            ]
        )
        stored = rt.store.events("s")
        assert f"[redacted:{label}]" in stored[0].text
        assert all(secret not in e.text for e in stored)
        assert secret not in (rt.store.archive_text("s", 2) or "")
        assert _leaks(home, secret) == []
    assert _leaks(home, secret) == []


def test_secrets_kept_verbatim_when_redaction_is_turned_off(tmp_path: Path) -> None:
    settings = load_settings(env={}).with_values(capture__redact_secrets=False)
    with MemoryRuntime(MemoryStore.open(":memory:"), settings) as rt:
        rt.on_events([Event("s", n, "user/message", t) for n, (_, t, _) in enumerate(SECRETS[:-1])])
        texts = [e.text for e in rt.store.events("s")]
        for (_, _, secret), text in zip(SECRETS[:-1], texts, strict=True):
            assert secret in text


def test_redaction_is_on_by_default() -> None:
    settings = load_settings(env={})
    assert settings["capture.redact_secrets"] is True
    assert settings["capture.drop_private"] is True


def test_error_logs_are_as_private_as_the_database(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)  # a folder the user made: only the files' own modes protect them
    proc = subprocess.run(
        [sys.executable, "-m", "convmem", "hook", "claude-code"],
        input=f"[{CANARY}",  # not JSON: the hook logs the error and stays silent
        env=child_env(home),
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.umask(0o022),
    )
    assert proc.returncode == 0 and proc.stdout == ""
    log = home / "convmem.log"
    assert log.exists()
    assert _mode(log) == 0o600


def test_a_rejected_events_private_text_stays_out_of_the_error_log(tmp_path: Path) -> None:
    home = tmp_path / "home"
    content = f"my <private>{CANARY}</private> key AKIAIOSFODNN7EXAMPLE"
    bad = {"type": "user/message", "seq": "not a number", "data": {"content": content}}
    request = {"id": 1, "op": "events", "events": [{"session_id": "s", "event": bad}]}
    proc = subprocess.run(
        [sys.executable, "-m", "convmem", "serve", "dsh"],
        input=json.dumps(request) + "\n",
        env=child_env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(proc.stdout)["skipped"] == 1
    assert _leaks(home, CANARY) == [] and _leaks(home, "AKIAIOSFODNN7EXAMPLE") == []


def test_a_control_character_cannot_hide_a_secret_in_a_query(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with MemoryRuntime.open(load_settings(home=home, env={})) as rt:
        rt.on_events([Event("s", 1, "user/message", "The budget is 3000 tokens.")])
        rt.pre_step(
            "s", None, query=f"key AKIA\x00IOSFODNN7EXAMPLE <priv\x01ate>{CANARY}</private>"
        )
    assert _leaks(home, "AKIAIOSFODNN7EXAMPLE") == [] and _leaks(home, CANARY) == []
