"""Pile-up of memory blocks in real hosts: 40 scripted turns with Claude Code and with DSH.

Each host runs a scripted 40-turn session against the local stand-in model
(``tests/e2e/fake_model.py``), with convmem installed the supported way: constraints and
numbers early, tool calls, long pasted logs, a correction, compactions (``/compact`` twice
in Claude Code; automatic ones in DSH, from the token counts the stand-in reports). The
request bodies the stand-in receives are the ground truth of what the model saw; from
each main request this measures:

* **injected**: the convmem text that is new in this request (blocks the previous request
  did not carry), in UTF-16 units, and whether a host shortened a block to a preview;
* **line repeats**: how many times each memory line (a ``- …`` line of a convmem block) is
  present in the request; the target is at most once;
* **share**: convmem's blocks as a part of all message text in the request (system prompt
  and tool definitions left out, so the share is the larger figure); the target is 15%;
* **compactions** (DSH): the same session run without convmem beside it; the target is
  no more than one extra.

Usage::

    python bench/host_pileup.py --out bench/results            # both hosts
    python bench/host_pileup.py --hosts dsh --turns 40

Needs the hosts that ``.ci/install-hosts.sh`` installs. Writes ``host-pileup.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from fake_model import FakeModel, Reply, Request  # noqa: E402
from hosts import claude_env, dsh_env, find_claude_code, find_dsh  # noqa: E402

MARKER = "[convmem memory]"
CONVMEM = [sys.executable, "-m", "convmem"]
TARGET_SHARE = 0.15
PREVIEW = "<persisted-output>"


# --------------------------------------------------------------------------- the session
@dataclass(frozen=True)
class Turn:
    prompt: str
    command: str | None = None  # the stand-in answers with one shell tool call running it
    compact: bool = False  # Claude Code: `/compact`; DSH compacts by itself, under pressure


def _log(kind: str, n: int) -> str:
    lines = [
        f"2026-11-0{1 + n % 8}T10:{i:02d}:13.{i * 7 % 1000:03d}Z {kind} worker-{i % 4} "
        f"request id=req-{n}-{i} status={500 if i % 9 == 0 else 200} latency_ms={80 + i * 13 % 400}"
        f" path=/orders/{1000 + i} retries={i % 3}"
        for i in range(28)
    ]
    text = "\n".join(lines)
    return text if PLAIN_LOGS else f"```\n{text}\n```"


#: Pasted logs inside a code fence, as chat clients paste them (``--plain-logs``: bare).
PLAIN_LOGS = False


def _cmd(first: str) -> str:
    """A shell command printing ``first`` and forty more lines, as real commands do."""
    return f"echo '{first}'; seq -f 'output line %g: ok, nothing unusual here' 1 40"


def session_script(turns: int = 40) -> list[Turn]:
    """The scripted conversation (same for both hosts)."""
    script = [
        Turn(
            "We are building orders-api. The token budget must stay under 3000 tokens at peak "
            "load. The p95 latency must stay under 200 ms at 1k rps."
        ),
        Turn("We decided to use PostgreSQL 16 for storage and FastAPI for the HTTP layer."),
        Turn("Never touch the production database directly; use the migration scripts."),
        Turn("Run the unit tests please.", command=_cmd("collected 42 items; 42 passed")),
        Turn("Here is the crash log from staging:\n" + _log("ERROR", 1)),
        Turn("What do you make of that log?"),
        Turn("Check the disk usage.", command=_cmd("/dev/sda1 71% used")),
        Turn("The importer batch size is 500 rows."),
        Turn("Another log, from the load test:\n" + _log("WARN", 2)),
        Turn("The retry limit for the payment client is 5 attempts."),
        Turn("Let us go on with the API design for the list endpoint."),
        Turn("List the migration files.", command=_cmd("001_init.sql 002_orders.sql")),
        Turn("Pagination uses cursors, never offsets."),
        Turn("One more log from the canary:\n" + _log("ERROR", 3)),
        Turn("/compact", compact=True),
        Turn("What was the token budget again?"),
        Turn("Show the git status.", command=_cmd("On branch main; nothing to commit")),
        Turn("How should the importer handle duplicates?"),
        Turn("Here is the importer output:\n" + _log("INFO", 4)),
        Turn("Actually, make the token budget 2000 tokens, not 3000."),
        Turn("What is the token budget now?"),
        Turn("Run the linter.", command=_cmd("ruff: all checks passed")),
        Turn("The cache TTL is 300 seconds."),
        Turn("And the nightly job log:\n" + _log("WARN", 5)),
        Turn("What is the latency target?"),
        Turn("Let us write the retry wrapper next."),
        Turn("Run the tests again.", command=_cmd("collected 44 items; 44 passed")),
        Turn("Another crash log:\n" + _log("ERROR", 6)),
        Turn("Which database did we choose?"),
        Turn("/compact", compact=True),
        Turn("Remind me of the constraints we agreed on."),
        Turn("What is the importer batch size?"),
        Turn("Check the service health.", command=_cmd("orders-api healthy")),
        Turn("The staging log after the fix:\n" + _log("INFO", 7)),
        Turn("How many retries does the payment client make?"),
        Turn("What is the cache TTL?"),
        Turn("Run the full suite.", command=_cmd("collected 51 items; 51 passed")),
        Turn("Summarise the open work for tomorrow."),
        Turn("What is the token budget?"),
        Turn("Thanks, that is all for today."),
    ]
    return script[:turns]


# --------------------------------------------------------------------------- measuring
def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            out.extend(_texts(block.get("content")))
        elif block.get("type") == "tool_use":
            out.append(json.dumps(block.get("input", {}), ensure_ascii=False))
    return out


def message_texts(body: dict[str, Any]) -> list[str]:
    return [t for m in body.get("messages", []) for t in _texts(m.get("content"))]


def blocks_in(texts: list[str]) -> list[str]:
    """convmem's blocks: from the marker to the end of the text (or a closing tag)."""
    found = []
    for text in texts:
        at = text.find(MARKER)
        while at >= 0:
            end = text.find("</system-reminder>", at)
            nxt = text.find(MARKER, at + 1)
            stop = min(x for x in (end, nxt, len(text)) if x >= 0)
            found.append(text[at:stop].rstrip())
            at = nxt
    return found


