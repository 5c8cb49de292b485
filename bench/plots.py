"""Plots and the generated tables of ``docs/benchmarks.md``, from ``bench/results``.

Reads the newest ``locomo-*.json``, ``scale-*.json`` and ``capture-*.json`` and,
when present, ``hook-latency.json``, ``dsh-roundtrip.json`` and ``pg-compare*.json``
(written by the other benchmark scripts), then

* draws ``docs/locomo-recall-at-k.png`` (R@k of convmem, BM25 and published
  DRAGON), ``docs/locomo-block-recall.png`` (evidence recall inside the assembled
  block vs budget), ``docs/scale-latency.png`` (pre-step p50/p99 vs events,
  log axes, beside a bare FTS5 MATCH) and ``docs/realscale.png`` (one session of
  real text: capture + extraction rate and pre-step latency vs its size);
* rewrites every ``<!-- BEGIN generated:NAME -->`` ... ``<!-- END generated:NAME -->``
  section of ``docs/benchmarks.md`` with a table built from those files, so the
  document's figures always come from the data.

Usage::

    python bench/plots.py [--results bench/results] [--docs docs] [--no-plots]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KS = ("5", "10", "25", "50")
BUDGETS = ("150", "300", "750", "1500", "3000")
COLORS = {"convmem": "#1f77b4", "bm25": "#ff7f0e", "DRAGON (published)": "#2ca02c"}
MARKER = re.compile(
    r"(<!-- BEGIN generated:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- END generated:(?P=name) -->)",
    re.S,
)


# --------------------------------------------------------------------------- loading


def newest(results: Path, pattern: str) -> Path | None:
    """The newest result file by name (dates in names sort), or None."""
    files = sorted(results.glob(pattern))
    return files[-1] if files else None


def load(path: Path | None) -> dict[str, Any] | None:
    if path is None or not path.exists():
        return None
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    data["_file"] = path.name
    return data


def load_all(results: Path) -> dict[str, dict[str, Any] | None]:
    scale = load(newest(results, "scale-2*.json"))
    if scale:
        scale["_results"] = str(results)
    return {
        "locomo": load(newest(results, "locomo-*.json")),
        "scale": scale,
        "capture": load(newest(results, "capture-*.json")),
        "hook": load(results / "hook-latency.json"),
        "dsh": load(results / "dsh-roundtrip.json"),
        "dsh-1e4": load(results / "dsh-roundtrip-1e4.json"),
        "pg": load(newest(results, "pg-compare*.json") or newest(results, "pg_compare*.json")),
        "range": load(newest(results, "fts-session-range-*.json")),
        "realscale": load(newest(results, "realscale-2*.json")),
    }


# --------------------------------------------------------------------------- plots


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "figure.dpi": 110,
            "font.size": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
        }
    )
    return plt


def plot_recall_at_k(locomo: dict[str, Any], out: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ks = [int(k) for k in KS]
    series: list[tuple[str, list[float], str]] = []
    for name, figures in locomo["published"].items():
        series.append((name, [figures[k] for k in KS], "--"))
    for name in ("convmem", "bm25"):
        system = locomo["systems"].get(name)
        if system:
            overall = system["recall_at_k"]["overall"]
            series.append((name, [overall[k] for k in KS], "-"))
    for name, values, style in series:
        color = COLORS.get(name)
        ax.plot(ks, values, style, marker="o", label=name, color=color, linewidth=2)
        for k, v in zip(ks, values, strict=True):
            ax.annotate(
                f"{v:.1f}",
                (k, v),
                textcoords="offset points",
                xytext=(0, 6 if name == "convmem" else -13),
                ha="center",
                fontsize=8,
                color=color,
            )
    ax.set_xscale("log")
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.minorticks_off()
    ax.set_xlabel("k (turns retrieved)")
    ax.set_ylabel("R@k, percent of evidence turns in the top k")
    ax.set_ylim(30, 100)
    q = locomo["data"]["questions"]
    ax.set_title(f"LoCoMo retrieval recall ({q:,} questions, unit = one turn)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def plot_block_recall(locomo: dict[str, Any], out: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    budgets = [int(b) for b in BUDGETS]
    for name in ("convmem", "bm25"):
        system = locomo["systems"].get(name, {})
        block = system.get("block_recall_at_budget_tokens")
        if not block:
            continue
        values = [block["overall"][b] for b in BUDGETS]
        color = COLORS.get(name)
        ax.plot(budgets, values, marker="o", label=name, color=color, linewidth=2)
        for b, v in zip(budgets, values, strict=True):
            ax.annotate(
                f"{v:.1f}",
                (b, v),
                textcoords="offset points",
                xytext=(0, 6 if name == "convmem" else -13),
                ha="center",
                fontsize=8,
                color=color,
            )
    ax.axhline(90, color="grey", linestyle=":", linewidth=1)
    ax.annotate("target at 3,000 tokens: 90%", (150, 91.5), fontsize=8, color="grey")
    ax.set_xscale("log")
    ax.set_xticks(budgets, [f"{b:,}" for b in budgets])
    ax.minorticks_off()
    ax.set_ylim(-3, 100)
    ax.set_xlabel("block budget (estimated tokens)")
    ax.set_ylabel("evidence turns quoted in the block, percent")
    ax.set_title("LoCoMo: evidence recall inside the assembled block")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def plot_latency(scale: dict[str, Any], out: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    rows = scale["sizes"]
    xs = [r["events"] for r in rows]

    def line(key: str, label: str, color: str, style: str, marker: str) -> None:
        ax.plot(
            xs,
            [r["prestep"][key] for r in rows],
            style,
            marker=marker,
            color=color,
            label=label,
            linewidth=2 if style == "-" else 1.5,
        )

    line("prestep_p50_ms", "convmem pre-step p50", COLORS["convmem"], "-", "o")
    line("prestep_p99_ms", "convmem pre-step p99", COLORS["convmem"], "--", "^")
    line("bare_p50_ms", "bare FTS5 MATCH p50", "#7f7f7f", "-", "s")
    line("bare_p99_ms", "bare FTS5 MATCH p99", "#7f7f7f", "--", "v")
    for r in rows:
        p = r["prestep"]
        for key, dy in (("prestep_p50_ms", -12), ("prestep_p99_ms", 6)):
            ax.annotate(
                f"{p[key]:,.0f}" if p[key] >= 100 else f"{p[key]:.3g}",
                (r["events"], p[key]),
                textcoords="offset points",
                xytext=(6, dy),
                fontsize=8,
                color=COLORS["convmem"],
            )
    if 100_000 in xs or (xs and min(xs) <= 100_000 <= max(xs)):
        ax.plot([100_000], [5.0], marker="*", markersize=12, color="#d62728", linestyle="none")
        ax.annotate(
            "target: p50 ≤ 5 ms at 1e5",
            (100_000, 5.0),
            textcoords="offset points",
            xytext=(8, -14),
            ha="left",
            fontsize=8,
            color="#d62728",
        )
    first = rows[0]["prestep"]["prestep_p50_ms"]
    ref = [first * 2 ** (i) for i in range(len(xs))]
    ax.plot(xs, ref, ":", color="#d62728", linewidth=1, label="2× per 10× events (target slope)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("events in the store")
    ax.set_ylabel("latency per query, ms")
    ax.set_title("Pre-step latency (retrieve + assemble) vs store size")
    ax.set_xlim(min(xs) / 2, max(xs) * 2.5)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def plot_realscale(doc: dict[str, Any], out: Path) -> None:
    """Two panels, log axes: capture + extraction rate vs session size (bare insert
    beside it), and pre-step latency vs events (alone, with nine other sessions, and
    the bare FTS5 query)."""
    plt = _pyplot()
    fig, (rate, lat) = plt.subplots(1, 2, figsize=(10.5, 4.6))
    rows = doc["sizes"]
    xs = [r["build"]["events"] for r in rows]
    rate.plot(xs, [r["build"]["bare_events_per_s"] for r in rows], "-s", color="#7f7f7f",
              label="bare executemany")  # fmt: skip
    rate.plot(xs, [r["build"]["convmem_events_per_s"] for r in rows], "-o",
              color=COLORS["convmem"], label="convmem capture + extraction")  # fmt: skip
    rate.plot(xs, [r["build"]["last_tenth_events_per_s"] for r in rows], ":^",
              color=COLORS["convmem"], label="convmem, last tenth of the session")  # fmt: skip
    rate.set_title("Capture + extraction rate vs session size")
    rate.set_ylabel("events per second")
    for key, style, label in (
        ("p50_ms", "-o", "convmem pre-step p50"),
        ("p99_ms", "--^", "convmem pre-step p99"),
    ):
        lat.plot(xs, [r["prestep"][key] for r in rows], style, color=COLORS["convmem"], label=label)
    lat.plot(xs, [r["with_others"]["p50_ms"] for r in rows], "-D", color="#9467bd",
             label="convmem p50, 9 other sessions in the store")  # fmt: skip
    lat.plot(xs, [r["prestep"]["bare_p50_ms"] for r in rows], "-s", color="#7f7f7f",
             label="bare FTS5 query p50, trigram")  # fmt: skip
    if all("bare_words_p50_ms" in r["prestep"] for r in rows):
        lat.plot(xs, [r["prestep"]["bare_words_p50_ms"] for r in rows], "--s", color="#7f7f7f",
                 label="bare FTS5 query p50, words")  # fmt: skip
    lat.axhline(20.0, color="#d62728", linestyle=":", linewidth=1, label="target p50 ≤ 20 ms")
    lat.set_title("Pre-step latency vs events in the session")
    lat.set_ylabel("ms per pre-step")
    for ax in (rate, lat):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("events in the session")
        ax.set_xlim(min(xs) / 2, max(xs) * 2)
        ax.legend(fontsize=8, frameon=False, loc="best")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


# --------------------------------------------------------------------------- tables


def table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "") -> str:
    """A Markdown table; ``align`` has one letter per column (l or r, default r but first)."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" if a == "l" else "---:" for a in align) + " |",
    ]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def source(doc: dict[str, Any]) -> str:
    return f"\n\n<sub>from `bench/results/{doc['_file']}`</sub>"


