"""The Claude Code hook against hostile transcripts, stores and folders (issue 13).

Every test drives the real hook command (``convmem hook claude-code`` in a
subprocess, handled in-process so that no resident process outlives the test):

* item 8: a malformed transcript line (nested thousands deep, a 1,500-character
  timestamp, a lone surrogate in a tool id) is skipped, as ``ingest`` skips it,
  and capture goes on past it;
* item 9: a PostgreSQL store that accepts connections and never answers makes
  the hook give up within its connect timeout and stay silent (fail open);
* item 10: a data folder another user could write to is refused, and a symbolic
  link planted in place of ``convmem.log`` is never followed;
* item 14: a compaction summary quoting the person's sentence does not hide the
  person's item from the block after the compaction;
* item 16: the prompt key kept in the parser state is not taken over a private span.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from convmem.config import load_settings
from convmem.runtime import MemoryRuntime

CANARY = "PRIVATE-CANARY-h00k"


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "CONVMEM_HOME": str(home), "CONVMEM_HOOK_DAEMON": "0"}
    env.pop("CONVMEM_STORE", None)
    return {**env, **extra}


def _hook(env: dict[str, str], payload: dict[str, Any], timeout: float = 120) -> Any:
    proc = subprocess.run(
        [sys.executable, "-m", "convmem", "hook", "claude-code"],
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else None


def _append(path: Path, *lines: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in lines)


def _prompt(text: str, **extra: Any) -> str:
    return json.dumps({"type": "user", "sessionId": "s", "message": {"content": text}, **extra})


def _events(env: dict[str, str], session: str = "s") -> list[tuple[int, str, str]]:
    proc = subprocess.run(
        [sys.executable, "-m", "convmem", "export", "--session", session],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["tables"]["events"]
    return [(r["seq"], r["type"], r["text"]) for r in rows]


def test_a_bad_transcript_line_is_skipped_and_capture_goes_on(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    deep = '{"type": "user", "message": {"content": ' + "[" * 5000 + "]" * 5000 + "}}"
    tool_id = json.dumps(
        {
            "type": "assistant",
            "message": {"content": [{"type": "tool_use", "id": "\ud800", "name": "Bash"}]},
        }
    )
    _append(
        transcript,
        _prompt("The cache TTL must be 300 seconds."),
        deep,
        _prompt("This line has a bad timestamp.", timestamp="9" * 1500),
        tool_id,
        _prompt("Never deploy on Fridays."),
    )
    home = tmp_path / "home"
    env = _env(home)
    payload = {
        "hook_event_name": "PostToolUse",
        "session_id": "s",
        "transcript_path": str(transcript),
    }
    _hook(env, payload)
    _append(transcript, _prompt("The retry limit is 5 attempts."))
    _hook(env, {**payload, "hook_event_name": "Stop"})
    got = _events(env)
    texts = [text for _, _, text in got]
    assert texts == [
        "The cache TTL must be 300 seconds.",
        "Never deploy on Fridays.",
        "The retry limit is 5 attempts.",
    ]
    # ingest reads the same file to the same events, with the same seqs
    other = _env(tmp_path / "other")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "convmem",
            "ingest",
            "--format",
            "claude-code",
            "--session",
            "s",
            str(transcript),
        ],
        env=other,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr  # bad lines reported
    assert _events(other) == got


def _silent_listener() -> tuple[socket.socket, threading.Event]:
    """A TCP listener on 127.0.0.1 that accepts connections and never says a word."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    stop = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                held.append(conn)
            except OSError:
                continue
        for conn in held:
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    return server, stop


