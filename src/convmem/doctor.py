"""``convmem doctor``: is convmem really connected to its hosts? One finding a line.

A host that cannot run its hook carries on without a word (Claude Code ignores a hook
command that fails; DSH's plugin fails open), so a broken install looks like a quiet
memory. The doctor looks where an install lives and says what it finds:

* the ``convmem`` command: on ``PATH``, and which one;
* Claude Code: convmem's hooks in the user's and the project's settings files (all
  seven events, each command resolving to a program that exists), the same hooks in
  two files (each event would run twice), and when each hook event last reached
  convmem (:mod:`convmem.core.seen`);
* DSH: profiles under ``$DSH_HOME`` that load convmem's plugin, the plugin file and
  the server command;
* the store itself: that it opens and passes SQLite's quick check (a hook that cannot
  read it still reaches convmem, and fails quietly), and the hook errors
  ``convmem.log`` got in the last day;
* with ``live``, one synthetic event sent through each installed command, as the host
  would send it, and then looked for in the store it went to (and deleted again).

Every finding is data (:class:`Finding`): a level, what was found and, for a problem,
the command or step that fixes it. Nothing here changes a host's settings.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convmem.adapters.claude_settings import HOOK_EVENTS, find_convmem_hooks
from convmem.core.seen import last_seen

if TYPE_CHECKING:
    from convmem.config import Settings

OK, WARN, ERROR = "ok", "warn", "error"
#: No hook event for this long, with hooks installed: ``status`` warns.
QUIET_AFTER_SECONDS = 24 * 3600
LIVE_TIMEOUT = 60.0
PROBE_TEXT = "convmem doctor probe: this session is deleted right after the check"


@dataclass(frozen=True)
class Finding:
    """One line of the report."""

    level: str
    host: str
    what: str
    fix: str | None = None

    def line(self) -> str:
        tail = f"; fix: {self.fix}" if self.fix else ""
        return f"{self.level.upper():5} {self.host}: {self.what}{tail}"

    def as_dict(self) -> dict[str, Any]:
        return {"level": self.level, "host": self.host, "what": self.what, "fix": self.fix}


# --------------------------------------------------------------------------- commands
def resolve(command: str) -> tuple[str | None, str]:
    """The program a hook command runs (None if it does not resolve) and why not."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None, f"`{command}` is not a valid command line"
    if not words:
        return None, "the command is empty"
    program = words[0]
    if os.sep in program:
        if not os.path.isfile(program):
            return None, f"{program} does not exist (a moved or deleted install?)"
        if not os.access(program, os.X_OK):
            return None, f"{program} is not executable"
        return program, ""
    found = shutil.which(program)
    if found is None:
        return None, f"`{program}` is not on PATH"
    return found, ""


def _options(command: str) -> tuple[str | None, str | None]:
    """``--home`` and ``--config`` written into a hook command."""
    words = shlex.split(command)
    found: dict[str, str | None] = {"--home": None, "--config": None}
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in found:
            found[name] = value if eq else (words[i + 1] if i + 1 < len(words) else None)
    return found["--home"], found["--config"]


TOOL_FIX = (
    "install convmem as a tool so `convmem` is on PATH: `uv tool install convmem` or "
    "`pipx install convmem` (from the wheel or the source folder)"
)


def check_command() -> list[Finding]:
    found = shutil.which("convmem")
    if found is None:
        return [Finding(WARN, "convmem", "`convmem` is not on PATH here", TOOL_FIX)]
    return [Finding(OK, "convmem", f"`convmem` on PATH: {found}")]


# --------------------------------------------------------------------------- Claude Code
def claude_settings_files(project: Path | None, user_home: Path | None = None) -> list[Path]:
    home = user_home or Path.home()
    files = [home / ".claude" / "settings.json"]
    if project is not None:
        files += [
            project / ".claude" / "settings.json",
            project / ".claude" / "settings.local.json",
        ]
    return files


def _install_fix(path: Path, project: Path | None, user_home: Path | None) -> str:
    home = user_home or Path.home()
    if path.parent.parent == home and path.name == "settings.json":
        return "convmem install claude-code --user"
    shared = " --shared" if path.name == "settings.json" else ""
    return f"convmem install claude-code --project {path.parent.parent}{shared}"


