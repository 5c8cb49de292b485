"""The resident hook process's helpers that run outside its calls.

:func:`exercise_hooks` warms the daemon up before it listens: one short session through
every hook on a throwaway store, so that what the calls need is imported, compiled and
cached once and inherited by every forked child. :func:`keep_store_open` runs in the
daemon's keeper process and holds a connection to the folder's SQLite store, so a call
closing its own connection is never the last one (no WAL checkpoint with its fsyncs on
every call).
"""

from __future__ import annotations

import os

from convmem.adapters.hook_entry import run_claude_code


def keep_store_open(home: str, parent_fd: int, tick: float) -> None:
    """Hold a connection to the folder's SQLite store until ``parent_fd`` reads EOF.

    The store is the one a call without ``--config`` uses; a file that is replaced is
    followed, one that does not exist yet is waited for (never created here).
    """
    import select
    import sqlite3
    from pathlib import Path

    from convmem.config import load_settings
    from convmem.core.paths import home_dir

    settings = load_settings(None, None if home == os.path.abspath(home_dir()) else home)
    url = str(settings["store"] or "")
    if url and not url.startswith("sqlite:///"):
        return  # a server database: nothing to keep
    path = Path(url[len("sqlite:///") :] if url else settings.db_path).absolute()
    held: tuple[sqlite3.Connection, int] | None = None
    try:
        while not select.select([parent_fd], [], [], tick)[0]:
            try:
                inode = path.stat().st_ino
            except OSError:
                continue
            if held is not None and held[1] == inode:
                continue
            if held is not None:
                held[0].close()
            conn = sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
            held = (conn, inode)
    finally:
        if held is not None:
            held[0].close()


def exercise_hooks() -> None:
    """One short session through every hook on a throwaway store (no user data).

    What it imports, compiles and caches is inherited by every child.
    """
    import importlib
    import io
    import json
    import tempfile

    saved = dict(os.environ)
    for name in ("CONVMEM_STORE", "CONVMEM_HOME", "CLAUDE_PROJECT_DIR"):
        os.environ.pop(name, None)
    try:
        with tempfile.TemporaryDirectory(prefix="convmem-hook-warmup-") as tmp:
            config = os.path.join(tmp, "config.toml")
            with open(config, "w", encoding="utf-8") as fh:
                fh.write(
                    "[validation]\nenabled = true\n"
                    'preconditions = [{must_exist = "src/**", tools = ["Write", "Edit"]}]\n'
                )
            transcript = os.path.join(tmp, "warm-up.jsonl")
            prompt = "The token budget must stay under 3000 tokens; we decided on SQLite."
            reply = [
                {"type": "text", "text": "Noted: under 3000 tokens, SQLite."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}},
            ]
            result = [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]
            lines = [
                {"type": "user", "promptId": "p1", "message": {"content": prompt}},
                {"type": "assistant", "message": {"content": reply}},
                {"type": "user", "message": {"content": result}},
            ]
            write = {"file_path": os.path.join(tmp, "src", "new.py"), "content": "x = 1\n"}
            calls: list[tuple[str, dict[str, object], int]] = [
                ("SessionStart", {"source": "startup"}, 0),
                ("UserPromptSubmit", {"prompt": prompt, "prompt_id": "p1"}, 0),
                ("PreToolUse", {"tool_name": "Write", "tool_input": write}, 1),
                ("PostToolUse", {"tool_name": "Bash"}, 3),
                ("Stop", {}, 3),
                ("PreCompact", {}, 3),
                ("SessionStart", {"source": "compact"}, 3),
                ("UserPromptSubmit", {"prompt": "What was the budget?"}, 3),
                ("SessionEnd", {}, 3),
            ]
            for event, extra, upto in calls:
                with open(transcript, "w", encoding="utf-8") as fh:
                    fh.writelines(json.dumps(line) + "\n" for line in lines[:upto])
                payload = {"session_id": "warm-up", "transcript_path": transcript, "cwd": tmp}
                stdin = io.StringIO(json.dumps({**payload, "hook_event_name": event, **extra}))
                run_claude_code(tmp, config, stdin=stdin, stdout=io.StringIO())
    finally:
        os.environ.clear()
        os.environ.update(saved)
    for name in ("convmem.validation", "convmem.memory.extraction", "convmem.assembly"):
        importlib.import_module(name)
    from convmem.redaction import compile_all

    # a rule compiles when a keyword first triggers it: "token" or "key" in a coding
    # session would otherwise recompile rules in every child (1 ms or so each)
    compile_all()