def fmt_events(n: int) -> str:
    for exp in range(0, 10):
        if 10**exp == n:
            return f"1e{exp}"
    return f"{n:,}"


def sec_machine(res: dict[str, dict[str, Any] | None]) -> str | None:
    scale = res["scale"]
    if not scale:
        return None
    m = scale["machine"]
    rows = [
        ("CPU", f"{m.get('cpu', '?')}, {m['cpu_count']} cores"),
        ("RAM", f"{m.get('ram_gib', '?')} GiB"),
        ("OS", m["platform"]),
        ("Python", m["python"]),
        ("SQLite", m["sqlite"]),
    ]
    src = scale.get("source_at_start", {})
    if src:
        rows.append(
            (
                "convmem source",
                f"commit {src.get('commit')} + {src.get('src_uncommitted_files', 0)} uncommitted"
                f" files under src/ (digest {src.get('src_sha256')})",
            )
        )
    return table(("", ""), rows, "ll") + source(scale)


def sec_locomo_overall(res: dict[str, dict[str, Any] | None]) -> str | None:
    lo = res["locomo"]
    if not lo:
        return None
    rows: list[Sequence[Any]] = []
    for name, figures in lo["published"].items():
        rows.append((name, *(f"{figures[k]:.1f}" for k in KS), "—"))
    for name, system in lo["systems"].items():
        overall = system["recall_at_k"]["overall"]
        wall = system.get("wall_time_s", {})
        label = f"**{name}**" if name == "convmem" else name
        seconds = wall.get("index", 0) + wall.get("rank", 0)
        rows.append((label, *(f"{overall[k]:.1f}" for k in KS), f"{seconds:.1f}"))
    d = lo["data"]
    head = (
        f"{d['conversations']} conversations, {d['turns']:,} turns, {d['questions']:,} questions;"
        " percent.\n\n"
    )
    return (
        head + table(("system", "R@5", "R@10", "R@25", "R@50", "index + rank s"), rows) + source(lo)
    )


