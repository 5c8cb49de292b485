"""``convmem hook claude-code``: one Claude Code hook event per process.

Claude Code starts this command on every hook event with one JSON payload on
stdin. It maps the events onto the runtime:

=================  ==========================================================
SessionStart       record the session, capture; after a compaction, answer
                   with the memory block as ``additionalContext``
UserPromptSubmit   capture the transcript and the prompt, assemble with the
                   prompt as query, answer with the block
PreToolUse         preconditions; a refusal is a ``permissionDecision: deny``
PostToolUse        capture (validation of assistant output runs inside)
Stop               capture; a reply that broke a blocking check is answered with
                   ``decision: block`` and the repair reminder (bounded)
PreCompact,        capture
SessionEnd
=================  ==========================================================

It must never get in the person's way: any internal error exits 0 with no
output, and is written (one line, then the traceback) to ``convmem.log`` in the
data dir. It runs on every prompt, so imports are lazy and click is not loaded.

Most of such a process's time would go to importing convmem, so by default the call
is handed to the data folder's resident hook process (:mod:`convmem.adapters.
hook_client` sends it; :mod:`convmem.adapters.hook_daemon` runs :func:`run_claude_code`
for it), and a call it did not take is handled here, as before.
``CONVMEM_HOOK_DAEMON=0``: always here.
"""

from __future__ import annotations

import os
import sys

# Nothing else at import time: this module is on the path of every hook call, and
# when the resident process answers, a handful of milliseconds of imports is a large
# share of the whole call. ``typing`` itself
# imports ``re``, hence the plain constant that type checkers also understand.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import IO, Any

    from convmem.config import Settings
    from convmem.runtime import MemoryRuntime

    Payload = Mapping[str, Any]
    Output = dict[str, Any] | None

HOSTS = ("claude-code",)
USAGE = "usage: convmem hook claude-code [--home DIR] [--config FILE]  (one JSON payload on stdin)"
MAX_PAYLOAD_BYTES = 64 * 1024 * 1024
#: Messages one hook call extracts at most (see ``MemoryRuntime.extract_limit``).
HOOK_EXTRACT_LIMIT = 32
#: ``0`` turns the resident hook process off: every call is handled in its own process.
ENV_DAEMON = "CONVMEM_HOOK_DAEMON"


class _UsageError(Exception):
    pass


def _parse_args(args: list[str]) -> dict[str, str | None]:
    opts: dict[str, str | None] = {"home": None, "config": None}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name in ("--home", "--config"):
            if not eq:
                if i + 1 >= len(args):
                    raise _UsageError(f"{name} needs a value")
                i += 1
                value = args[i]
            opts[name[2:]] = value
        else:
            raise _UsageError(f"unexpected argument {arg!r}")
        i += 1
    return opts


def run_hook(args: list[str], *, end_when_served: bool = False) -> int:
    """The ``convmem hook ...`` fast path (no click); returns the exit code.

    ``end_when_served``: a call the resident process answered ends this process at
    once, as the commands Claude Code runs do. None of convmem's own work ran here, and
    the interpreter's teardown would be about a tenth of the call.
    """
    if not args or args[0] not in HOSTS or any(a in ("-h", "--help") for a in args):
        if args and args[0] not in HOSTS and not args[0].startswith("-"):
            print(
                f"convmem hook: unknown host {args[0]!r}; known: {', '.join(HOSTS)}",
                file=sys.stderr,
            )
            return 1
        from convmem.cli import main as cli_main  # the help text lives with the click command

        cli_main(args=["hook", *args] if args else ["hook", "--help"], prog_name="convmem")
        return 0
    try:
        opts = _parse_args(args[1:])
    except _UsageError as exc:
        print(f"convmem hook claude-code: {exc}\n{USAGE}", file=sys.stderr)
        return 1
    if os.environ.get(ENV_DAEMON) != "0" and sys.stdin is not None and not sys.stdin.isatty():
        return _via_daemon(args, opts["home"], opts["config"], end_when_served)
    return run_claude_code(home=opts["home"], config=opts["config"])


def _via_daemon(args: list[str], home: str | None, config: str | None, end: bool) -> int:
    """Hand the call to the data folder's resident process; handle it here if that did
    not take it (:mod:`convmem.adapters.hook_client` says which), and start one."""
    from convmem.adapters import hook_client
    from convmem.core.paths import home_dir

    try:
        data, encoding, errors = hook_client.read_stdin(MAX_PAYLOAD_BYTES)
    except Exception:
        return run_claude_code(home, config)  # it reads and fails the same way, and logs
    base = home_dir(home)

    def log(exc: BaseException) -> None:
        _log_error(exc, None, None, base)

    try:
        code = hook_client.ask(base, args[0], args[1:], data, encoding, errors, log)
    except BaseException as exc:  # maybe taken: print nothing rather than handle it twice
        if not isinstance(exc, KeyboardInterrupt):
            log(exc)
        return 0
    if code is not None:
        if end:
            _end(code)
        return code
    import io

    text = io.TextIOWrapper(io.BytesIO(data), encoding=encoding, errors=errors, newline="\n")
    code = run_claude_code(home, config, stdin=text)
    hook_client.spawn(base)
    return code


