"""Faults under the store: a full disk, a read-only data dir, a damaged file, a newer schema.

In each case the host keeps working without memory (the Claude Code hook exits 0
and says nothing, the DSH server answers ``ok: false`` or exits so that the plugin
goes on without it), the CLI says one clear sentence, nothing is repaired behind the
user's back (the database file's bytes do not change) and nothing committed is lost.

The full disk is simulated two ways: ``PRAGMA max_page_count`` on the runtime's own
connection, and, when this process may mount (root in a container), a tiny tmpfs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, unavailable
from convmem.adapters.dsh import DshServer
from convmem.config import load_settings
from convmem.errors import SchemaTooNewError, StoreError
from convmem.memory.store import MemoryStore
from convmem.runtime import MemoryRuntime
from helpers.crash import check_store, child_env
from helpers.streams import canonical_stream, dsh_records, write_jsonl

NODE = shutil.which("node")
HARNESS = Path(__file__).resolve().parent / "fixtures" / "dsh" / "plugin_harness.mjs"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(
    home: Path, *args: str, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "convmem", *args],
        input=stdin,
        env=child_env(home, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def _one_sentence(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The command failed with exactly one ``Error: …`` line naming the problem."""
    assert proc.returncode != 0, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _hook_goes_on(home: Path, tmp_path: Path, *, answers: bool) -> None:
    """The hook exits 0 with nothing on stderr, and answers with a block exactly when
    ``answers`` says the store can still be read."""
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "en1",
        "prompt": "What is the latency budget?",
        "transcript_path": str(tmp_path / "none.jsonl"),
        "cwd": str(tmp_path),
    }
    proc = _run(home, "hook", "claude-code", stdin=json.dumps(payload))
    assert proc.returncode == 0 and proc.stderr == "", proc
    if answers:
        assert "hookSpecificOutput" in json.loads(proc.stdout), proc
    else:
        assert proc.stdout == "", proc


def _dsh_plugin_goes_on(home: Path, tmp_path: Path) -> None:
    """The real plugin, with the real server over the broken store: steps go on."""
    if NODE is None:
        unavailable("node is not installed, so the DSH plugin part of this test did not run")
    config = {
        "command": [sys.executable, "-m", "convmem", "serve", "dsh"],
        "home": str(home),
        "preStepTimeoutMs": 1500,
        "restartDelayMs": 20,
    }
    proc = subprocess.run(
        [NODE, str(HARNESS), str(_plugin_path()), "unavailable", json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**child_env(home), "DSH_HOME": str(tmp_path / "no-dsh")},
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(out[k]["added"] == [] for k in ("preStep", "preStep2", "preStep3"))
    assert out["preExecute"]["nextCalled"] is True


def _plugin_path() -> Path:
    from convmem.cli.dsh_cmds import plugin_path

    return plugin_path()


_TEMPLATES: dict[int, Path] = {}


def _populated_home(tmp_path: Path, events: int = 0) -> Path:
    """A data dir holding en_basic (and ``events`` more), built once per size, then copied."""
    template = _TEMPLATES.get(events)
    if template is None:
        # under this run's base temp folder (another run's may be at another schema), so
        # pytest's retention policy cleans it up
        template = tmp_path.parents[0] / f"faults-template-{events}" / "home"
        assert _run(template, "ingest", str(FIXTURES / "en_basic.jsonl")).returncode == 0
        if events:
            stream = write_jsonl(
                template.parent / "stream.jsonl", canonical_stream(events, sessions=2)
            )
            assert _run(template, "ingest", str(stream)).returncode == 0
        _TEMPLATES[events] = template
    home = tmp_path / "home"
    shutil.copytree(template, home)
    return home


def _count(db: Path, session: str | None = None) -> int:
    conn = sqlite3.connect(db)
    try:
        sql = "SELECT count(*) FROM events" + (" WHERE session_id = ?" if session else "")
        return int(conn.execute(sql, (session,) if session else ()).fetchone()[0])
    finally:
        conn.close()


# --- a full disk ------------------------------------------------------------------------------


def test_full_disk_by_max_page_count_fails_soft_and_loses_nothing(tmp_path: Path) -> None:
    logs = dsh_records(canonical_stream(900, sessions=2, seed=5))
    rt = MemoryRuntime(MemoryStore.open(str(tmp_path / "m.sqlite")), load_settings(env={}))
    server = DshServer(rt)
    batches = [
        [{"session_id": sid, "event": r} for r in records[i : i + 30]]
        for sid, records in sorted(logs.items())
        for i in range(1, len(records), 30)
    ]
    conn = rt.store.db.conn
    conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0] + 40}")
    acked: list[dict[str, Any]] = []
    failed = 0
    for n, batch in enumerate(batches):
        reply = server.handle_line(json.dumps({"id": n, "op": "events", "events": batch}).encode())
        step = server.handle_line(
            json.dumps({"id": n, "op": "pre_step", "session_id": batch[0]["session_id"]}).encode()
        )
        assert {reply["id"], step["id"]} == {n}
        if reply["ok"]:
            acked += batch
        else:
            failed += 1
            assert "no space left" in reply["error"], reply
    assert failed > 0 and acked, "the limit should be hit part-way"
    assert rt.store.integrity_check() == []
    stored = {(e.session_id, e.seq) for sid in logs for e in rt.store.events(sid)}
    for item in acked:
        if item["event"]["type"] != "turn/start":  # bookkeeping, not an event
            assert (item["session_id"], item["event"]["seq"]) in stored

    conn.execute("PRAGMA max_page_count = 1073741823")  # space again: the plugin resends
    for n, batch in enumerate(batches):
        reply = server.handle_line(json.dumps({"id": n, "op": "events", "events": batch}).encode())
        assert reply["ok"], reply
    rt.close()
    db = tmp_path / "m.sqlite"
    assert check_store(db, caught_up=True) == []
    expected = sum(1 for records in logs.values() for r in records[1:] if r["type"] != "turn/start")
    assert _count(db) == expected


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 1.5 MB tmpfs, or a skip where this process may not mount."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1536k", "tmpfs", str(mount)], capture_output=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_full_disk_on_a_tiny_tmpfs(tmpfs: Path, tmp_path: Path) -> None:
    home = tmpfs / "home"
    assert _run(home, "ingest", str(FIXTURES / "en_basic.jsonl")).returncode == 0
    # a compaction, so that the model no longer sees the early turns and a block is due
    compacted = write_jsonl(
        tmp_path / "compaction.jsonl",
        [
            {"session_id": "en1", "seq": 900, "type": "compaction/start", "text": "compacting"},
            {"session_id": "en1", "seq": 901, "type": "compaction/summary", "text": "Summary."},
        ],
    )
    assert _run(home, "ingest", str(compacted)).returncode == 0
    stream = write_jsonl(tmp_path / "big.jsonl", canonical_stream(1500, sessions=2, long_every=6))
    _one_sentence(_run(home, "ingest", str(stream)), "no space left", "free some disk space")
    status = _run(home, "status")
    assert status.returncode == 0 and "en1" in status.stdout, status
    _hook_goes_on(home, tmp_path, answers=True)
    assert _count(home / "memory.sqlite", "en1") == 24

    subprocess.run(["mount", "-o", "remount,size=64m", str(tmpfs)], check=True)
    assert _run(home, "ingest", str(stream)).returncode == 0
    assert _count(home / "memory.sqlite") == 24 + 1500
    assert check_store(home / "memory.sqlite", caught_up=True) == []