def sec_locomo_category(res: dict[str, dict[str, Any] | None]) -> str | None:
    lo = res["locomo"]
    if not lo:
        return None
    names = [n for n in ("convmem", "bm25") if n in lo["systems"]]
    cats = lo["data"]["questions_per_category"]
    rows = []
    for cat, count in cats.items():
        for name in names:
            per = lo["systems"][name]["recall_at_k"]["per_category"].get(cat)
            if per:
                rows.append((f"{cat} ({count})", name, *(f"{per[k]:.1f}" for k in KS)))
    return table(("category (questions)", "system", "R@5", "R@10", "R@25", "R@50"), rows, "llrrrr")


def sec_locomo_block(res: dict[str, dict[str, Any] | None]) -> str | None:
    lo = res["locomo"]
    if not lo:
        return None
    rows: list[Sequence[Any]] = []
    for name, system in lo["systems"].items():
        block = system.get("block_recall_at_budget_tokens")
        if block:
            rows.append((name, *(f"{block['overall'][b]:.1f}" for b in BUDGETS)))
    out = table(("system", *(f"{int(b):,} tok" for b in BUDGETS)), rows)
    conv = lo["systems"].get("convmem", {}).get("block_recall_at_budget_tokens")
    if conv:
        cat_rows = [
            (cat, *(f"{per[b]:.1f}" for b in BUDGETS)) for cat, per in conv["per_category"].items()
        ]
        out += "\n\nconvmem per category:\n\n" + table(
            ("category", *(f"{int(b):,} tok" for b in BUDGETS)), cat_rows
        )
    return out + source(lo)


