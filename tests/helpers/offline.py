"""Every convmem command and the runtime API, in one process (for the no-network test).

    python offline.py HOME FIXTURES WORK

Runs each click command in-process (``CliRunner``), the Claude Code hook handler,
the DSH server loop and the runtime's host calls, including a validation script
check (a child process). Prints one JSON list: each call with its exit code and any
exception that is not a normal exit.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any


def main(home: str, fixtures_dir: str, work_dir: str) -> list[dict[str, Any]]:
    from click.testing import CliRunner

    from convmem.cli import main as cli

    fixtures, work = Path(fixtures_dir), Path(work_dir)
    runner = CliRunner()
    results: list[dict[str, Any]] = []

    def run(*args: str, stdin: str | None = None) -> str:
        result = runner.invoke(cli, ["--home", home, *args], input=stdin)
        error = result.exception
        results.append(
            {
                "call": list(args),
                "code": result.exit_code,
                "error": None if error is None or isinstance(error, SystemExit) else repr(error),
            }
        )
        return result.output

    config = work / "config.toml"
    config.write_text(
        '[validation]\nenabled = true\nchecks = [{type = "script", module = "'
        + str(fixtures / "validation" / "convmem_sample_check.py")
        + '", function = "check"}, {type = "forbidden_terms", terms = ["TODO"]}]\n'
        + 'preconditions = [{must_exist = "src/**", tools = ["Write"]}]\n',
        "utf-8",
    )
    run("config")
    run("config", "--list")
    run("ingest", str(fixtures / "en_basic.jsonl"))
    run("ingest", str(fixtures / "zh_basic.jsonl"))
    run("ingest", str(fixtures / "mixed_tools.jsonl"))
    for transcript in sorted((fixtures / "claude_code").glob("*.jsonl")):
        run("ingest", "--format", "claude-code", str(transcript))
    run("ingest", "--format", "dsh", str(fixtures / "dsh" / "session.v4.jsonl"))
    run("skills", "ingest", str(fixtures / "skills"))
    run("skills", "list")
    rules = json.loads(run("rules", "show", "--json") or "[]")
    if rules:
        run("rules", "override", rules[0]["id"], "--category", "preference")
        run("rules", "override", rules[0]["id"], "--clear")
    run("status")
    run("status", "--check", "--json")
    run("search", "latency budget")
    run("search", "--json", "数据库")
    run("assemble", "--session", "en1")
    run("assemble", "--session", "en1", "--json", "--query", "what about the index?")
    run("explain", "--session", "en1")
    items = json.loads(run("items", "--session", "en1", "--json") or "[]")
    if items:
        first = items[0]["id"]
        run("inspect", first)
        run("retract", first, "--reason", "test")
        run("reactivate", first)
        run("resolve", first)  # not disputed: a one-sentence refusal, exit 1
        run("promote", first, "--kind", "decision")
    run("export", "--session", "en1", "-o", str(work / "export.json"))
    run("purge", "--session", "zh1", "--yes")
    run("demo")
    project = work / "project"
    project.mkdir(exist_ok=True)
    run("install", "claude-code", "--project", str(project))
    run("install", "claude-code", "--project", str(project), "--uninstall")
    (work / "dsh" / "profiles" / "p").mkdir(parents=True, exist_ok=True)
    run("install", "dsh", "--profile", "p", "--dsh-home", str(work / "dsh"))
    run("install", "dsh", "--profile", "p", "--dsh-home", str(work / "dsh"), "--uninstall")
    run("migrate", "--from", str(Path(home) / "memory.sqlite"), "--to", str(work / "copy.sqlite"))

    # the hosts' entry points, in-process
    from convmem.adapters.dsh import serve
    from convmem.adapters.hook_entry import run_claude_code
    from convmem.config import load_settings
    from convmem.runtime import MemoryRuntime

    transcript = next(iter(sorted((fixtures / "claude_code").glob("*.jsonl"))))
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"):
        payload = {
            "hook_event_name": event,
            "session_id": "offline",
            "prompt": "What is the latency budget?",
            "transcript_path": str(transcript),
            "tool_name": "Write",
            "tool_input": {"file_path": "src/x.py"},
            "cwd": str(work),
        }
        out = io.StringIO()
        code = run_claude_code(home, str(config), io.StringIO(json.dumps(payload)), out)
        results.append({"call": ["hook", event], "code": code, "error": None})
    settings = load_settings(config, home)
    with MemoryRuntime.open(settings) as rt:
        requests = [
            {"id": 1, "op": "hello"},
            {"id": 2, "op": "session_start", "session_id": "session-off", "cwd": str(work)},
            {
                "id": 3,
                "op": "events",
                "events": [
                    {
                        "session_id": "session-off",
                        "event": {
                            "type": "user/message",
                            "seq": 1,
                            "data": {
                                "content": "The budget is 3000 tokens.",
                                "source": {"kind": "user"},
                            },
                        },
                    }
                ],
            },
            {"id": 4, "op": "pre_step", "session_id": "session-off", "turn": 1, "step": 1},
            {
                "id": 5,
                "op": "pre_execute",
                "session_id": "session-off",
                "tool": "Write",
                "arguments": {"file_path": "src/a.py"},
            },
            {"id": 6, "op": "command", "session_id": "session-off", "args": "search budget"},
            {"id": 7, "op": "catch_up", "session_id": "session-off"},
        ]
        stdout = io.BytesIO()
        serve(io.BytesIO("".join(json.dumps(r) + "\n" for r in requests).encode()), stdout, rt)
        replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
        results.append(
            {
                "call": ["serve dsh"],
                "code": 0 if all(r["ok"] for r in replies) else 1,
                "error": None,
            }
        )
        from convmem.capture import Event

        rt.session_start("api", cwd=str(work))
        rt.on_events(
            [
                Event("api", 1, "user/message", "Keep the p95 under 200 ms."),
                Event("api", 2, "assistant/message", "TODO: check the p95."),
            ]
        )
        rt.pre_step("api", None, 1, 1)
        rt.pre_execute("api", "Write", {"file_path": "src/b.py", "cwd": str(work)})
        results.append({"call": ["runtime"], "code": 0, "error": None})
    return results


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:4])))