def check_claude_code(
    settings: Settings, project: Path | None, user_home: Path | None = None
) -> tuple[list[Finding], list[str]]:
    """Findings, and the distinct hook commands installed (for the live check)."""
    out: list[Finding] = []
    commands: list[str] = []
    holders: list[Path] = []
    for path in claude_settings_files(project, user_home):
        hooks = find_convmem_hooks(path)
        if not hooks:
            continue
        holders.append(path)
        fix = _install_fix(path, project, user_home)
        missing = [event for event, _ in HOOK_EVENTS if event not in hooks]
        if missing:
            out.append(
                Finding(
                    ERROR, "claude-code", f"{path}: no convmem hook for {', '.join(missing)}", fix
                )
            )
        else:
            out.append(Finding(OK, "claude-code", f"{path}: convmem hooks for all 7 events"))
        for command in sorted({c for cs in hooks.values() for c in cs}):
            program, why = resolve(command)
            if program is None:
                out.append(
                    Finding(
                        ERROR,
                        "claude-code",
                        f"{path}: hook command `{command}` does not resolve: {why}",
                        f"{fix} (writes `convmem-hook claude-code`); {TOOL_FIX}",
                    )
                )
            elif command not in commands:
                commands.append(command)
    if len(holders) > 1:
        shown = " and ".join(str(p) for p in holders)
        out.append(
            Finding(
                WARN,
                "claude-code",
                f"convmem hooks in {shown}: in one project each event runs once per file",
                "keep one: `convmem install claude-code ... --uninstall` on the others",
            )
        )
    if not holders:
        where = f" for {project}" if project else ""
        out.append(
            Finding(
                WARN,
                "claude-code",
                f"no convmem hooks in Claude Code's settings{where}",
                f"convmem install claude-code --project {project or '.'}",
            )
        )
        return out, commands
    out += seen_findings(settings, "claude-code", [e for e, _ in HOOK_EVENTS])
    return out, commands


def _ago(seconds: float) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


def seen_findings(settings: Settings, host: str, events: Iterable[str]) -> list[Finding]:
    seen = last_seen(settings.data_dir, host)
    now = time.time()
    parts = [f"{e} {_ago(now - seen[e]) if e in seen else 'never'}" for e in events]
    if not seen:
        return [
            Finding(
                WARN,
                host,
                f"no {host} event has reached convmem in {settings.data_dir} yet",
                f"use {host} once; if this stays, run `convmem doctor --live`",
            )
        ]
    newest = max(seen.values())
    level = WARN if now - newest > QUIET_AFTER_SECONDS else OK
    return [Finding(level, host, "last event reached convmem: " + ", ".join(parts))]