def sec_capture(res: dict[str, dict[str, Any] | None]) -> str | None:
    cap = res["capture"]
    if not cap:
        return None
    rows = [
        (name, f"{r['events_per_s']:,}", f"{r['ratio']:.2f}") for name, r in cap["results"].items()
    ]
    head = (
        f"{cap['events']:,} events of `synth.synthetic_events` (4 sessions),"
        " `bench/capture.py`.\n\n"
    )
    return head + table(("path", "events/s", "ratio to bare"), rows) + source(cap)


def sec_scale_capture(res: dict[str, dict[str, Any] | None]) -> str | None:
    sc = res["scale"]
    if not sc:
        return None
    rows = []
    for r in sc["sizes"]:
        b = r["build"]
        rows.append(
            (
                fmt_events(r["events"]),
                b["sessions"],
                f"{b['bare_events_per_s']:,}",
                f"{b['capture_events_per_s']:,}",
                f"{b['capture_ratio']:.2f}",
                f"{r['bytes_per_event']:,.0f}",
                f"{b['text_bytes_per_event']:,.0f}",
                f"{b['maxrss_mib']:,.0f}",
            )
        )
    header = (
        "events",
        "sessions",
        "bare executemany ev/s",
        "convmem capture ev/s",
        "ratio",
        "DB bytes/event",
        "text bytes/event",
        "peak RSS MiB",
    )
    return table(header, rows) + source(sc)


