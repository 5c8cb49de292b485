"""Crash harness: run capture in a child process, SIGKILL it at seeded random points, restart.

Two capture paths are driven:

* ``convmem ingest FILE`` over one large JSON Lines file, restarted until it exits 0;
* the long-lived ``convmem serve dsh``, fed the way the DSH plugin feeds it: the
  "host" appends each batch to the session's zstd log first, then sends it as an
  ``events`` request. After a kill the server is restarted; the unacknowledged batch
  is resent (the plugin's queue) or, by a seeded coin, dropped (a queue overflow),
  leaving it to the server's own log catch-up.

After every kill and at the end, :func:`check_store` proves the invariants; at the end
:func:`compare` holds the store against a clean single-run store built from the same
events in-process.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import zstandard

from convmem.adapters.dsh import SessionLogParser
from convmem.config import load_settings
from convmem.ingest import ingest_file
from convmem.memory.store import MemoryStore
from convmem.runtime import MemoryRuntime

DB_NAME = "memory.sqlite"


@dataclass
class CrashReport:
    """What a harness run did."""

    kills: int = 0  # SIGKILLs that hit a running child
    runs: int = 0  # child processes started
    resent: int = 0  # unacknowledged batches sent again after a restart
    dropped: int = 0  # unacknowledged batches left to the log catch-up
    problems: list[str] = field(default_factory=list)  # invariant failures after kills
    seconds: float = 0.0
    ops: dict[str, int] = field(default_factory=dict)  # serve dsh: kills per request type
    advanced: int = 0  # ingest: kills of a run that had committed work (not start-up)


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a child convmem: this data dir, SQLite, no resident hook process."""
    env = {**os.environ, "CONVMEM_HOME": str(home), "CONVMEM_HOOK_DAEMON": "0", **extra}
    env.pop("CONVMEM_STORE", None)
    return env


# --- invariants --------------------------------------------------------------------------


def check_store(db_path: Path, *, caught_up: bool = False) -> list[str]:
    """Invariants that must hold after any crash (and, with ``caught_up``, after a clean run).

    SQLite's integrity check is clean; each FTS index agrees with its table; each
    session's ``last_event_seq`` is its largest seq and ``last_extract_seq`` does not
    pass it. With ``caught_up``, extraction reached ``last_event_seq`` and nothing is
    left pending.
    """
    problems: list[str] = []
    conn = sqlite3.connect(db_path)
    try:
        rows = conn.execute("PRAGMA integrity_check").fetchall()
        problems += [f"integrity_check: {r[0]}" for r in rows if r[0] != "ok"]
        for table in ("events_fts", "memory_fts", "rules_fts"):
            try:
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
            except sqlite3.Error as exc:
                problems.append(f"{table} disagrees with its table: {exc}")
        fts_rows = conn.execute("SELECT count(*) FROM events_fts_docsize").fetchone()[0]
        event_rows = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        if fts_rows != event_rows:
            problems.append(f"events_fts indexes {fts_rows} rows, events holds {event_rows}")
        maxima = dict(conn.execute("SELECT session_id, max(seq) FROM events GROUP BY session_id"))
        cps = {
            r[0]: r[1:]
            for r in conn.execute(
                "SELECT session_id, last_event_seq, last_extract_seq FROM checkpoints"
            )
        }
        for sid, top in sorted(maxima.items()):
            last_event, last_extract = cps.get(sid, (-1, -1))
            if last_event != top:
                problems.append(f"{sid}: last_event_seq {last_event} but max seq {top}")
            if last_extract > last_event:
                problems.append(f"{sid}: last_extract_seq {last_extract} > {last_event}")
            if caught_up and last_extract != last_event:
                problems.append(f"{sid}: extraction stopped at {last_extract} of {last_event}")
        if caught_up:
            pending = conn.execute("SELECT count(*) FROM pending_extraction").fetchone()[0]
            if pending:
                problems.append(f"{pending} events still pending extraction")
    finally:
        conn.close()
    return problems


