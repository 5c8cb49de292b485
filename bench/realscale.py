"""Long sessions of real text: capture + extraction and pre-step as one session grows.

For each size (default 1e3 and 1e4 events; 1e5, whose store grows to 1e6 events, takes
about an hour on 2 cores) one session of real text (``realtext.py``: LoCoMo turns as
long messages, this project's code, diffs and recorded sessions as pasted material and
tool results) is written, in batches of 200, into two fresh SQLite files with the same
schema, indexes and triggers, batch by batch, alternating which goes first:

* **bare**: ``executemany`` of the prepared rows (as ``bench/capture.py``);
* **convmem**: ``MemoryRuntime.on_events``: capture and extraction, as a host runs it.

Printed side by side, per size: both rates and their ratio, convmem's rate over the
last tenth of the batches against the first tenth, database bytes per event, memory
items, and the peak RSS of the child process that built it. Then the person's own
messages (up to ``--queries``) are the queries of ``runtime.assemble(session, [],
query=text, log=False)`` beside a bare ``events_fts MATCH ... ORDER BY rank LIMIT 24``
over the same terms (the ones convmem ranks by), interleaved. Then a copy of the
store gets nine other sessions of the same size (capture only: their extraction would
take as long as the session's own), and the same queries run on the store and on the
copy in one process, alternating which goes first, for the factor the others add.

Usage::

    python bench/realscale.py [--sizes 1e3,1e4,1e5] [--queries 100] [--out bench/results]
    python bench/realscale.py --render bench/results/realscale-DATE.json
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "src"))

from capture import INSERT, bare_rows  # noqa: E402
from convmem.config import load_settings  # noqa: E402
from convmem.core.db import MemoryDatabase, register_functions  # noqa: E402
from convmem.memory.store import MemoryStore  # noqa: E402
from convmem.memory.store_items import fts_phrase, word_match  # noqa: E402
from convmem.query import query_signals, selective, substrings, word_terms  # noqa: E402
from convmem.retrieval import RANK_TERMS, Retriever  # noqa: E402
from convmem.runtime import MemoryRuntime  # noqa: E402
from realtext import real_session  # noqa: E402
from scale import (  # noqa: E402
    BARE_SQL,
    file_bytes,
    machine,
    machine_line,
    maxrss_mib,
    percentile,
    source_state,
)

BATCH = 200
SESSION = "s000"
OTHERS = 9
WARMUP = 3
TARGETS = {
    "capture_ratio": 0.5,  # capture + extraction / bare, at 1e4 and 1e5
    "last_vs_first": 0.8,
    "p50_ms": 20.0,  # at 1e5
    "p50_to_bare": 3.0,
    "others_factor": 1.2,
    "growth_per_10x": 2.0,
}


#: The ranked query the pre-step's evidence search runs, bare (the word index).
BARE_WORDS_SQL = "SELECT rowid FROM words_fts WHERE words_fts MATCH ? ORDER BY rank LIMIT 24"


def _open(db: Path) -> MemoryRuntime:
    return MemoryRuntime(MemoryStore.open(str(db)), load_settings(env={}))


def child_build(size: int, db: Path, bare: Path) -> dict[str, Any]:
    from realtext import corpus

    corpus()  # loaded first: its own memory is reported apart
    corpus_rss = maxrss_mib()
    MemoryDatabase(bare).close()
    conn = sqlite3.connect(bare, isolation_level=None)
    register_functions(conn)  # the word index's trigger calls it
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    runtime = _open(db)
    bare_t: list[float] = []
    conv_t: list[float] = []
    text_bytes = 0
    batch: list[Any] = []

    def flush(n: int) -> None:
        rows = bare_rows(batch)
        order = ("bare", "convmem") if n % 2 == 0 else ("convmem", "bare")
        for which in order:
            start = time.perf_counter()
            if which == "bare":
                conn.execute("BEGIN")
                conn.executemany(INSERT, rows)
                conn.execute("COMMIT")
                bare_t.append(time.perf_counter() - start)
            else:
                runtime.on_events(batch)
                conv_t.append(time.perf_counter() - start)

    for event in real_session(SESSION, size):
        text_bytes += len(event.text.encode("utf-8"))
        batch.append(event)
        if len(batch) == BATCH:
            flush(len(conv_t))
            batch = []
    if batch:
        flush(len(conv_t))
    conn.close()
    items = int(runtime.store.db.scalar("SELECT count(*) FROM memory_items"))
    runtime.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    runtime.close()
    tenth = max(1, len(conv_t) // 10)
    rate = BATCH * len(conv_t) / sum(conv_t)
    first = BATCH * tenth / sum(conv_t[:tenth])
    last = BATCH * tenth / sum(conv_t[-tenth:])
    return {
        "events": size,
        "text_bytes_per_event": round(text_bytes / size, 1),
        "bare_events_per_s": round(BATCH * len(bare_t) / sum(bare_t)),
        "convmem_events_per_s": round(rate),
        "ratio_to_bare": round(sum(bare_t) / sum(conv_t), 3),
        "first_tenth_events_per_s": round(first),
        "last_tenth_events_per_s": round(last),
        "last_vs_first": round(last / first, 2),
        "memory_items": items,
        "db_bytes_per_event": round(file_bytes(db) / size),
        "maxrss_mib": maxrss_mib(),
        "corpus_rss_mib": corpus_rss,
    }


def _queries(runtime: MemoryRuntime) -> list[str]:
    """The session's own messages, in a fixed shuffled order: the pre-step's queries."""
    said = runtime.store.events(SESSION, types=["user/message"])
    texts = [e.text for e in said if e.text]
    random.Random(7).shuffle(texts)
    return texts


def child_query(db: Path, count: int) -> dict[str, Any]:
    runtime = _open(db)
    retriever = Retriever(runtime.store, runtime.settings)
    conn = runtime.store.db.conn
    texts = _queries(runtime)
    conv: list[float] = []
    bare: list[float] = []
    bare_words: list[float] = []
    for n, text in enumerate(texts[:count]):
        sig = query_signals(text)
        # the trigram query over the terms the pre-step ranked by before the word index
        terms = substrings(selective(sig.terms, RANK_TERMS))
        match = " OR ".join(fts_phrase(t) for t in terms)
        # the pre-step's own ranked terms, as it looks them up: the session's tagged
        # words (Chinese by its two-character windows since schema 12)
        words = word_terms(retriever.terms(sig, events=True)[0])
        words_match = word_match(SESSION, words) if words else ""
        start = time.perf_counter()
        runtime.assemble(SESSION, [], query=text, log=False)
        took = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        if match:
            conn.execute(BARE_SQL, (match,)).fetchall()
        took_bare = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        if words_match:
            conn.execute(BARE_WORDS_SQL, (words_match,)).fetchall()
        elif match:  # a term no word index holds: the pre-step searches the trigram index
            conn.execute(BARE_SQL, (match,)).fetchall()
        took_words = (time.perf_counter() - start) * 1000
        if n >= WARMUP:
            conv.append(took)
            bare.append(took_bare)
            bare_words.append(took_words)
    runtime.close()
    for values in (conv, bare, bare_words):
        values.sort()
    return {
        "queries": len(conv),
        "p50_ms": round(percentile(conv, 50), 2),
        "p99_ms": round(percentile(conv, 99), 2),
        "bare_p50_ms": round(percentile(bare, 50), 2),
        "bare_p99_ms": round(percentile(bare, 99), 2),
        "bare_words_p50_ms": round(percentile(bare_words, 50), 2),
        "bare_words_p99_ms": round(percentile(bare_words, 99), 2),
        "maxrss_mib": maxrss_mib(),
    }


def child_pair(alone: Path, others: Path, count: int) -> dict[str, Any]:
    """The pre-step on the store alone and on its copy holding nine other sessions,
    query by query, alternating which goes first (one process: the machine's drift
    over minutes moves both alike)."""
    stores = {"alone": _open(alone), "others": _open(others)}
    texts = _queries(stores["alone"])
    took: dict[str, list[float]] = {"alone": [], "others": []}
    for n, text in enumerate(texts[:count]):
        for name in ("alone", "others") if n % 2 == 0 else ("others", "alone"):
            start = time.perf_counter()
            stores[name].assemble(SESSION, [], query=text, log=False)
            if n >= WARMUP:
                took[name].append((time.perf_counter() - start) * 1000)
    for runtime in stores.values():
        runtime.close()
    for values in took.values():
        values.sort()
    return {
        "queries": len(took["others"]),
        "p50_ms": round(percentile(took["others"], 50), 2),
        "p99_ms": round(percentile(took["others"], 99), 2),
        "alone_p50_ms": round(percentile(took["alone"], 50), 2),
        "alone_p99_ms": round(percentile(took["alone"], 99), 2),
        "maxrss_mib": maxrss_mib(),
    }


def others_factor(row: dict[str, Any]) -> float:
    """Pre-step p50 with nine other sessions over alone: from the interleaved run when
    there is one (earlier results measured the two minutes apart)."""
    o = row["with_others"]
    return o["p50_ms"] / o.get("alone_p50_ms", row["prestep"]["p50_ms"])


def child_others(db: Path, size: int) -> dict[str, Any]:
    """Capture nine other sessions of the same size (no extraction)."""
    runtime = _open(db)
    started = time.perf_counter()
    for n in range(1, OTHERS + 1):
        batch: list[Any] = []
        for event in real_session(f"s{n:03d}", size, seed=n):
            batch.append(event)
            if len(batch) == 2000:
                runtime.capture.capture_many(batch)
                batch = []
        if batch:
            runtime.capture.capture_many(batch)
    runtime.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    runtime.close()
    return {"seconds": round(time.perf_counter() - started, 1)}


def run_child(*args: str) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"child {' '.join(args)} failed with {done.returncode}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        f"{'events':>8} {'bare ev/s':>10} {'convmem ev/s':>13} {'ratio':>6} {'last/first':>11}"
        f" {'items':>8} {'B/event':>8} {'RSS MiB':>8} {'corpus':>7}",
    ]
    for r in rows:
        b = r["build"]
        lines.append(
            f"{b['events']:>8,} {b['bare_events_per_s']:>10,} {b['convmem_events_per_s']:>13,}"
            f" {b['ratio_to_bare']:>6.3f} {b['last_vs_first']:>11.2f} {b['memory_items']:>8,}"
            f" {b['db_bytes_per_event']:>8,} {b['maxrss_mib']:>8.0f} {b['corpus_rss_mib']:>7.0f}"
        )
    lines += [
        "",
        "bare: the ranked FTS5 query over the same terms alone, on the word index the"
        " pre-step reads (words) and on the trigram index (trigram, what it read before)",
        f"{'events':>8} {'p50 ms':>8} {'p99 ms':>8} {'words':>8} {'p50/words':>9}"
        f" {'trigram':>8} {'p50/tri':>8} {'+9 p50 ms':>10} {'+9 / alone':>10} {'RSS MiB':>8}",
    ]
    for r in rows:
        q, o = r["prestep"], r["with_others"]
        words = q.get("bare_words_p50_ms")  # runs before the word index have none
        word_cells = (
            f" {words:>8.2f} {q['p50_ms'] / max(words, 1e-9):>9.1f}"
            if words is not None
            else f" {'-':>8} {'-':>9}"
        )
        lines.append(
            f"{r['build']['events']:>8,} {q['p50_ms']:>8.2f} {q['p99_ms']:>8.2f}{word_cells}"
            f" {q['bare_p50_ms']:>8.2f} {q['p50_ms'] / max(q['bare_p50_ms'], 1e-9):>8.1f}"
            f" {o['p50_ms']:>10.2f} {others_factor(r):>10.2f} {q['maxrss_mib']:>8.0f}"
        )
    return lines


def checks(rows: list[dict[str, Any]]) -> list[tuple[str, float, float, bool]]:
    """Each target of the issue against what this run measured: (what, value, target,
    at most?)."""
    out: list[tuple[str, float, float, bool]] = []
    by = {r["build"]["events"]: r for r in rows}
    for n in sorted(by):
        b, q = by[n]["build"], by[n]["prestep"]
        if n >= 10_000:
            out.append(
                (
                    f"{n:,}: capture + extraction / bare",
                    b["ratio_to_bare"],
                    TARGETS["capture_ratio"],
                    False,
                )
            )
            out.append(
                (
                    f"{n:,}: last tenth / first tenth",
                    b["last_vs_first"],
                    TARGETS["last_vs_first"],
                    False,
                )
            )
            out.append(
                (
                    f"{n:,}: +9 sessions / alone",
                    others_factor(by[n]),
                    TARGETS["others_factor"],
                    True,
                )
            )
        if n >= 100_000:
            out.append((f"{n:,}: pre-step p50 ms", q["p50_ms"], TARGETS["p50_ms"], True))
            for name, key in (("words", "bare_words_p50_ms"), ("trigram", "bare_p50_ms")):
                if key in q:
                    ratio = q["p50_ms"] / max(q[key], 1e-9)
                    what = f"{n:,}: pre-step p50 / bare FTS5 ({name})"
                    out.append((what, ratio, TARGETS["p50_to_bare"], True))
        if n * 10 in by:
            grow = by[n * 10]["prestep"]["p50_ms"] / q["p50_ms"]
            what = f"{n:,} -> {n * 10:,}: pre-step p50 growth"
            out.append((what, grow, TARGETS["growth_per_10x"], True))
    return out


def met(value: float, target: float, most: bool) -> bool:
    return value <= target if most else value >= target


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """Each target of the issue against what this run measured, as printed."""
    out = ["", "targets (issue 15):"]
    for what, value, target, most in checks(rows):
        sign = "<=" if most else ">="
        verdict = "met" if met(value, target, most) else "MISSED"
        out.append(f"  {what:<46} {value:>8.2f}  target {sign} {target:<5} {verdict}")
    return out


def render(doc: dict[str, Any]) -> list[str]:
    return [
        "realscale: one session of real text (LoCoMo turns, this project's code, diffs and"
        " recorded sessions), batches of 200 through MemoryRuntime.on_events",
        machine_line(doc["machine"]),
        *table(doc["sizes"]),
        *verdicts(doc["sizes"]),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1e3,1e4")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--date", default=None)
    parser.add_argument("--render", type=Path, help="print the text of a saved JSON result")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.render:
        print("\n".join(render(json.loads(args.render.read_text()))))
        return 0
    if args.child:
        kind, *rest = args.child
        if kind == "build":
            result = child_build(int(rest[0]), Path(rest[1]), Path(rest[2]))
        elif kind == "query":
            result = child_query(Path(rest[0]), int(rest[1]))
        elif kind == "pair":
            result = child_pair(Path(rest[0]), Path(rest[1]), int(rest[2]))
        else:
            result = child_others(Path(rest[0]), int(rest[1]))
        print(json.dumps(result))
        return 0
    info = machine()
    print(machine_line(info), flush=True)
    rows = []
    work = Path(tempfile.mkdtemp(prefix="convmem-realscale-"))
    try:
        for size in (int(float(s)) for s in args.sizes.split(",")):
            db, bare = work / f"c{size}.sqlite", work / f"b{size}.sqlite"
            shared = work / f"o{size}.sqlite"  # a copy of db, with nine other sessions
            row: dict[str, Any] = {"build": run_child("build", str(size), str(db), str(bare))}
            print(f"{size:,}: built {row['build']}", flush=True)
            row["prestep"] = run_child("query", str(db), str(args.queries))
            print(f"{size:,}: pre-step {row['prestep']}", flush=True)
            for suffix in ("", "-wal"):
                if Path(str(db) + suffix).exists():
                    shutil.copyfile(str(db) + suffix, str(shared) + suffix)
            row["others_capture"] = run_child("others", str(shared), str(size))
            row["with_others"] = run_child("pair", str(db), str(shared), str(args.queries))
            print(f"{size:,}: with {OTHERS} other sessions {row['with_others']}", flush=True)
            rows.append(row)
            for path in (db, bare, shared):
                for suffix in ("", "-wal", "-shm"):
                    Path(str(path) + suffix).unlink(missing_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    date = args.date or time.strftime("%Y-%m-%d")
    doc = {
        "benchmark": "realscale",
        "date": date,
        "machine": info,
        "source": source_state(),
        "targets": TARGETS,
        "sizes": rows,
    }
    lines = render(doc)
    print("\n".join(lines))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"realscale-{date}.json").write_text(json.dumps(doc, indent=2) + "\n")
    (args.out / f"realscale-{date}.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