def sec_scale_prestep(res: dict[str, dict[str, Any] | None]) -> str | None:
    sc = res["scale"]
    if not sc:
        return None
    by = {r["events"]: r["prestep"] for r in sc["sizes"]}
    rows = []
    for r in sc["sizes"]:
        p = r["prestep"]
        below = by.get(r["events"] // 10)
        growth = f"{p['prestep_p50_ms'] / below['prestep_p50_ms']:.2f}×" if below else "—"
        queries = str(p["queries"])
        if p["queries"] < p["queries_planned"]:
            queries += f" of {p['queries_planned']} (time cap)"
        rows.append(
            (
                fmt_events(r["events"]),
                queries,
                f"{p['prestep_p50_ms']:.2f}",
                f"{p['prestep_p99_ms']:.1f}",
                f"{p['bare_p50_ms']:.3f}",
                f"{p['bare_p99_ms']:.2f}",
                f"{p['p50_ratio_to_bare']:.1f}×",
                growth,
                f"{p['maxrss_mib']:,.0f}",
            )
        )
    header = (
        "events",
        "queries",
        "pre-step p50 ms",
        "p99 ms",
        "bare FTS5 p50 ms",
        "bare p99 ms",
        "p50 / bare",
        "p50 vs 10× fewer events",
        "peak RSS MiB",
    )
    out = table(header, rows)
    items = [r for r in sc["sizes"] if "extract" in r]
    if items:
        item_rows = []
        for r in items:
            x, p = r["extract"], r["prestep_with_items"]
            item_rows.append(
                (
                    fmt_events(r["events"]),
                    f"{x['memory_items']:,}",
                    f"{x['extract_events_per_s']:,}",
                    f"{x['extract_s']:.1f}",
                    f"{p['prestep_p50_ms']:.2f}",
                    f"{p['prestep_p99_ms']:.1f}",
                    f"{p['p50_ratio_to_bare']:.1f}×",
                )
            )
        out += (
            "\n\nAfter extraction (memory items present; only sizes up to `--extract-max`):\n\n"
            + table(
                (
                    "events",
                    "memory items",
                    "extraction ev/s",
                    "extraction s",
                    "pre-step p50 ms",
                    "p99 ms",
                    "p50 / bare",
                ),
                item_rows,
            )
        )
    return out + source(sc)


def sec_targets(res: dict[str, dict[str, Any] | None]) -> str | None:
    lo, sc = res["locomo"], res["scale"]
    rows: list[Sequence[Any]] = []
    word = {True: "met", False: "**missed**", None: "not measured"}
    if lo and "convmem" in lo["systems"]:
        conv = lo["systems"]["convmem"]["recall_at_k"]["overall"]
        bm = lo["systems"].get("bm25", {}).get("recall_at_k", {}).get("overall")
        dragon = next(iter(lo["published"].values()))
        if bm:
            ok = all(conv[k] > bm[k] for k in KS)
            rows.append(("R@k above BM25 at every k", _ks(conv) + " vs " + _ks(bm), word[ok]))
        ok = all(conv[k] > dragon[k] for k in KS)
        rows.append(("R@k above DRAGON at every k", _ks(conv) + " vs " + _ks(dragon), word[ok]))
        want = {"5": 62, "10": 72, "25": 81, "50": 87}
        ok = all(conv[k] >= want[k] for k in KS)
        rows.append(("R@5/10/25/50 ≥ 62/72/81/87", _ks(conv), word[ok]))
        block = lo["systems"]["convmem"].get("block_recall_at_budget_tokens")
        if block:
            v = block["overall"]["3000"]
            rows.append(("block evidence recall at 3,000 tokens ≥ 90%", f"{v:.1f}%", word[v >= 90]))
            bm_block = lo["systems"].get("bm25", {}).get("block_recall_at_budget_tokens")
            for budget in ("750", "1500"):
                if bm_block:
                    mine, theirs = block["overall"][budget], bm_block["overall"][budget]
                    rows.append(
                        (
                            f"block evidence recall at {int(budget):,} tokens ≥ BM25's",
                            f"{mine:.1f}% vs {theirs:.1f}%",
                            word[mine >= theirs],
                        )
                    )
        project = lo["systems"].get("convmem-project")
        if project:
            other = project["recall_at_k"]["overall"]
            gaps = [conv[k] - other[k] for k in KS]
            pb = project.get("block_recall_at_budget_tokens")
            if block and pb:
                gaps.append(block["overall"]["3000"] - pb["overall"]["3000"])
            rows.append(
                (
                    "across sessions within 3 points of one session (R@k, block at 3,000)",
                    _ks(other)
                    + (f", {pb['overall']['3000']:.1f}%" if pb else "")
                    + f" (largest gap {max(gaps):.1f})",
                    word[max(gaps) <= 3],
                )
            )
    rows += _realscale_targets(res, word)
    if sc:
        t = sc["targets"]
        a, b, c = (
            t["p50_le_5ms_at_1e5"],
            t["p50_within_5x_bare_at_1e5"],
            t["p50_growth_per_10x_le_2"],
        )
        value = "—" if a["value_ms"] is None else f"{a['value_ms']:.2f} ms"
        synthetic = "templated short messages (an earlier target):"
        rows.append((f"{synthetic} pre-step p50 ≤ 5 ms at 1e5 events", value, word[a["met"]]))
        rows.append(
            (f"{synthetic} pre-step p50 within 5× bare FTS5 at 1e5", f"{b['value']}×",
             word[b["met"]])
        )  # fmt: skip
        growth = ", ".join(f"{k.replace('->', ' → ')}: {v}×" for k, v in c["values"].items())
        rows.append((f"{synthetic} 10× more events costs ≤ 2× p50", growth, word[c["met"]]))
    hook = res["hook"]
    if hook and "target_ratio" in hook:
        target = hook["target_ratio"]
        for key, value in hook.items():
            if key.startswith("ratio_") and isinstance(value, (int, float)):
                what = key.removeprefix("ratio_").replace("ups", "UserPromptSubmit", 1)
                what = what.replace("_to_bare_python", "").replace("_", " ")
                rows.append(
                    (
                        f"Claude Code hook {what} ≤ {target:g}× bare `python -c pass`",
                        f"{value}×",
                        word[value <= target],
                    )
                )
    if not rows:
        return None
    return table(("target", "measured", "status"), rows, "lll")


def _realscale_targets(
    res: dict[str, dict[str, Any] | None], word: dict[bool | None, str]
) -> list[Sequence[Any]]:
    """The long-session targets: real text (``realscale``) and DSH at 1e4 events."""
    rows: list[Sequence[Any]] = []
    doc = res["realscale"]
    if doc:
        from realscale import checks, met

        for what, value, target, most in checks(doc["sizes"]):
            events, _, check = what.replace(" -> ", " → ").partition(": ")
            sign = "≤" if most else "≥"
            rows.append(
                (f"real text, {events} events: {check} {sign} {target:g}", f"{value:.2f}",
                 word[met(value, target, most)])
            )  # fmt: skip
    dsh = res["dsh-1e4"]
    if dsh:
        p50 = dsh["round_trip_ms"]["median"]
        rows.append(
            (f"DSH pre-step round trip p50 ≤ 5 ms at {dsh['events']:,} events", f"{p50:.2f} ms",
             word[p50 <= 5])
        )  # fmt: skip
    return rows


def _ks(figures: dict[str, float]) -> str:
    return "/".join(f"{figures[k]:.1f}" for k in KS)


def _scalar(v: Any) -> bool:
    return isinstance(v, (int, float, str, bool)) or v is None


def render_generic(doc: dict[str, Any]) -> str:
    """Any result document: its scalar fields, then one table per dict of stats."""
    skip = {"_file", "_results", "benchmark", "date", "python", "platform"}
    scalars = [(k, v) for k, v in doc.items() if k not in skip and _scalar(v)]
    nested = {k: v for k, v in doc.items() if isinstance(v, dict) and k not in skip}
    parts = []
    if doc.get("benchmark"):
        parts.append(f"{doc['benchmark']} ({doc.get('date', '')})")
    if scalars:
        parts.append(table(("field", "value"), [(k, _fmt(v)) for k, v in scalars], "lr"))
    flat = {k: v for k, v in nested.items() if all(_scalar(x) for x in v.values())}
    rows_of_dicts = {
        k: v
        for k, v in nested.items()
        if v
        and all(isinstance(x, dict) and all(_scalar(y) for y in x.values()) for x in v.values())
    }
    if flat:
        cols = list(dict.fromkeys(c for v in flat.values() for c in v))
        parts.append(
            table(
                ("", *cols),
                [(k, *(_fmt(v.get(c, "")) for c in cols)) for k, v in flat.items()],
            )
        )
    for name, rows in rows_of_dicts.items():
        cols = list(dict.fromkeys(c for v in rows.values() for c in v))
        parts.append(
            f"{name}:\n\n"
            + table(
                ("", *cols), [(k, *(_fmt(v.get(c, "")) for c in cols)) for k, v in rows.items()]
            )
        )
    return "\n\n".join(parts) + source(doc)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) < 100 else f"{v:,.1f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def _profile_excerpt(path: Path, lines: int = 16) -> str:
    """The header and the top rows of the cumulative listing of a cProfile dump."""
    text = path.read_text("utf-8").splitlines()
    start = next((i for i, line in enumerate(text) if "function calls" in line), 0)
    head = next((i for i, line in enumerate(text) if line.strip().startswith("ncalls")), start)
    picked = [text[start].strip(), "", *text[head : head + lines]]
    return "```text\n" + "\n".join(picked) + "\n```"