def units(text: str) -> int:
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def memory_lines(block: str) -> list[str]:
    return [" ".join(line.split()) for line in block.splitlines() if line.lstrip().startswith("- ")]


#: What the session states early and later needs: how often each is in front of the model
#: (anywhere in the request) in the requests after the first compaction.
KEY_FACTS = ("200 ms", "PostgreSQL 16", "500 rows", "production database")


def measure(requests: list[Request]) -> dict[str, Any]:
    steps = []
    compacted = False
    recall: Counter[str] = Counter()
    after = 0
    previous: Counter[str] = Counter()
    for req in requests:
        texts = message_texts(req.body)
        blocks = blocks_in(texts)
        current = Counter(blocks)
        new = list((current - previous).elements())
        previous = current
        lines = Counter(line for block in blocks for line in memory_lines(block))
        everything = "\n".join(texts)
        compacted = compacted or "The conversation covered" in everything
        if compacted:
            after += 1
            recall.update(fact for fact in KEY_FACTS if fact in everything)
        total = sum(len(t) for t in texts)
        system = sum(len(t) for t in _texts(req.body.get("system")))
        ours = sum(len(b) for b in blocks)
        tools = len(json.dumps(req.body.get("tools") or [], ensure_ascii=False))
        steps.append(
            {
                "request": req.seq,
                "message_chars": total,
                "convmem_chars": ours,
                "share": round(ours / total, 4) if total else 0.0,
                "system_chars": system,
                "tools_chars": tools,
                "request_share": round(ours / (total + system + tools), 4),
                "blocks": len(blocks),
                "injected_units": sum(units(b) for b in new),
                "max_line_count": max(lines.values(), default=0),
                "repeated_lines": sum(c - 1 for c in lines.values() if c > 1),
                "memory_lines": sum(lines.values()),
                "previews": sum(t.count(PREVIEW) for t in texts),
                "new_blocks": new,
            }
        )
    injected = [s["injected_units"] for s in steps if s["injected_units"]]
    return {
        "steps": steps,
        "requests": len(steps),
        "injections": len(injected),
        "injected_units_max": max(injected, default=0),
        "injected_units_median": sorted(injected)[len(injected) // 2] if injected else 0,
        "injected_units_total": sum(injected),
        "max_share": max((s["share"] for s in steps), default=0.0),
        "max_request_share": max((s["request_share"] for s in steps), default=0.0),
        "final_share": steps[-1]["share"] if steps else 0.0,
        "max_line_count": max((s["max_line_count"] for s in steps), default=0),
        "repeated_lines_total": sum(s["repeated_lines"] for s in steps),
        "previews": sum(s["previews"] for s in steps),
        "requests_after_compaction": after,
        "facts_present_after_compaction": {f: recall[f] for f in KEY_FACTS},
    }


#: What the stand-in answers a compaction with: as long as a real summary (a few thousand
#: characters), and, as happens, without the early constraints and numbers.
SUMMARY_TOPICS = (
    "the list endpoint and its query parameters",
    "the structure of the importer and how it reads its input files",
    "the staging crash and the worker restarts seen in the logs",
    "the retry wrapper around the payment client",
    "the layout of the migration folder and the naming of files",
    "the health check and how the service reports readiness",
    "the test suite, its fixtures and the flaky pagination test",
    "the nightly job and the warnings it printed",
)


def summary_text(limit: int = 100_000) -> str:
    parts = [
        f"{n}. The conversation covered {topic}; the assistant explained the options, "
        "the person asked follow-up questions, and the discussion moved on without a final "
        "word on every detail. Files were inspected with shell commands and the output was "
        "read together."
        for n, topic in enumerate(SUMMARY_TOPICS * 3, 1)
    ]
    body = "\n".join(parts)[: max(200, limit)]
    return f"<analysis>Scripted analysis.</analysis>\n<summary>{body}</summary>"


def compaction_reply(req: Request) -> Reply:
    """A summary a fifth the size of what it summarises, at most ~6,000 characters."""
    size = sum(len(t) for t in message_texts(req.body))
    return Reply(text=summary_text(min(6000, size // 5)), input_tokens=500)


#: The stand-in's ordinary answer: as long as a real one, and about nothing in particular.
REPLY = (
    "Understood. Here is how I would approach it: first look at the current state of the "
    "code and the recent output, then make the smallest change that addresses the point, "
    "and check it with the existing tests before moving on. "
) * 3


def stand_in(fm: FakeModel, long_reply_for: set[str]) -> None:
    """Tool calls for scripted commands, a long answer for DSH's compaction turns, and
    token counts that follow the request's size (they drive DSH's compaction)."""
    fm.side_replies["compact"] = compaction_reply

    def answer(req: Request) -> Reply:
        system = sum(len(t) for t in _texts(req.body.get("system")))
        tokens = math.ceil((sum(len(t) for t in message_texts(req.body)) + system) / 4)
        last = req.last_user_text
        if any(key in last for key in long_reply_for):
            return Reply(
                text="Report. " + "lorem ipsum dolor sit amet " * 1800, input_tokens=tokens
            )
        return Reply(text=REPLY, input_tokens=tokens)

    fm.default = answer


# --------------------------------------------------------------------------- Claude Code
def run_claude_code(script: list[Turn], work: Path) -> dict[str, Any]:
    claude, why = find_claude_code()
    if claude is None:
        raise SystemExit(f"Claude Code is not installed ({why}); run .ci/install-hosts.sh")
    home, project, store = work / "home", work / "project", work / "convmem"
    for folder in (home, project, store):
        folder.mkdir(parents=True)
    env_convmem = {**os.environ, "CONVMEM_HOME": str(store)}
    subprocess.run(
        [sys.executable, "-m", "convmem", "install", "claude-code", "--project", str(project)],
        env=env_convmem,
        check=True,
        capture_output=True,
    )
    commands = {t.prompt: t.command for t in script if t.command}
    with FakeModel() as fm:
        stand_in(fm, set())
        for prompt, command in commands.items():
            key = prompt
            fm.add_rule(
                lambda r, key=key: (
                    key in r.last_user_text
                    and "tool_result" not in json.dumps(r.body.get("messages", [])[-1:])
                ),
                Reply.tool("Bash", {"command": command, "description": "scripted"}),
                once=True,
            )
        env = claude_env(home, fm.base_url, CONVMEM_HOME=str(store))
        session = None
        seconds = []
        for turn in script:
            cmd = [str(claude), "-p", turn.prompt, "--output-format", "json"]
            cmd += ["--allowedTools", "Bash"]
            if session:
                cmd += ["--resume", session]
            started = time.perf_counter()
            proc = subprocess.run(
                cmd, cwd=project, env=env, capture_output=True, text=True, timeout=300
            )
            seconds.append(time.perf_counter() - started)
            if proc.returncode != 0:
                raise SystemExit(f"claude failed on {turn.prompt[:40]!r}: {proc.stderr[-1500:]}")
            session = session or json.loads(proc.stdout)["session_id"]
        requests = fm.main_requests()
        compactions = len(fm.of_kind("compact"))
    result = measure(requests)
    result.update(
        {"host": "claude-code", "turns": len(script), "compactions": compactions}
        | {"seconds_per_turn": round(sum(seconds) / len(seconds), 2)}
    )
    log = store / "convmem.log"
    result["convmem_log"] = log.read_text()[-2000:] if log.exists() else ""
    return result


# --------------------------------------------------------------------------- DSH
DSH_PATCH = """\
- id: llm-deepseek
  config: {maxTokens: 4096, models: [{id: deepseek-flash, contextWindow: 16000, maxTokens: 4096}]}
- id: compaction-basic
  config: {headroomTokens: 1000}
"""
DSH_DRIVER = r"""
import json, sys
from deepseek_harness import DeepSeekHarness

cfg = json.loads(sys.argv[1])
harness = DeepSeekHarness(
    profile=cfg["profile"], dsh_home=cfg["dsh_home"], cwd=cfg["project"],
    base_url=cfg["base_url"], api_key="fake-key", provider="deepseek-official",
    model="deepseek-flash", patches=tuple(cfg["patches"]),
)
session = None
with harness:
    for task in cfg["turns"]:
        result = harness.run(task, session_id=session) if session else harness.run(task)
        session = result.session_id
        types = [e.get("type") for e in result.events]
        print(json.dumps({"session_id": session, "compactions": types.count("compaction/summary")}),
              flush=True)
"""


def run_dsh(script: list[Turn], work: Path, with_convmem: bool) -> dict[str, Any]:
    dsh, why = find_dsh()
    if dsh is None:
        raise SystemExit(f"DSH is not installed ({why}); run .ci/install-hosts.sh")
    dsh_home, project, store = work / "dsh-home", work / "project", work / "convmem"
    for folder in (dsh_home, project, store):
        folder.mkdir(parents=True)
    # DSH compacts by itself when the context fills up (a small window, see DSH_PATCH):
    # where Claude Code gets `/compact`, DSH gets an ordinary turn
    tasks = ["Where are we? A short status, please." if t.compact else t.prompt for t in script]
    with FakeModel() as fm:
        stand_in(fm, set())
        for turn in script:
            if turn.command:
                key = turn.prompt
                fm.add_rule(
                    lambda r, key=key: (
                        key in r.last_user_text
                        and "tool-result" not in json.dumps(r.body.get("messages", [])[-1:])
                        and "tool_result" not in json.dumps(r.body.get("messages", [])[-1:])
                    ),
                    Reply.tool("bash", {"command": turn.command, "description": "scripted"}),
                    once=True,
                )
        env = dsh_env(dsh_home, fm.base_url, CONVMEM_HOME=str(store))
        profile = "bench"
        subprocess.run(
            [str(dsh.dsh), profile, "--from-default-profile", "sdk", "--dump-config"],
            env=env,
            cwd=project,
            check=True,
            capture_output=True,
        )
        if with_convmem:
            subprocess.run(
                [*CONVMEM, "--home", str(store), "install", "dsh", "--profile", profile],
                env=env,
                check=True,
                capture_output=True,
            )
        patch = work / "compact.yml"
        patch.write_text(DSH_PATCH, "utf-8")
        config = {
            "profile": profile,
            "dsh_home": str(dsh_home),
            "project": str(project),
            "base_url": fm.base_url,
            "patches": [str(patch)],
            "turns": tasks,
        }
        driver = work / "driver.py"
        driver.write_text(DSH_DRIVER, "utf-8")
        started = time.perf_counter()
        proc = subprocess.run(
            [str(dsh.python), str(driver), json.dumps(config)],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        elapsed = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"dsh failed: {proc.stderr[-2000:]}")
        lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
        requests = fm.main_requests()
        summaries = len(fm.of_kind("compact"))
    result = measure(requests)
    result.update(
        {
            "host": "dsh",
            "convmem": with_convmem,
            "turns": len(lines),
            "compactions": sum(x["compactions"] for x in lines),
            "compaction_requests": summaries,
            "seconds_per_turn": round(elapsed / max(1, len(lines)), 2),
        }
    )
    for name in ("convmem.log", "dsh-plugin.log"):
        log = store / name
        result[name] = log.read_text()[-2000:] if log.exists() else ""
    return result


# --------------------------------------------------------------------------- report
def verdict(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def report(results: dict[str, Any]) -> list[str]:
    out = []
    for name, r in results.items():
        if name == "dsh-without-convmem":
            continue
        out.append(
            f"{name}: {r['turns']} turns, {r['requests']} model requests, "
            f"{r['compactions']} compactions, {r['seconds_per_turn']} s a turn"
        )
        out.append(
            f"  injected: {r['injections']} requests carried new convmem text; per injection "
            f"median {r['injected_units_median']}, max {r['injected_units_max']} UTF-16 units "
            f"(total {r['injected_units_total']}); host previews: {r['previews']}"
        )
        out.append(
            f"  memory lines: max {r['max_line_count']} copies of one line in a request "
            f"({verdict(r['max_line_count'] <= 1)} 'at most once'); "
            f"{r['repeated_lines_total']} repeated line copies over all requests"
        )
        out.append(
            f"  convmem share of message text: max {r['max_share']:.1%}, last request "
            f"{r['final_share']:.1%} ({verdict(r['max_share'] <= TARGET_SHARE)} "
            f"the {TARGET_SHARE:.0%} target)"
        )
        facts = ", ".join(f"{f!r} {n}" for f, n in r["facts_present_after_compaction"].items())
        out.append(
            f"  after the first compaction, of {r['requests_after_compaction']} requests, "
            f"these early facts were in front of the model in: {facts}"
        )
    if "dsh" in results and "dsh-without-convmem" in results:
        with_, without = (
            results["dsh"]["compactions"],
            results["dsh-without-convmem"]["compactions"],
        )
        out.append(
            f"dsh compactions: {with_} with convmem, {without} without "
            f"({verdict(with_ <= without + 1)} 'no more than one extra')"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", default="claude-code,dsh")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--work", type=Path, help="keep the hosts' folders here (a new folder)")
    parser.add_argument(
        "--plain-logs", action="store_true", help="paste the logs without a code fence"
    )
    args = parser.parse_args(argv)
    global PLAIN_LOGS
    PLAIN_LOGS = args.plain_logs
    script = session_script(args.turns)
    hosts = [h.strip() for h in args.hosts.split(",") if h.strip()]
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="convmem-pileup-") as tmp:
        root = args.work or Path(tmp)
        if "claude-code" in hosts:
            results["claude-code"] = run_claude_code(script, root / "cc")
        if "dsh" in hosts:
            results["dsh"] = run_dsh(script, root / "dsh", with_convmem=True)
            results["dsh-without-convmem"] = run_dsh(script, root / "dsh0", with_convmem=False)
    lines = report(results)
    print("\n".join(lines))
    args.out.mkdir(parents=True, exist_ok=True)
    data = {"script_turns": len(script), "results": results, "summary": lines}
    (args.out / "host-pileup.json").write_text(json.dumps(data, indent=1) + "\n", "utf-8")
    ok = all(
        r["max_line_count"] <= 1 and r["max_share"] <= TARGET_SHARE and not r["previews"]
        for name, r in results.items()
        if name != "dsh-without-convmem"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
