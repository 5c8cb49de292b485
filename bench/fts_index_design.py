"""Experiment: which full-text index keeps a pre-step's ranked search bounded? (issue 15)

Not a benchmark of convmem (``run_all.sh`` does not run it): the measurement behind
the index design. One session of real text (``realtext.py``) is written into five
contentless FTS5 tables over the same events, in one transaction, then ``optimize``d:

* ``tri_global``: trigram, rowids in insertion order (convmem's ``events_fts`` today);
* ``tri_clust``: trigram, session-clustered rowids (``session_number << 32 | seq``);
* ``word_clust``: ``unicode61`` words, clustered rowids, every event;
* ``word_user``: ``unicode61`` words, clustered rowids, the person's messages only
  (the events a block quotes by default).

The queries are the person's own messages of the session (60 of them, long: their
median is dozens of terms), as convmem's query signals. Each row is a search of the
session's range ``ORDER BY rank LIMIT 200`` (or no rank), with every term, the K
longest, or the K rarest by the index's own document counts (``fts5vocab``, whose
lookup is timed apart). Prefix terms (``"stem"*``) on the word tables, phrases on the
trigram ones, as convmem's stems need.

Usage::

    python bench/fts_index_design.py [--events 1e4,1e5] [--out bench/results]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "src"))

from convmem.memory.store_items import fts_phrase  # noqa: E402
from convmem.query import query_signals, selective  # noqa: E402
from realtext import real_session  # noqa: E402
from scale import machine, machine_line  # noqa: E402

TABLES = {
    "tri_global": "trigram",
    "tri_clust": "trigram",
    "word_clust": "unicode61 remove_diacritics 0",
    "word_user": "unicode61 remove_diacritics 0",
}
RANKED = "SELECT rowid FROM {t} WHERE {t} MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rank LIMIT 200"
UNRANKED = "SELECT rowid FROM {t} WHERE {t} MATCH ? AND rowid BETWEEN ? AND ? LIMIT 2000"


def build(path: Path, events: int) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE events(seq INT PRIMARY KEY, type TEXT, text TEXT)")
    for table, tokenizer in TABLES.items():
        conn.execute(
            f"CREATE VIRTUAL TABLE {table} USING fts5(text, content='', tokenize='{tokenizer}')"
        )
    conn.execute("BEGIN")
    for e in real_session("s000", events):
        rowid = conn.execute("INSERT INTO events VALUES (?,?,?)", (e.seq, e.type, e.text)).lastrowid
        key = (1 << 32) | e.seq
        conn.execute("INSERT INTO tri_global(rowid, text) VALUES (?,?)", (rowid, e.text))
        conn.execute("INSERT INTO tri_clust(rowid, text) VALUES (?,?)", (key, e.text))
        conn.execute("INSERT INTO word_clust(rowid, text) VALUES (?,?)", (key, e.text))
        if e.type == "user/message":
            conn.execute("INSERT INTO word_user(rowid, text) VALUES (?,?)", (key, e.text))
    conn.execute("COMMIT")
    for table in TABLES:
        conn.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, word_user, 'row')")
    return conn


def run(events: int, work: Path) -> list[tuple[str, float, float]]:
    conn = build(work / f"design-{events}.sqlite", events)
    lo, hi = 1 << 32, (1 << 32) | 0xFFFFFFFF
    texts = [t for (t,) in conn.execute("SELECT text FROM events WHERE type = 'user/message'")]
    random.Random(1).shuffle(texts)
    samples: dict[str, list[float]] = {}

    def timed(name: str, sql: str, params: tuple[object, ...]) -> list[tuple[str, int]]:
        start = time.perf_counter()
        rows = conn.execute(sql, params).fetchall()
        samples.setdefault(name, []).append((time.perf_counter() - start) * 1000)
        return rows

    for text in texts[:60]:
        terms = query_signals(text).terms
        words = tuple(t for t in terms if len(t) >= 3 and t.isascii() and t.isalnum())
        if not words:
            continue
        phrases = " OR ".join(fts_phrase(t) for t in terms if len(t) >= 3)
        prefixes = " OR ".join(fts_phrase(t) + "*" for t in words)
        for table in ("tri_global", "tri_clust"):
            query = (
                RANKED
                if table != "tri_global"
                else RANKED.replace(" AND rowid BETWEEN ? AND ?", "")
            )
            params = (phrases,) if table == "tri_global" else (phrases, lo, hi)
            timed(f"{table} ranked, all terms", query.format(t=table), params)
        for table in ("word_clust", "word_user"):
            timed(f"{table} ranked, all terms", RANKED.format(t=table), (prefixes, lo, hi))
        timed("word_user unranked, all terms", UNRANKED.format(t="word_user"), (prefixes, lo, hi))
        marks = ",".join("?" * len(words))
        counts = dict(
            timed(
                "vocab counts of every term",
                f"SELECT term, doc FROM vocab WHERE term IN ({marks})",
                words,
            )
        )
        for k in (8, 16, 24):
            longest = [t for t in selective(words, k)]
            rarest = sorted(words, key=lambda t: (counts.get(t, 0), t))[:k]
            for how, pick in (("longest", longest), ("rarest", rarest)):
                match = " OR ".join(fts_phrase(t) + "*" for t in pick)
                timed(f"word_user ranked, {k} {how}", RANKED.format(t="word_user"), (match, lo, hi))
            tri = " OR ".join(fts_phrase(t) for t in selective(terms, k) if len(t) >= 3)
            timed(f"tri_clust ranked, {k} longest", RANKED.format(t="tri_clust"), (tri, lo, hi))
    conn.close()
    out = []
    for name, values in samples.items():
        values.sort()
        out.append((name, values[len(values) // 2], values[int(len(values) * 0.9)]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", default="1e4,1e5")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    lines = [
        "fts-index-design: one session of real text, 60 of the person's messages as queries",
        machine_line(machine()),
    ]
    with tempfile.TemporaryDirectory(prefix="convmem-design-") as work:
        for events in (int(float(x)) for x in args.events.split(",")):
            lines += ["", f"{events:,} events: {'search':<40} {'p50 ms':>8} {'p90 ms':>8}"]
            for name, p50, p90 in run(events, Path(work)):
                lines.append(
                    f"{'':>{len(f'{events:,} events: ')}}{name:<40} {p50:>8.2f} {p90:>8.2f}"
                )
            print("\n".join(lines), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fts-index-design.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