def test_a_postgresql_that_never_answers_makes_the_hook_fail_open(tmp_path: Path) -> None:
    server, stop = _silent_listener()
    try:
        port = server.getsockname()[1]
        home = tmp_path / "home"
        home.mkdir(mode=0o700)
        (home / "config.toml").write_text("[postgresql]\nconnect_timeout_seconds = 2\n")
        env = _env(home, CONVMEM_STORE=f"postgresql://convmem@127.0.0.1:{port}/memory")
        payload = {
            "hook_event_name": "UserPromptSubmit",
            "session_id": "s",
            "prompt": "what is the cache TTL?",
            "transcript_path": str(tmp_path / "none.jsonl"),
        }
        # without a connect timeout this waits for the server forever (the test's
        # process timeout is a generous bound, not a measurement)
        assert _hook(env, payload, timeout=90) is None
        log = (home / "convmem.log").read_text("utf-8")
        assert "UserPromptSubmit" in log and "PostgreSQL" in log
    finally:
        stop.set()
        server.close()


def test_a_folder_others_can_write_is_refused_and_links_are_not_followed(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    (shared / "convmem.log").symlink_to(victim)
    transcript = tmp_path / "t.jsonl"
    _append(transcript, _prompt(f"my secret plan {CANARY}"))
    env = _env(shared)
    payload = {"hook_event_name": "Stop", "session_id": "s", "transcript_path": str(transcript)}
    _hook(env, payload)  # silent: the hook never gets in the person's way
    assert victim.read_text() == "untouched\n"
    assert not (shared / "memory.sqlite").exists()
    proc = subprocess.run(
        [sys.executable, "-m", "convmem", "ingest", "--format", "claude-code", str(transcript)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert "writable by other users" in line and "chmod 700" in line
    os.chmod(shared, 0o700)  # private now, but the planted link is still refused
    proc = subprocess.run(
        [sys.executable, "-m", "convmem", "ingest", "--format", "claude-code", str(transcript)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "symbolic link" in proc.stderr
    assert victim.read_text() == "untouched\n"


def test_a_summary_quoting_the_users_sentence_does_not_hide_the_item(tmp_path: Path) -> None:
    sentence = "The cache TTL must be 300 seconds."
    transcript = tmp_path / "t.jsonl"
    _append(
        transcript,
        _prompt(sentence),
        json.dumps(
            {"type": "assistant", "message": {"content": [{"type": "text", "text": "OK."}]}}
        ),
        json.dumps({"type": "system", "subtype": "compact_boundary", "compactMetadata": {}}),
        json.dumps(
            {
                "type": "user",
                "isCompactSummary": True,
                "message": {"content": f'Summary: the user said "{sentence}" early on.'},
            }
        ),
    )
    home = tmp_path / "home"
    env = _env(home)
    (home).mkdir(mode=0o700)
    (home / "config.toml").write_text('[assembly]\nlocale = "en"\n')
    _hook(env, {"hook_event_name": "Stop", "session_id": "s", "transcript_path": str(transcript)})
    answer = _hook(
        env,
        {
            "hook_event_name": "UserPromptSubmit",
            "session_id": "s",
            "prompt": "What cache TTL did we agree on?",
            "transcript_path": str(transcript),
        },
    )
    assert answer is not None
    block = answer["hookSpecificOutput"]["additionalContext"]
    memory = block.split("## Memory: remembered points", 1)[-1]
    assert sentence in memory


def test_the_stored_prompt_key_is_taken_after_scrubbing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = _env(home)
    prompt = f"note <private>{CANARY}</private> the budget"
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "s",
        "prompt": prompt,
        "transcript_path": str(tmp_path / "t.jsonl"),
    }
    _hook(env, payload)
    with MemoryRuntime.open(load_settings(home=home, env={})) as rt:
        _, state = rt.store.host_cursor("s", "claude-code/transcript")
    from convmem.core.text import normalize_text, sha256_hex

    [pending] = state["pending"]
    assert pending["key"] != sha256_hex(normalize_text(prompt))[:16]
    # the transcript line for that prompt still settles the reservation (no second event)
    _append(tmp_path / "t.jsonl", _prompt(prompt))
    _hook(env, {**payload, "hook_event_name": "Stop"})
    assert len(_events(env)) == 1