def sec_scale_profile(res: dict[str, dict[str, Any] | None]) -> str | None:
    results = Path(res["scale"]["_results"]) if res["scale"] else None
    if results is None:
        return None
    parts = []
    for path in sorted(results.glob("scale-profile-1e*.txt")):
        parts.append(f"pre-step, `bench/results/{path.name}`:\n\n" + _profile_excerpt(path))
    for path in sorted(results.glob("scale-profile-extract-*.txt")):
        parts.append(f"extraction, `bench/results/{path.name}`:\n\n" + _profile_excerpt(path))
    return "\n\n".join(parts) or None


def _vs_bare(prestep: dict[str, Any], key: str) -> str:
    """The pre-step p50 as a multiple of a bare query's (— when the run has none)."""
    bare = prestep.get(key)
    if bare is None:
        return "—"
    return f"{prestep['p50_ms'] / max(bare, 1e-9):.1f}× ({bare:.1f} ms)"


def sec_realscale(res: dict[str, dict[str, Any] | None]) -> str | None:
    doc = res["realscale"]
    if not doc:
        return None
    from realscale import others_factor, verdicts

    rows = []
    for r in doc["sizes"]:
        b, q = r["build"], r["prestep"]
        rows.append(
            (
                f"{b['events']:,}",
                f"{b['ratio_to_bare']:.3f}× ({b['convmem_events_per_s']:,} vs"
                f" {b['bare_events_per_s']:,} ev/s)",
                f"{b['last_vs_first']:.2f}×",
                f"{b['memory_items']:,}",
                f"{q['p50_ms']:.1f} / {q['p99_ms']:.1f} ms",
                _vs_bare(q, "bare_words_p50_ms"),
                _vs_bare(q, "bare_p50_ms"),
                f"{others_factor(r):.2f}×",
            )
        )
    head = (
        "events", "capture + extraction / bare", "last tenth / first", "items",
        "pre-step p50 / p99", "p50 / bare FTS5, words", "p50 / bare FTS5, trigram",
        "with 9 other sessions",
    )  # fmt: skip
    lines = [line.strip() for line in verdicts(doc["sizes"])[2:]]
    return (
        table(head, rows, "r" * len(head))
        + "\n\nAgainst the targets of the issue, as the benchmark prints them:\n\n"
        + "\n".join(f"- `{line}`" for line in lines)
        + "\n\n![rate and latency vs session size](realscale.png)"
        + source(doc)
    )