# --- a read-only data dir ----------------------------------------------------------------------


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Any]:
    """A function that makes a folder read-only (a read-only bind mount, or chmod)."""
    mounted: list[Path] = []

    def make(folder: Path) -> None:
        if os.geteuid() != 0:
            folder.chmod(0o500)
            return
        bind = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
        if bind.returncode != 0:
            pytest.skip(f"root, but cannot bind-mount: {bind.stderr.decode().strip()}")
        mounted.append(folder)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)

    try:
        yield make
    finally:
        for folder in mounted:
            subprocess.run(["umount", "-l", str(folder)], check=False)


def test_read_only_data_dir(tmp_path: Path, read_only: Any) -> None:
    home = _populated_home(tmp_path)
    db = home / "memory.sqlite"
    before = _sha(db)
    read_only(home)
    sentence = "is in a read-only folder; make it writable"
    _one_sentence(_run(home, "status"), str(db), sentence)
    _one_sentence(_run(home, "ingest", str(FIXTURES / "zh_basic.jsonl")), sentence)
    _one_sentence(_run(home, "search", "latency"), sentence)
    _hook_goes_on(home, tmp_path, answers=False)  # it cannot open the store at all
    _one_sentence(_run(home, "serve", "dsh", stdin='{"id": 1, "op": "hello"}\n'), sentence)
    _dsh_plugin_goes_on(home, tmp_path)
    with pytest.raises(StoreError, match="read-only"):
        MemoryRuntime.open(load_settings(home=home, env={}))
    assert _sha(db) == before
    conn = sqlite3.connect(f"file:{db}?immutable=1", uri=True)  # still all there
    assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 22
    conn.close()


# --- a damaged database file -------------------------------------------------------------------


def _garbage(db: Path) -> None:
    db.write_bytes(b"this is not a database, just bytes\n" * 4000)


def _truncated(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])


def _header_only(db: Path) -> None:
    db.write_bytes(db.read_bytes()[:100])