def _end(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 (contextlib is an import this process does not make)
            stream.flush()
        except (OSError, ValueError):  # the host stopped listening: nothing left to say
            pass
    os._exit(code)


def run_claude_code(
    home: str | None = None,
    config: str | None = None,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
) -> int:
    """Read one payload, handle it, print the answer (if any). Always returns 0."""
    import json

    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if stdin.isatty():
        print(f"convmem hook claude-code reads a hook payload on stdin\n{USAGE}", file=sys.stderr)
        return 0
    payload: Any = None
    settings: Settings | None = None
    try:
        payload = json.loads(stdin.read(MAX_PAYLOAD_BYTES) or "null")
        if not isinstance(payload, dict):
            raise ValueError(f"the hook payload is not a JSON object: {str(payload)[:80]!r}")
        if payload.get("hook_event_name") not in _HANDLERS:
            return 0  # Notification, SubagentStop, ...: nothing to do, nothing to import
        from convmem.config import load_settings

        settings = load_settings(config, home)
        from convmem.core.seen import mark_seen

        mark_seen(settings.data_dir, "claude-code", str(payload["hook_event_name"]))
        answer = handle(payload, settings)
    except KeyboardInterrupt:
        return 0
    except BaseException as exc:  # never block the person: log, stay silent, exit 0
        _log_error(exc, payload, settings, home)
        return 0
    if answer is not None:
        try:
            stdout.write(json.dumps(answer, ensure_ascii=True) + "\n")
            stdout.flush()
        except OSError as exc:  # the host stopped listening (a hook timeout)
            _log_error(exc, payload, settings, home)
    return 0


def handle(payload: Payload, settings: Settings) -> Output:
    """Dispatch one payload; the JSON object to print, or None."""
    event = payload.get("hook_event_name")
    handler = _HANDLERS.get(event) if isinstance(event, str) else None
    if handler is None:
        return None
    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValueError(f"{event} payload without a session_id")
    if event == "PreToolUse" and not settings["validation.preconditions"]:
        return None  # nothing to check: skip opening the store on every tool call
    from convmem.runtime import MemoryRuntime

    with MemoryRuntime.open(settings) as runtime:
        # a transcript read for the first time may hold a long backlog: each call
        # extracts a bounded part of it, and the next calls go on
        runtime.extract_limit = HOOK_EXTRACT_LIMIT
        return handler(runtime, session_id, payload)


# --- handlers ----------------------------------------------------------------------------


def _str(payload: Payload, key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def _context(event: str, block: str | None) -> Output:
    if not block:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": block}}


#: Token budget of the project's standing memory at SessionStart: at most 4 characters a
#: token (fewer for CJK), so the block stays below the 10,000 UTF-16 units Claude Code
#: passes on whole.
START_BUDGET_TOKENS = 2000


def _project(payload: Payload) -> str | None:
    """The session's project: the git root of Claude Code's project folder (or cwd)."""
    from convmem.projects import project_root

    return project_root(os.environ.get("CLAUDE_PROJECT_DIR") or _str(payload, "cwd"))


def _session_start(runtime: MemoryRuntime, session_id: str, payload: Payload) -> Output:
    from convmem.adapters.claude_code import capture_transcript

    source = _str(payload, "source") or "startup"
    cwd = _str(payload, "cwd")
    runtime.join_project(session_id, _project(payload))  # before capture: extraction links
    parser = capture_transcript(
        runtime, session_id, _str(payload, "transcript_path"), compacted=source == "compact"
    )
    runtime.session_start(
        session_id,
        source,
        origin="claude-code",
        cwd=cwd,
        host_version=parser.version,
    )
    if source != "compact":
        # a context that starts empty gets what earlier sessions of the project settled
        start = runtime.start_block(session_id, budget=START_BUDGET_TOKENS, max_units=_cap())
        return _context("SessionStart", start)
    # the runtime applies the compaction settings (and logs why it sends nothing)
    block = runtime.pre_step(
        session_id, None, turn=parser.turn or None, trigger="compaction", max_units=_cap()
    )
    return _context("SessionStart", block)


def _user_prompt(runtime: MemoryRuntime, session_id: str, payload: Payload) -> Output:
    from convmem.adapters.claude_code import capture_transcript, is_slash_command

    prompt = _str(payload, "prompt")
    runtime.join_project(session_id, _project(payload))  # hooks installed mid-session
    # answer fast: validating the last reply can wait for the Stop hook's capture
    runtime.defer_derived = True
    parser = capture_transcript(
        runtime,
        session_id,
        _str(payload, "transcript_path"),
        prompt=prompt,
        prompt_id=_str(payload, "prompt_id"),
    )
    if prompt and prompt.lstrip().startswith("/convmem"):
        return None  # convmem's own slash command: a block here would only explain itself
    # a correction typed in this prompt must be current in this prompt's block; when the
    # store cannot take the writes (full, locked), the block is still built from what it has
    from convmem.errors import StoreError

    try:
        runtime.extract_recent(session_id)
    except StoreError as exc:
        _log_error(exc, payload, runtime.settings, None)
    if prompt and is_slash_command(prompt):
        prompt = None  # a command line is no query; the latest typed text is
    visible = _visible_after_compaction(runtime, session_id)
    block = runtime.pre_step(
        session_id, visible, turn=parser.turn or None, query=prompt, max_units=_cap()
    )
    return _context("UserPromptSubmit", block)


def _cap() -> int:
    from convmem.delivery import CLAUDE_CODE_CONTEXT_CAP

    return CLAUDE_CODE_CONTEXT_CAP


def _visible_after_compaction(runtime: MemoryRuntime, session_id: str) -> list[str] | None:
    """What the model sees since the last compaction, convmem's re-injected blocks included.

    The runtime's own inference (``None``) counts every event after the compaction
    as visible, but not the generated ones; here the block the SessionStart hook
    already re-injected (logged back in the transcript) counts too, so the first
    prompt after a compaction does not send the same block a second time.
    """
    if runtime.settings["compatibility.compaction_policy"] == "none":
        return None
    store = runtime.store
    starts = store.events(session_id, types=["compaction/start"], newest_first=True, limit=1)
    if not starts:
        return None  # nothing compacted: the runtime treats everything as visible
    return [e.text for e in store.events(session_id, after=starts[0].seq) if e.text]


def _pre_tool(runtime: MemoryRuntime, session_id: str, payload: Payload) -> Output:
    from collections.abc import Mapping

    tool_input = payload.get("tool_input")
    tool_input = dict(tool_input) if isinstance(tool_input, Mapping) else {}
    cwd = _str(payload, "cwd")
    if cwd and "cwd" not in tool_input:
        tool_input["cwd"] = cwd  # relative precondition patterns are relative to the project
    decision = runtime.pre_execute(session_id, _str(payload, "tool_name") or "", tool_input)
    if decision.allowed:
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": decision.reason or "convmem precondition failed",
        }
    }