def sec_hook(res: dict[str, dict[str, Any] | None]) -> str | None:
    return render_generic(res["hook"]) if res["hook"] else None


def sec_dsh(res: dict[str, dict[str, Any] | None]) -> str | None:
    return render_generic(res["dsh"]) if res["dsh"] else None


def sec_pg(res: dict[str, dict[str, Any] | None]) -> str | None:
    pg = res["pg"]
    if not pg:
        return None
    results = pg.get("results")
    if not isinstance(results, list) or not results:
        return render_generic(pg)
    metrics = list(dict.fromkeys(k for r in results for k in r.get("sqlite", {})))
    rows = []
    for key in metrics:
        for r in results:
            lite, other = r["sqlite"].get(key), r["postgresql"].get(key)
            ratio = f"{other / lite:.2f}" if lite and other is not None else "—"
            rows.append(
                (key.replace("_", " "), fmt_events(r["events"]), _fmt(lite), _fmt(other), ratio)
            )
    for r in results:
        if "identical_blocks" in r:
            rows.append(
                (
                    "identical pre-step blocks",
                    fmt_events(r["events"]),
                    f"{r['identical_blocks']} / {r.get('pre_step_queries', '?')}",
                    "",
                    "",
                )
            )
    m = pg.get("machine", {})
    head = f"{m.get('postgresql', 'PostgreSQL')} beside SQLite {m.get('sqlite', '')}.\n\n"
    out = table(("metric", "events", "SQLite", "PostgreSQL", "PG / SQLite"), rows, "llrrr")
    return head + out + source(pg)