# --------------------------------------------------------------------------- DSH
def dsh_profiles(dsh_home: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(profile, plugin entry)`` for each profile whose patch loads convmem."""
    from convmem.cli.dsh_cmds import PATCH_FILE, PLUGIN_ID, read_patch

    found = []
    for folder in sorted((dsh_home / "profiles").glob("*")):
        path = folder / PATCH_FILE
        if not path.is_file():
            continue
        try:
            _, patches = read_patch(path)
        except Exception:
            continue
        for patch in patches:
            inserts = patch.get("insert") if isinstance(patch, dict) else None
            for entry in inserts if isinstance(inserts, list) else ():
                if isinstance(entry, dict) and entry.get("id") == PLUGIN_ID:
                    found.append((folder.name, entry))
    return found


def check_dsh(settings: Settings, dsh_home: Path | None) -> tuple[list[Finding], list[list[str]]]:
    if dsh_home is None:
        return [], []
    out: list[Finding] = []
    commands: list[list[str]] = []
    profiles = dsh_profiles(dsh_home)
    if not profiles:
        return [
            Finding(
                WARN,
                "dsh",
                f"no DSH profile in {dsh_home} loads convmem",
                "convmem install dsh --profile NAME",
            )
        ], []
    for name, entry in profiles:
        fix = f"convmem install dsh --profile {name}"
        plugin = entry.get("name")
        config = entry.get("config") if isinstance(entry.get("config"), dict) else {}
        command = config.get("command") if isinstance(config, dict) else None
        if not isinstance(plugin, str) or not os.path.isfile(plugin):
            out.append(
                Finding(ERROR, "dsh", f"profile {name}: plugin file {plugin} is missing", fix)
            )
            continue
        from convmem.cli.dsh_cmds import plugin_path

        if Path(plugin).read_bytes() != plugin_path().read_bytes():
            out.append(
                Finding(WARN, "dsh", f"profile {name}: {plugin} is not this convmem's plugin", fix)
            )
        if not (isinstance(command, list) and command and all(isinstance(c, str) for c in command)):
            out.append(Finding(ERROR, "dsh", f"profile {name}: no server command", fix))
            continue
        program, why = resolve(shlex.join(command))
        if program is None:
            out.append(
                Finding(
                    ERROR,
                    "dsh",
                    f"profile {name}: server command `{shlex.join(command)}` does not resolve: "
                    f"{why}",
                    f"{fix}; {TOOL_FIX}",
                )
            )
            continue
        out.append(Finding(OK, "dsh", f"profile {name}: convmem's plugin and server command"))
        if command not in commands:
            commands.append(command)
    out += seen_findings(settings, "dsh", ["session_start", "events", "pre_step"])
    return out, commands


# --------------------------------------------------------------------------- live checks
def _probe_store(settings: Settings, session: str, purge: bool = True) -> bool:
    from convmem.runtime import open_store

    store = open_store(settings)
    try:
        found = any(PROBE_TEXT in e.text for e in store.events(session, types=["user/message"]))
        if purge:
            store.purge_session(session)
        return found
    finally:
        store.close()


def live_claude_code(settings: Settings, command: str, workdir: Path) -> Finding:
    """Send a synthetic Stop event through ``command``; was its transcript captured?"""
    from convmem.config import load_settings

    session = f"convmem-doctor-{os.getpid()}-{int(time.time() * 1000)}"
    transcript = workdir / f"{session}.jsonl"
    line = {"type": "user", "message": {"role": "user", "content": PROBE_TEXT}}
    transcript.write_text(json.dumps(line) + "\n", "utf-8")
    payload = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(workdir),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    home, config = _options(command)
    target = load_settings(config, home) if (home or config) else settings
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            command,
            shell=True,
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=LIVE_TIMEOUT,
            cwd=workdir,
        )
    except subprocess.TimeoutExpired:
        return Finding(ERROR, "claude-code", f"live check: `{command}` did not answer in time")
    ms = (time.perf_counter() - started) * 1000
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["no message"])[-1][:200]
        return Finding(
            ERROR,
            "claude-code",
            f"live check: `{command}` failed (exit {proc.returncode}: {why})",
            f"reinstall the hooks (`convmem install claude-code ...`); {TOOL_FIX}",
        )
    if not _probe_store(target, session):
        log = target.data_dir / str(target["diagnostics.log_file"])
        return Finding(
            ERROR,
            "claude-code",
            f"live check: `{command}` ran but nothing reached the store {target.db_path}",
            f"read {log}",
        )
    return Finding(
        OK,
        "claude-code",
        f"live check: a Stop event through `{command}` was captured ({ms:.0f} ms)",
    )


def live_dsh(settings: Settings, command: list[str]) -> Finding:
    """Start the DSH server command, send a synthetic event, look for it in the store."""
    session = f"convmem-doctor-{os.getpid()}-{int(time.time() * 1000)}"
    event = {
        "type": "user/message",
        "seq": 1,
        "time": int(time.time() * 1000),
        "data": {"role": "user", "content": PROBE_TEXT, "source": {"kind": "user"}},
    }
    requests = [
        {"id": 1, "op": "hello"},
        {"id": 2, "op": "events", "events": [{"session_id": session, "event": event}]},
    ]
    text = "".join(json.dumps(r) + "\n" for r in requests)
    env = {**os.environ, "CONVMEM_HOME": str(settings.data_dir)}
    env.pop("DSH_HOME", None)  # no session log to re-read for a synthetic session
    shown = shlex.join(command)
    try:
        proc = subprocess.run(
            command, input=text, capture_output=True, text=True, timeout=LIVE_TIMEOUT, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Finding(ERROR, "dsh", f"live check: `{shown}` could not run ({exc})", TOOL_FIX)
    replies = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    if len(replies) < 2 or not all(r.get("ok") for r in replies):
        return Finding(
            ERROR,
            "dsh",
            f"live check: `{shown}` did not answer as convmem's server (exit {proc.returncode})",
            f"convmem install dsh --profile NAME; {TOOL_FIX}",
        )
    if not _probe_store(settings, session):
        return Finding(ERROR, "dsh", f"live check: `{shown}` answered but stored nothing")
    return Finding(OK, "dsh", f"live check: an event through `{shown}` was captured")


# --------------------------------------------------------------------------- the report
# --------------------------------------------------------------------------- the store
#: Hook errors logged within this long count as recent.
RECENT_ERRORS_SECONDS = 24 * 3600


def check_store(settings: Settings) -> list[Finding]:
    """Does the SQLite store open, and did hooks log errors lately?"""
    import sqlite3

    from convmem.core.store_url import backend_of, sqlite_path

    url = str(settings["store"] or "")
    if backend_of(url) != "sqlite":
        return []
    path = Path(sqlite_path(url) or settings.db_path)
    if not path.is_file():
        return []  # nothing captured yet: the hosts' findings say why
    out: list[Finding] = []
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            conn.execute("SELECT max(rowid) FROM events").fetchone()
            # a file that opens may still be damaged inside: SQLite's quick check reads
            # every page (no index against its table, unlike `convmem status --check`)
            problem = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
            if problem != "ok":
                raise sqlite3.DatabaseError(f"quick check: {' '.join(str(problem).split())}")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        out.append(
            Finding(
                ERROR,
                "store",
                f"{path} cannot be read ({exc}); every hook call fails quietly",
                "move the file aside (convmem starts a new store) and keep it for"
                " `convmem status --check`",
            )
        )
    else:
        out.append(Finding(OK, "store", f"{path} opens"))
    log = settings.data_dir / str(settings["diagnostics.log_file"])
    recent = _recent_hook_errors(log, time.time() - RECENT_ERRORS_SECONDS)
    if recent:
        n, newest = len(recent), recent[-1]
        out.append(
            Finding(
                WARN,
                "store",
                f"{n} hook error{'s' if n != 1 else ''} logged in the last day, the newest:"
                f" {newest[:200]}",
                f"read {log}",
            )
        )
    return out


def _recent_hook_errors(log: Path, since: float) -> list[str]:
    """The first lines of the hook errors ``log`` holds from ``since`` on."""
    import calendar

    try:
        with log.open(encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        if " hook " not in line[:40] or not line[:4].isdigit():
            continue
        try:
            at = calendar.timegm(time.strptime(line[:20], "%Y-%m-%dT%H:%M:%SZ"))
        except ValueError:
            continue
        if at >= since:
            out.append(line)
    return out


def diagnose(
    settings: Settings,
    *,
    project: Path | None,
    dsh_home: Path | None,
    live: bool = False,
    user_home: Path | None = None,
) -> list[Finding]:
    """Every finding, in a fixed order (the command, Claude Code, DSH)."""
    import tempfile

    findings = check_command() + check_store(settings)
    claude, commands = check_claude_code(settings, project, user_home)
    dsh, servers = check_dsh(settings, dsh_home)
    findings += claude
    if live:
        with tempfile.TemporaryDirectory(prefix="convmem-doctor-") as tmp:
            findings += [live_claude_code(settings, c, Path(tmp)) for c in commands]
    findings += dsh
    if live:
        findings += [live_dsh(settings, c) for c in servers]
    return findings


def quiet_hosts(settings: Settings, project: Path | None) -> list[str]:
    """Warnings for ``status``: a host is installed but no event arrived recently."""
    warnings = []
    installed = [p for p in claude_settings_files(project) if find_convmem_hooks(p)]
    dsh_home = os.environ.get("DSH_HOME")
    hosts = [("claude-code", bool(installed))]
    hosts.append(("dsh", bool(dsh_home and dsh_profiles(Path(dsh_home)))))
    now = time.time()
    for host, present in hosts:
        if not present:
            continue
        seen = last_seen(settings.data_dir, host)
        newest = max(seen.values(), default=None)
        if newest is None or now - newest > QUIET_AFTER_SECONDS:
            when = "never" if newest is None else _ago(now - newest)
            warnings.append(
                f"{host} is set up to use convmem but no event arrived in the last 24 hours "
                f"(last: {when}); run `convmem doctor --live`"
            )
    return warnings