_SNAPSHOT = {
    "events": "SELECT session_id, seq, type, time, turn, step, role, text, source_kind,"
    " source_form, tool_name, call_id, store, content_hash, truncated FROM events"
    " ORDER BY session_id, seq",
    "archive": "SELECT session_id, ref, text, chars, truncated FROM archive"
    " ORDER BY session_id, ref",
    "memory_items": "SELECT id, session_id, kind, content, topic, conditions_json, scope_json,"
    " numbers_json, source_refs_json, evidence_type, status, supersedes_json, superseded_by,"
    " content_hash, derived_from_seq FROM memory_items ORDER BY id",
    "memory_events": "SELECT memory_id, session_id, event, actor, detail_json FROM memory_events"
    " ORDER BY memory_id, event, detail_json",
    "task_state": "SELECT session_id, goal, progress_json, blockers_json, open_items_json,"
    " superseded_json, updated_by_seq FROM task_state ORDER BY session_id",
    "checkpoints": "SELECT session_id, last_event_seq, last_extract_seq, last_validate_seq"
    " FROM checkpoints ORDER BY session_id",
    "pending_extraction": "SELECT session_id, seq FROM pending_extraction ORDER BY session_id, seq",
}


#: Tables that capture writes: exactly once, whatever the kills.
EVENT_TABLES = ("events", "archive", "checkpoints", "pending_extraction")
#: Tables extraction derives from them.
DERIVED_TABLES = ("memory_items", "memory_events", "task_state")


def snapshot(db_path: Path, tables: Iterable[str] = _SNAPSHOT) -> dict[str, list[tuple[Any, ...]]]:
    """The rows that must not depend on how often capture was killed (no timestamps)."""
    conn = sqlite3.connect(db_path)
    try:
        return {t: [tuple(r) for r in conn.execute(_SNAPSHOT[t])] for t in tables}
    finally:
        conn.close()


def compare(got: Path, want: Path, tables: Iterable[str] = _SNAPSHOT) -> list[str]:
    """Differences between two stores, table by table (empty when identical)."""
    tables = list(tables)
    a, b = snapshot(got, tables), snapshot(want, tables)
    out = []
    for table in tables:
        if a[table] == b[table]:
            continue
        extra = sorted(set(a[table]) - set(b[table]), key=repr)
        missing = sorted(set(b[table]) - set(a[table]), key=repr)
        out.append(
            f"{table}: {len(a[table])} rows vs {len(b[table])} in the clean store; "
            f"{len(extra)} unexpected (first {_short(extra[:1])}), "
            f"{len(missing)} missing (first {_short(missing[:1])})"
        )
    return out


def _short(rows: list[tuple[Any, ...]]) -> str:
    return repr(rows)[:300]


def clean_runtime(db_path: Path) -> MemoryRuntime:
    """A runtime on a fresh file with default settings, as the children use."""
    return MemoryRuntime(MemoryStore.open(str(db_path)), load_settings(env={}))


def reference_from_jsonl(db_path: Path, jsonl: Path) -> Path:
    with clean_runtime(db_path) as rt:
        report = ingest_file(jsonl, rt.on_events)
        assert not report.problems, report.problems[:3]
    return db_path


def reference_from_dsh(db_path: Path, logs: dict[str, list[dict[str, Any]]]) -> Path:
    with clean_runtime(db_path) as rt:
        for sid, records in sorted(logs.items()):
            parser = SessionLogParser(sid)
            events = [e for n, r in enumerate(records, 1) for e in parser.parse_line(n, r)]
            for i in range(0, len(events), 500):
                rt.on_events(events[i : i + 500])
    return db_path


# --- ingest ------------------------------------------------------------------------------