def sec_fts_range(res: dict[str, dict[str, Any] | None]) -> str | None:
    doc = res["range"]
    if not doc:
        return None
    rows = []
    for r in doc["sizes"]:
        live, glob, ranged = r["live"], r["global"], r["session range"]
        rows.append(
            (
                fmt_events(r["events"]),
                r["sessions"],
                r["queries"],
                f"{live['p50_ms']:.2f} / {live['p99_ms']:.1f}",
                f"{glob['p50_ms']:.2f} / {glob['p99_ms']:.1f}",
                f"{ranged['p50_ms']:.2f} / {ranged['p99_ms']:.1f}",
                f"{glob['p50_ms'] / ranged['p50_ms']:.1f}×",
            )
        )
    header = (
        "events",
        "sessions",
        "queries",
        "live `events_fts` p50 / p99 ms",
        "fresh global p50 / p99 ms",
        "session rowid range p50 / p99 ms",
        "global / range p50",
    )
    return table(header, rows) + source(doc)


SECTIONS: dict[str, Callable[[dict[str, dict[str, Any] | None]], str | None]] = {
    "machine": sec_machine,
    "targets": sec_targets,
    "locomo-overall": sec_locomo_overall,
    "locomo-category": sec_locomo_category,
    "locomo-block": sec_locomo_block,
    "capture": sec_capture,
    "scale-capture": sec_scale_capture,
    "scale-prestep": sec_scale_prestep,
    "scale-profile": sec_scale_profile,
    "fts-session-range": sec_fts_range,
    "realscale": sec_realscale,
    "hook-latency": sec_hook,
    "dsh-roundtrip": sec_dsh,
    "pg-compare": sec_pg,
}


def fill(markdown: str, res: dict[str, dict[str, Any] | None]) -> str:
    """Replace each generated section's body with the table built from the results."""

    def body(match: re.Match[str]) -> str:
        name = match.group("name")
        make = SECTIONS.get(name)
        text = make(res) if make else None
        if text is None:
            text = "_No results yet: run `bash bench/run_all.sh`._"
        return match.group(1) + "\n" + text.rstrip() + "\n\n" + match.group(4)

    return MARKER.sub(body, markdown)


# --------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=HERE / "results")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args(argv)
    res = load_all(args.results)
    args.docs.mkdir(parents=True, exist_ok=True)
    if not args.no_plots:
        if res["locomo"]:
            plot_recall_at_k(res["locomo"], args.docs / "locomo-recall-at-k.png")
            plot_block_recall(res["locomo"], args.docs / "locomo-block-recall.png")
        if res["scale"]:
            plot_latency(res["scale"], args.docs / "scale-latency.png")
        if res["realscale"]:
            plot_realscale(res["realscale"], args.docs / "realscale.png")
    md = args.docs / "benchmarks.md"
    if md.exists():
        before = md.read_text("utf-8")
        after = fill(before, res)
        md.write_text(after, "utf-8")
        print(f"{md}: {len(MARKER.findall(after))} generated sections")
    used = {k: v["_file"] for k, v in res.items() if v}
    print("results used:", json.dumps(used))
    return 0


if __name__ == "__main__":
    sys.exit(main())