def _scribbled(db: Path) -> None:
    """Random bytes over data pages (event rows), the schema pages left alone."""
    data = bytearray(db.read_bytes())
    pages = [
        offset
        for offset in range(4096, len(data), 4096)
        if b"tool/result" in data[offset : offset + 4096]
        and b"CREATE" not in data[offset : offset + 4096]
    ]
    for offset in pages[::4]:
        data[offset + 8 : offset + 600] = os.urandom(592)
    db.write_bytes(bytes(data))


DAMAGE = {
    "garbage": _garbage,
    "truncated": _truncated,
    "header-only": _header_only,
    "scribbled": _scribbled,
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_database_is_reported_never_repaired(tmp_path: Path, damage: str) -> None:
    home = _populated_home(tmp_path, events=600)
    db = home / "memory.sqlite"
    assert not (home / "memory.sqlite-wal").exists()  # closed cleanly: all in the file
    DAMAGE[damage](db)
    before = _sha(db)

    status = _run(home, "status")
    check = _run(home, "status", "--check")
    if status.returncode == 0:  # the damage lies where plain status does not read
        assert damage == "scribbled"
        assert check.returncode == 1 and "integrity: PROBLEMS FOUND" in check.stdout
    else:
        _one_sentence(status, str(db))
        assert check.returncode == 1
        if check.stderr.strip():
            _one_sentence(check, str(db))
        else:
            assert "integrity: PROBLEMS FOUND" in check.stdout
    # the checks say so too, with a failing exit status
    assert _run(home, "status", "--check", "--json").returncode == 1
    doctor = _run(home, "doctor")
    assert doctor.returncode == 1 and f"ERROR store: {db}" in doctor.stdout
    # a block that cannot be built is an error, and the damaged store is not written to
    wal = home / "memory.sqlite-wal"
    assembled = _run(home, "assemble", "--session", "en1")
    assert assembled.returncode == 1
    assert not wal.exists() or wal.stat().st_size == 0
    assert _sha(db) == before
    ingest = _run(home, "ingest", str(FIXTURES / "zh_basic.jsonl"))
    if ingest.returncode != 0:
        _one_sentence(ingest)
    _hook_goes_on(home, tmp_path, answers=False)
    served = _run(home, "serve", "dsh", stdin='{"id": 1, "op": "pre_step", "session_id": "en1"}\n')
    if served.returncode != 0:
        _one_sentence(served, str(db))
    else:
        assert json.loads(served.stdout)["id"] == 1
    if damage != "scribbled":
        _dsh_plugin_goes_on(home, tmp_path)
        assert _sha(db) == before, "the damaged file was changed"


# --- a database from a newer convmem -----------------------------------------------------------


def test_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    home = _populated_home(tmp_path)
    db = home / "memory.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    conn.execute("CREATE TABLE from_the_future (x)")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = _sha(db)
    for args in (
        ["status"],
        ["status", "--check"],
        ["ingest", str(FIXTURES / "zh_basic.jsonl")],
        ["search", "latency"],
        ["serve", "dsh"],
    ):
        _one_sentence(_run(home, *args, stdin=""), "schema version 99", "upgrade convmem")
    _hook_goes_on(home, tmp_path, answers=False)
    _dsh_plugin_goes_on(home, tmp_path)
    with pytest.raises(SchemaTooNewError):
        MemoryRuntime.open(load_settings(home=home, env={}))
    assert _sha(db) == before
    assert _count(db, "en1") == 22


def test_openai_loop_keeps_working_on_a_full_disk(tmp_path: Path) -> None:
    from convmem.adapters.openai import OpenAIMemory

    rt = MemoryRuntime(MemoryStore.open(str(tmp_path / "m.sqlite")), load_settings(env={}))
    memory = OpenAIMemory(rt, "loop")
    messages = [{"role": "user", "content": "The token budget is 3000 tokens."}]
    memory.with_memory(messages)
    conn = rt.store.db.conn
    conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
    messages += [
        {"role": "assistant", "content": "Noted. " * 3000},
        {"role": "user", "content": "What was the budget? " * 2000},
    ]
    assert memory.with_memory(messages)[-1] == messages[-1]  # the loop goes on, without memory


def test_a_block_that_a_damaged_index_stops_is_an_error_and_writes_nothing(
    tmp_path: Path,
) -> None:
    """The tables read, the item index not (its pages scribbled over): ``assemble`` fails
    with exit 1 and logs no attempt into the damaged file."""
    home = _populated_home(tmp_path)
    db = home / "memory.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("UPDATE item_words_fts_data SET block = ? WHERE id > 10", (b"\xff" * 64,))
    conn.commit()
    conn.close()
    before = _sha(db)
    assembled = _run(home, "assemble", "--session", "en1", "--query", "latency budget")
    assert assembled.returncode == 1
    assert "damaged" in assembled.stderr and len(assembled.stderr.strip().splitlines()) == 1
    assert _sha(db) == before
    assert _run(home, "assemble", "--session", "en1", "--json").returncode == 1