def _capture(runtime: MemoryRuntime, session_id: str, payload: Payload) -> Output:
    from convmem.adapters.claude_code import capture_transcript

    capture_transcript(runtime, session_id, _str(payload, "transcript_path"))
    return None


def _stop(runtime: MemoryRuntime, session_id: str, payload: Payload) -> Output:
    """Capture the reply; if it broke a blocking check, keep the model on it.

    Claude Code's documented Stop output ``{"decision": "block", "reason": …}`` makes
    the model continue with the reason as its next instruction; the runtime answers
    each blocked reply once and only while repair attempts remain.
    """
    from convmem.adapters.claude_code import capture_transcript

    capture_transcript(
        runtime,
        session_id,
        _str(payload, "transcript_path"),
        reply=_str(payload, "last_assistant_message"),
        continued=payload.get("stop_hook_active") is True,
    )
    reason = runtime.repair_block(session_id)
    return None if reason is None else {"decision": "block", "reason": reason}


_HANDLERS: dict[str, Callable[[MemoryRuntime, str, Payload], Output]] = {
    "SessionStart": _session_start,
    "UserPromptSubmit": _user_prompt,
    "PreToolUse": _pre_tool,
    "PostToolUse": _capture,
    "PreCompact": _capture,
    "Stop": _stop,
    "SessionEnd": _capture,
}


# --- the error log -----------------------------------------------------------------------


def _log_error(
    exc: BaseException, payload: Any, settings: Settings | None, home: str | None
) -> None:
    import time
    import traceback
    from pathlib import Path

    try:
        if settings is not None:
            log = settings.data_dir / str(settings["diagnostics.log_file"])
        else:
            from convmem.core.paths import home_dir

            log = Path(home_dir(home)) / "convmem.log"
        event = payload.get("hook_event_name") if isinstance(payload, dict) else None
        line = (
            f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} hook claude-code"
            f" {event or '?'}: {type(exc).__name__}: {exc}".replace("\n", " ")
        )
        from convmem.core.paths import append_private

        append_private(log, line + "\n" + "".join(traceback.format_exception(exc)) + "\n")
    except Exception:
        pass  # nowhere to report it; staying silent is still right for the host