def progress(db: Path) -> int:
    """Committed work: events stored plus events extracted (0 before the schema exists)."""
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return 0
    try:
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        extracted = conn.execute(
            "SELECT coalesce(sum(last_extract_seq + 1), 0) FROM checkpoints"
        ).fetchone()[0]
        return int(events) + int(extracted)
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def work_units(events: list[dict[str, Any]]) -> int:
    """The :func:`progress` value of a finished job over these canonical events."""
    top: dict[str, int] = {}
    for e in events:
        top[e["session_id"]] = max(top.get(e["session_id"], -1), e["seq"])
    return len(events) + sum(seq + 1 for seq in top.values())


def ingest_with_kills(
    home: Path, jsonl: Path, kills: int, rng: random.Random, work: int
) -> CrashReport:
    """``convmem ingest`` restarted until it finishes, SIGKILLed ``kills`` times first.

    Each kill waits for its kill point, never for a time, so that every kill lands
    however loaded the machine is. Most points are an amount of committed work
    (:func:`progress`, ``work`` being the whole job in those units) past where the
    run started: the amount is drawn from what is left, so that later kills still
    find work to interrupt. The others, and every kill once little work is left, hit
    the child during start-up, before it has opened the store: a point every run
    passes through.
    """
    report = CrashReport()
    started = time.monotonic()
    db = home / DB_NAME
    cmd = [sys.executable, "-m", "convmem", "ingest", str(jsonl)]
    while True:
        base = progress(db)
        proc = subprocess.Popen(
            cmd, env=child_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        report.runs += 1
        if report.kills < kills:
            left = kills - report.kills
            room = (work - base) // (2 * left)
            if room >= 4 and rng.random() >= 0.3:  # after some committed work
                target = base + rng.randint(1, room)
                while proc.poll() is None and progress(db) < target:
                    time.sleep(rng.uniform(0.002, 0.02))
            # else: during start-up (the child cannot have finished: it is just born)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                report.kills += 1
                report.advanced += progress(db) > base
                if db.exists():  # (a kill during start-up leaves no file yet)
                    report.problems += [f"after kill {report.kills}: {p}" for p in check_store(db)]
                continue
        _, err = proc.communicate(timeout=600)
        if proc.returncode != 0:
            raise AssertionError(f"ingest exited {proc.returncode}: {err.decode()[-2000:]}")
        break  # done (if kills remain, the job finished first: report.kills says so)
    report.seconds = time.monotonic() - started
    return report


# --- serve dsh ---------------------------------------------------------------------------


def dsh_log_path(dsh_home: Path, sid: str) -> Path:
    return dsh_home / "sessions" / "--work-proj--" / sid / "session.v4.jsonl.zstd"


def _append_frame(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
    with path.open("ab") as fh:
        fh.write(zstandard.ZstdCompressor().compress(body))


class _Server:
    """One ``convmem serve dsh`` child."""

    def __init__(self, home: Path, dsh_home: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "convmem", "serve", "dsh"],
            env=child_env(home, DSH_HOME=str(dsh_home)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.killed = False

    def request(self, op: str, kill_after: float | None = None, **fields: Any) -> Any:
        """The reply, or None if the child died first; ``kill_after`` s after sending, SIGKILL."""
        self.next_id += 1
        line = json.dumps({"id": self.next_id, "op": op, **fields}, ensure_ascii=False) + "\n"
        stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        try:
            stdin.write(line.encode())
            stdin.flush()
            if kill_after is not None:
                time.sleep(kill_after)
                self.proc.send_signal(signal.SIGKILL)
                self.killed = True
            reply = stdout.readline()
        except (BrokenPipeError, OSError):
            return None
        if not reply:
            return None
        data: dict[str, Any] = json.loads(reply)
        if data.get("id") != self.next_id:
            raise AssertionError(f"reply to another request: {data}")
        if not data.get("ok"):
            raise AssertionError(f"{op} failed in the server: {data}")
        return data

    def close(self) -> int:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        code = self.proc.wait(timeout=120)
        if self.proc.stdout:
            self.proc.stdout.close()
        return code


def serve_dsh_with_kills(
    home: Path,
    dsh_home: Path,
    logs: dict[str, list[dict[str, Any]]],
    kills: int,
    rng: random.Random,
    batch: int = 12,
) -> CrashReport:
    """Feed every session's records through ``serve dsh``, killing it ``kills`` times.

    Each kill lands inside a request: a run lets a random number of requests through,
    then sends the next one and SIGKILLs the server 0–40 ms later (mid-capture,
    mid-catch-up or mid-assembly, whichever that request was).
    """
    report = CrashReport()
    started = time.monotonic()
    db = home / DB_NAME
    # host order: sessions interleaved, each in seq order; headers go to the log only
    queue: list[tuple[str, dict[str, Any]]] = []
    cursors = {sid: 1 for sid in logs}
    for sid in logs:
        _append_frame(dsh_log_path(dsh_home, sid), logs[sid][:1])
    while any(cursors[s] < len(logs[s]) for s in logs):
        sid = rng.choice([s for s in sorted(logs) if cursors[s] < len(logs[s])])
        take = rng.randint(1, 8)
        queue += [(sid, r) for r in logs[sid][cursors[sid] : cursors[sid] + take]]
        cursors[sid] += take
    requests = len(queue) // batch + 1  # roughly: one events request per batch
    step = max(1, int(1.6 * requests / max(kills, 1)))
    started_sessions: set[str] = set()
    server = _Server(home, dsh_home)
    fresh = True
    report.runs += 1
    allowed = rng.randint(0, step)

    def call(op: str, **fields: Any) -> Any:
        nonlocal allowed, server, fresh
        if report.kills < kills and allowed == 0:
            reply = server.request(op, kill_after=rng.uniform(0, 0.04), **fields)
            server.close()
            report.kills += 1
            report.ops[op] = report.ops.get(op, 0) + 1
            if db.exists():
                report.problems += [f"after kill {report.kills}: {p}" for p in check_store(db)]
            server = _Server(home, dsh_home)
            fresh = True
            report.runs += 1
            allowed = rng.randint(0, step)
            return reply
        allowed -= 1
        reply = server.request(op, **fields)
        if reply is None:
            raise AssertionError(f"serve dsh died without being killed ({op})")
        return reply

    position = 0
    steps = 0
    while position < len(queue):
        chunk = queue[position : position + batch]
        for sid in sorted({s for s, _ in chunk}):
            _append_frame(dsh_log_path(dsh_home, sid), [r for s, r in chunk if s == sid])
        new = sorted({s for s, _ in chunk} - started_sessions)
        while True:
            ok = True
            if fresh:  # the plugin says hello once per child it starts
                ok = call("hello") is not None
                fresh = not ok
            for sid in new if ok else ():
                ok = ok and call("session_start", session_id=sid) is not None
            if ok:
                payload = [{"session_id": s, "event": r} for s, r in chunk]
                ok = call("events", events=payload) is not None
            if ok and steps % 5 == 0:
                ok = call("pre_step", session_id=chunk[-1][0], turn=1, step=1) is not None
            if ok:
                started_sessions.update(new)
                break
            if rng.random() < 0.5:
                report.resent += 1
                continue  # the plugin's queue sends it again
            report.dropped += 1  # queue overflow: the log catch-up must recover it
            started_sessions.update(new)
            break
        position += batch
        steps += 1
    while report.kills < kills:  # the stream ended first: kill during catch-up and steps
        call("pre_step", session_id=rng.choice(sorted(logs)))
    allowed = -1  # the final server is not killed
    for sid in sorted(logs):
        call("catch_up", session_id=sid)
    code = server.close()
    if code != 0:
        raise AssertionError(f"serve dsh exited {code}")
    report.seconds = time.monotonic() - started
    return report
