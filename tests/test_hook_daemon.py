"""The resident hook process, through real processes: same answers, each payload once.

Every call here is a real ``python -m convmem hook claude-code`` process. A daemon
home runs beside a reference home whose calls are all handled in-process
(``CONVMEM_HOOK_DAEMON=0``), over the same transcript, and the two must answer
byte for byte alike and end with the same store. Whether a call was served by the
daemon is read from its debug log. Every daemon a test starts is killed at the end.

The processes run a copy of the package taken when this module starts: a daemon
exits when convmem's files change under it, and an edit in the working tree during
the run must not turn a served call into a fallback.
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, REPO
from convmem.adapters import hook_daemon
from convmem.config import load_settings
from convmem.runtime import MemoryRuntime

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "AF_UNIX") or not hasattr(os, "fork"), reason="needs AF_UNIX and fork"
)

SID = "3c1f9a52-7d4e-4b8a-9e21-6f0d2c8b4a17"
RAW = (FIXTURES / "claude_code" / f"{SID}.jsonl").read_text("utf-8").splitlines()
BUDGET = "The token budget must stay under 3000 tokens at peak load."
LAST = "What was the token budget again?"
PRECONDITIONS = (
    '[validation]\npreconditions = [{must_exist = "src/**", tools = ["Write", "Edit"]}]\n'
)
DAEMON_ENV = {
    "CONVMEM_HOOK_DAEMON": "1",
    "CONVMEM_HOOK_DAEMON_IDLE": "60",  # and each test kills its daemons at the end
    "CONVMEM_HOOK_DAEMON_DEBUG": "1",  # the log says which calls it served
}
WAIT = 60.0  # seconds; generous, for a loaded machine

Hook = Callable[..., subprocess.CompletedProcess[str]]


# --- helpers ---------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def frozen_package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Child processes import a compiled copy of ``src/convmem`` (see the docstring)."""
    root = tmp_path_factory.mktemp("frozen-src")
    shutil.copytree(
        REPO / "src" / "convmem", root / "convmem", ignore=shutil.ignore_patterns("__pycache__")
    )
    compileall.compile_dir(root / "convmem", quiet=1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(
            "PYTHONPATH", os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
        )
        yield root


def run_hook(
    payload: Any, home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, "-m", "convmem", "hook", "claude-code", *args],
        input=text,
        capture_output=True,
        text=True,
        env={**os.environ, "CONVMEM_HOME": str(home), **(env or {})},
        timeout=120,
    )


def payload(event: str, transcript: Path, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": SID,
        "transcript_path": str(transcript),
        "cwd": str(transcript.parent),
        "hook_event_name": event,
        **extra,
    }


def grow(path: Path, upto: int) -> None:
    path.write_text("".join(line + "\n" for line in RAW[:upto]), "utf-8")


def line_of(text: str) -> int:
    for n, line in enumerate(RAW):
        obj = json.loads(line)
        if obj.get("type") == "user" and obj["message"]["content"] == text:
            return n
    raise AssertionError(text)


def debug_log(home: Path) -> list[str]:
    path = home / hook_daemon.DEBUG_LOG_NAME
    return path.read_text("utf-8").splitlines() if path.exists() else []


def served(home: Path) -> int:
    return sum(": served " in line for line in debug_log(home))


def daemon_pids(home: Path) -> list[int]:
    return [
        int(line.split()[2].rstrip(":")) for line in debug_log(home) if line.endswith(": start")
    ]


def is_daemon(pid: int) -> bool:
    """Whether ``pid`` is a live hook daemon (a zombie or a reused pid is not)."""
    if sys.platform != "linux":
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return b"hook_daemon" in cmdline and state != "Z"


def wait_for(check: Callable[[], Any], what: str, timeout: float = WAIT) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def listening(home: Path) -> int:
    """The pid of the daemon serving ``home``, once it listens."""

    def check() -> int | None:
        try:
            pid = int((home / hook_daemon.PID_NAME).read_text())
        except (OSError, ValueError):
            return None
        if not any(line.endswith(f"daemon {pid}: listening") for line in debug_log(home)):
            return None
        return pid if is_daemon(pid) else None

    return int(wait_for(check, f"a daemon listening in {home}"))


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    wait_for(lambda: not is_daemon(pid), f"daemon {pid} to die", 20)


def start_daemon(home: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "convmem.adapters.hook_daemon", "--home", str(home)],
        env={**os.environ, **DAEMON_ENV, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def stored(
    home: Path, sid: str = SID
) -> tuple[list[tuple[int, str, str | None, str]], dict[str, int]]:
    """The session's events and its row count per table."""
    with MemoryRuntime.open(load_settings(home=home, env={})) as rt:
        events = [(e.seq, e.type, e.source_kind, e.text) for e in rt.store.events(sid)]
        return events, rt.store.table_counts(sid)


def outcome(result: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    return result.returncode, result.stdout, result.stderr


@pytest.fixture
def homes(tmp_path: Path) -> Iterator[list[Path]]:
    """Register daemon homes here: their daemons are killed at the end, whatever happens."""
    registered: list[Path] = []
    yield registered
    for home in registered:
        for pid in daemon_pids(home):
            if is_daemon(pid):
                kill(pid)


@pytest.fixture
def pair(tmp_path: Path, homes: list[Path]) -> tuple[Path, Path, Hook]:
    """A reference home (in-process only) and a daemon home, both with preconditions."""
    ref, dm = tmp_path / "ref", tmp_path / "dm"
    for home in (ref, dm):
        home.mkdir(mode=0o700)
        (home / "config.toml").write_text(PRECONDITIONS)
    homes.append(dm)

    def both(body: Any, *args: str) -> subprocess.CompletedProcess[str]:
        expected = run_hook(body, ref, *args, env={"CONVMEM_HOOK_DAEMON": "0"})
        got = run_hook(body, dm, *args, env=DAEMON_ENV)
        assert outcome(got) == outcome(expected), body
        return got

    return ref, dm, both


def session_steps(transcript: Path, project: Path) -> list[tuple[int, dict[str, Any]]]:
    """(transcript lines, payload) for a whole session: prompts, tools, a compaction."""
    compact_at = next(n for n, line in enumerate(RAW) if '"compact_boundary"' in line)
    edit = payload("PreToolUse", transcript, tool_name="Edit", cwd=str(project))
    missing = {"file_path": str(project / "src" / "missing.py"), "old_string": "a"}
    present = {"file_path": str(project / "src" / "there.py"), "old_string": "x"}
    return [
        (0, payload("SessionStart", transcript, source="startup")),
        (line_of(BUDGET), payload("UserPromptSubmit", transcript, prompt=BUDGET, prompt_id="x")),
        (line_of(BUDGET), {**edit, "tool_input": missing}),
        (line_of(BUDGET), {**edit, "tool_input": present}),
        (compact_at, payload("PostToolUse", transcript)),
        (compact_at, payload("Stop", transcript)),
        (compact_at, payload("PreCompact", transcript)),
        (compact_at, payload("SessionStart", transcript, source="compact")),
        (line_of(LAST), payload("UserPromptSubmit", transcript, prompt=LAST)),
        (len(RAW), payload("Stop", transcript)),
        (len(RAW), payload("SessionEnd", transcript)),
    ]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "there.py").write_text("x = 1\n")
    return folder


# --- same answers, each payload once ---------------------------------------------------------


def test_first_call_falls_back_then_the_daemon_answers_byte_for_byte(
    pair: tuple[Path, Path, Hook], tmp_path: Path, project: Path
) -> None:
    ref, dm, both = pair
    transcript = tmp_path / f"{SID}.jsonl"
    steps = session_steps(transcript, project)
    answers = []
    for n, (upto, body) in enumerate(steps):
        grow(transcript, upto)
        answers.append(both(body))
        if n == 0:
            assert served(dm) == 0  # no daemon yet: handled in-process, one started
            listening(dm)
        else:
            assert served(dm) == n
    ups = json.loads(answers[8].stdout)["hookSpecificOutput"]
    assert ups["hookEventName"] == "UserPromptSubmit" and BUDGET in ups["additionalContext"]
    deny = json.loads(answers[2].stdout)["hookSpecificOutput"]
    assert (
        deny["permissionDecision"] == "deny"
        and "src/missing.py" in deny["permissionDecisionReason"]
    )
    assert answers[3].stdout == ""
    compact = json.loads(answers[7].stdout)["hookSpecificOutput"]
    assert compact["hookEventName"] == "SessionStart" and BUDGET in compact["additionalContext"]
    assert stored(dm) == stored(ref)
    assert [seq for seq, *_ in stored(dm)[0]] == list(range(1, len(stored(dm)[0]) + 1))
    assert not (dm / "convmem.log").exists() and not (ref / "convmem.log").exists()


def test_errors_are_logged_and_silent_as_in_process(pair: tuple[Path, Path, Hook]) -> None:
    ref, dm, both = pair
    both({"session_id": "s", "hook_event_name": "Notification"})
    listening(dm)
    for body in ("this is not json", "[1, 2]", '{"hook_event_name": "UserPromptSubmit"}'):
        assert outcome(both(body)) == (0, "", "")
    assert served(dm) == 3
    first = [
        (home / "convmem.log").read_text("utf-8").split("\n\n")[0].splitlines()[0]
        for home in (ref, dm)
    ]
    assert [line.split(" ", 1)[1] for line in first] == [
        "hook claude-code ?: JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    ] * 2


def test_a_killed_daemon_loses_and_repeats_nothing(
    pair: tuple[Path, Path, Hook], tmp_path: Path, project: Path
) -> None:
    ref, dm, both = pair
    transcript = tmp_path / f"{SID}.jsonl"
    steps = session_steps(transcript, project)
    grow(transcript, steps[0][0])
    both(steps[0][1])
    first = listening(dm)
    for upto, body in steps[1:5]:
        grow(transcript, upto)
        both(body)
    kill(first)  # SIGKILL: the socket file stays behind, refusing connections
    before = served(dm)
    grow(transcript, steps[5][0])
    both(steps[5][1])  # refused: handled in-process, a new daemon started
    assert served(dm) == before
    second = listening(dm)
    assert second != first
    for upto, body in steps[6:]:
        grow(transcript, upto)
        both(body)
    assert served(dm) == before + len(steps) - 6
    assert stored(dm) == stored(ref)


def burst(
    home: Path, env: dict[str, str], bodies: list[dict[str, Any]], kill_when: int = 0
) -> list[tuple[int, str, str]]:
    """Start one hook process per body at once; with ``kill_when`` (a daemon pid), SIGKILL
    it as soon as its first call of the burst is served, the others still in flight."""
    before = served(home)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "convmem", "hook", "claude-code"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "CONVMEM_HOME": str(home), **env},
        )
        for _ in bodies
    ]
    results: list[tuple[str, str]] = [("", "")] * len(procs)

    def talk(n: int) -> None:
        results[n] = procs[n].communicate(json.dumps(bodies[n]), timeout=120)

    threads = [threading.Thread(target=talk, args=(n,)) for n in range(len(procs))]
    for thread in threads:
        thread.start()
    if kill_when:
        wait_for(lambda: served(home) > before, "a call of the burst served")
        kill(kill_when)
    for thread in threads:
        thread.join(timeout=180)
    return [(p.wait(), out, err) for p, (out, err) in zip(procs, results, strict=True)]


def test_concurrent_calls_and_a_kill_among_them_handle_each_payload_once(
    tmp_path: Path, homes: list[Path]
) -> None:
    ref, dm = tmp_path / "ref", tmp_path / "dm"
    homes.append(dm)
    sids = [f"session-{n}" for n in range(8)]
    # a folder (so a project) each: concurrent sessions of one project would see each
    # other's memory in whatever order they ran, and the reference runs in another order
    transcripts = [tmp_path / sid / f"{sid}.jsonl" for sid in sids]
    for t in transcripts:
        t.parent.mkdir()

    def bodies(event: str, **extra: Any) -> list[dict[str, Any]]:
        return [
            payload(event, t, session_id=sid, **extra)
            for sid, t in zip(sids, transcripts, strict=True)
        ]

    for t in transcripts:
        grow(t, line_of(BUDGET))
    starts = bodies("SessionStart", source="startup")
    assert burst(ref, {"CONVMEM_HOOK_DAEMON": "0"}, starts) == [(0, "", "")] * 8
    run_hook(starts[0], dm, env=DAEMON_ENV)
    pid = listening(dm)
    assert burst(dm, DAEMON_ENV, starts[1:]) == [(0, "", "")] * 7
    assert served(dm) == 7

    # eight prompts at once, all served
    prompts = bodies("UserPromptSubmit", prompt=BUDGET)
    want = burst(ref, {"CONVMEM_HOOK_DAEMON": "0"}, prompts)
    assert burst(dm, DAEMON_ENV, prompts) == want
    assert served(dm) == 15

    # eight more while the daemon is killed: its children finish their calls, the
    # connections it had not taken yet are refused or reset and handled in-process
    for t in transcripts:
        grow(t, line_of(LAST))
    prompts = bodies("UserPromptSubmit", prompt=LAST)
    want = burst(ref, {"CONVMEM_HOOK_DAEMON": "0"}, prompts)
    assert burst(dm, DAEMON_ENV, prompts, kill_when=pid) == want
    assert all(BUDGET in out for _, out, _ in want)
    assert not is_daemon(pid)
    for sid in sids:
        got, expected = stored(dm, sid), stored(ref, sid)
        assert got == expected
        assert [text for *_, text in got[0]].count(LAST) == 1


def test_calls_queued_at_a_stopped_daemon_are_handled_once_when_it_dies(
    tmp_path: Path, homes: list[Path]
) -> None:
    """Connections the daemon never accepted are reset when it dies: not taken, so the
    clients handle them in-process."""
    ref, dm = tmp_path / "ref", tmp_path / "dm"
    homes.append(dm)
    sids = [f"queued-{n}" for n in range(3)]
    bodies = []
    for sid in sids:
        transcript = tmp_path / sid / f"{sid}.jsonl"  # a project each, as above
        transcript.parent.mkdir()
        grow(transcript, line_of(BUDGET))
        bodies.append(payload("UserPromptSubmit", transcript, session_id=sid, prompt=BUDGET))
    start_daemon(dm)
    pid = listening(dm)
    os.kill(pid, signal.SIGSTOP)
    threading.Timer(1.5, kill, args=(pid,)).start()
    got = burst(dm, DAEMON_ENV, bodies)
    assert got == burst(ref, {"CONVMEM_HOOK_DAEMON": "0"}, bodies)
    assert served(dm) == 0
    for sid in sids:
        assert stored(dm, sid) == stored(ref, sid)
        assert [text for *_, text in stored(dm, sid)[0]] == [BUDGET]


# --- the daemon's own life -------------------------------------------------------------------


def test_a_stale_socket_file_is_refused_then_replaced(
    tmp_path: Path, homes: list[Path], project: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    homes.append(home)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(home / "hook.sock"))  # bound, never listening: connections are refused
    dead.close()
    (home / "hook.pid").write_text("999999\n")
    transcript = tmp_path / f"{SID}.jsonl"
    body = payload("SessionStart", transcript)
    assert outcome(run_hook(body, home, env=DAEMON_ENV)) == (0, "", "")
    assert served(home) == 0
    pid = listening(home)
    assert int((home / "hook.pid").read_text()) == pid
    assert outcome(run_hook(body, home, env=DAEMON_ENV)) == (0, "", "")
    assert served(home) == 1


def test_racing_daemons_leave_one(tmp_path: Path, homes: list[Path]) -> None:
    home = tmp_path / "home"
    homes.append(home)
    racers = [start_daemon(home) for _ in range(4)]
    winner = listening(home)
    losers = [p for p in racers if p.pid != winner]
    assert len(losers) == 3
    for p in losers:
        assert p.wait(timeout=WAIT) == 0
    assert is_daemon(winner)
    assert sum(line.endswith("another daemon holds the lock") for line in debug_log(home)) == 3
    late = start_daemon(home)
    assert late.wait(timeout=WAIT) == 0 and is_daemon(winner)


def test_idle_daemon_exits_and_cleans_up(tmp_path: Path, homes: list[Path]) -> None:
    home = tmp_path / "home"
    homes.append(home)
    proc = start_daemon(home, {"CONVMEM_HOOK_DAEMON_IDLE": "1"})
    listening(home)
    assert proc.wait(timeout=WAIT) == 0
    assert debug_log(home)[-1].endswith("exit: idle")
    assert sorted(p.name for p in home.iterdir()) == ["hook-daemon.log", "hook.lock"]


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_daemon_exits_when_its_socket_file_goes(
    tmp_path: Path, homes: list[Path], how: str
) -> None:
    home = tmp_path / "home"
    homes.append(home)
    proc = start_daemon(home)
    listening(home)
    (home / "hook.sock").unlink()
    if how == "replaced":
        other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        other.bind(str(home / "hook.sock"))
        other.close()
    assert proc.wait(timeout=WAIT) == 0
    assert debug_log(home)[-1].endswith(f"exit: socket {how}")
    assert (home / "hook.sock").exists() == (how == "replaced")  # not ours: left alone


def test_files_are_private_and_a_shared_folder_is_refused(
    tmp_path: Path, homes: list[Path]
) -> None:
    home = tmp_path / "new" / "home"
    homes.append(home)
    start_daemon(home)
    listening(home)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    for name in ("hook.sock", "hook.lock", "hook.pid", "hook-daemon.log"):
        assert stat.S_IMODE((home / name).lstat().st_mode) == 0o600, name
    assert stat.S_ISSOCK((home / "hook.sock").lstat().st_mode)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    homes.append(shared)
    assert start_daemon(shared).wait(timeout=WAIT) == 1
    assert not (shared / "hook.sock").exists() and "refused" in debug_log(shared)[-1]


def test_the_store_stays_open_while_the_daemon_lives(tmp_path: Path, homes: list[Path]) -> None:
    """No call is the store's last connection, so none checkpoints the WAL on close; the
    keeper closes last when the daemon ends, and the WAL is folded back in."""
    home = tmp_path / "home"
    homes.append(home)
    body = payload("UserPromptSubmit", tmp_path / "t.jsonl", prompt=BUDGET)
    run_hook(body, home, env=DAEMON_ENV)
    pid = listening(home)
    assert not (home / "memory.sqlite-wal").exists()  # the in-process call closed last
    time.sleep(hook_daemon.TICK * 2)  # the keeper opens the store on its next tick
    assert outcome(run_hook(body, home, env=DAEMON_ENV)) == (0, "", "")
    assert served(home) == 1 and (home / "memory.sqlite-wal").stat().st_size > 0
    os.kill(pid, signal.SIGTERM)
    wait_for(lambda: not (home / "memory.sqlite-wal").exists(), "the WAL to be checkpointed")
    assert debug_log(home)[-1].endswith("exit: signal")
    assert [text for *_, text in stored(home)[0]] == [BUDGET, BUDGET]


def test_switched_off_no_daemon(tmp_path: Path) -> None:
    home = tmp_path / "home"
    body = payload("SessionStart", tmp_path / "t.jsonl")
    for _ in range(2):
        assert run_hook(body, home, env={**DAEMON_ENV, "CONVMEM_HOOK_DAEMON": "0"}).returncode == 0
    time.sleep(0.5)
    assert not (home / "hook.lock").exists() and not debug_log(home)


# --- the protocol ---------------------------------------------------------------------------


def raw_call(home: Path, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(WAIT)
        conn.connect(str(home / "hook.sock"))
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def request(**fields: bytes) -> bytes:
    values = {
        "identity": b"convmem 0.0\0/elsewhere\0/usr/bin/python3",
        "host": b"claude-code",
        "options": b"",
        "cwd": os.fsencode(os.getcwd()),
        "umask": b"18",
        "env": b"",
        "encoding": b"utf-8",
        "errors": b"strict",
        "payload": b"{}",
        **fields,
    }
    return hook_daemon.MAGIC + b"".join(
        b"%d\n" % len(values[name]) + values[name] for name in hook_daemon.FIELDS
    )


def test_another_convmem_or_a_bad_request_is_declined(tmp_path: Path, homes: list[Path]) -> None:
    home = tmp_path / "home"
    homes.append(home)
    start_daemon(home)
    listening(home)
    assert raw_call(home, request()) == b"D"  # another install's client: not taken
    assert raw_call(home, b"GET / HTTP/1.1\r\n\r\n") == b"D"
    assert raw_call(home, request()[:-1]) == b""  # cut short: closed without a verdict
    assert served(home) == 0


@pytest.mark.skipif(sys.platform != "linux", reason="a late verdict fails open elsewhere")
def test_a_late_verdict_is_settled_then_handled_in_process(
    tmp_path: Path, homes: list[Path]
) -> None:
    """A stuck daemon never gets the call: the client shuts its read side, sees no
    ``A`` queued, and handles the call itself; the daemon's late ``A`` then fails."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    homes.append(home)  # the client starts a real daemon for next time
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.bind(str(home / "hook.sock"))
    stuck.listen(1)
    late: list[BaseException | None] = []

    def never_in_time() -> None:
        conn, _ = stuck.accept()
        time.sleep(hook_daemon.VERDICT_TIMEOUT + 1.5)
        try:
            conn.sendall(b"A")
            late.append(None)
        except OSError as exc:
            late.append(exc)
        conn.close()

    server = threading.Thread(target=never_in_time)
    server.start()
    body = payload("UserPromptSubmit", tmp_path / "t.jsonl", prompt=BUDGET)
    began = time.monotonic()
    result = run_hook(body, home, env={**DAEMON_ENV, "CONVMEM_HOOK_DAEMON_IDLE": "1"})
    assert result.returncode == 0 and result.stderr == ""
    assert time.monotonic() - began >= hook_daemon.VERDICT_TIMEOUT
    server.join(timeout=WAIT)
    stuck.close()
    assert len(late) == 1 and isinstance(late[0], BrokenPipeError)
    with MemoryRuntime.open(load_settings(home=home, env={})) as rt:
        assert [e.text for e in rt.store.events(SID)] == [BUDGET]  # handled, once


def test_a_served_call_imports_almost_nothing(tmp_path: Path, homes: list[Path]) -> None:
    home = tmp_path / "home"
    homes.append(home)
    start_daemon(home)
    listening(home)
    code = (
        "import io, sys\n"
        "from convmem.adapters.hook_entry import run_hook\n"
        "rc = run_hook(['claude-code'])\n"
        "heavy = ('json', 'sqlite3', 'subprocess', 'convmem.config', 'convmem.runtime', 'socket')\n"
        "print(rc, sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(payload("SessionStart", tmp_path / "t.jsonl")),
        capture_output=True,
        text=True,
        env={**os.environ, "CONVMEM_HOME": str(home)},
        timeout=120,
    )
    assert result.stderr == "0 []\n" and served(home) == 1


def _imported(*argv: str, stdin: str = "", env: dict[str, str] | None = None) -> set[str]:
    """The modules a Python command imports (``-X importtime`` names each on stderr)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [line.split("|") for line in result.stderr.splitlines()]
    return {parts[-1].strip() for parts in lines if parts[0].startswith("import time:")}


def test_the_installed_hook_script_imports_less_than_the_launcher(
    tmp_path: Path, homes: list[Path]
) -> None:
    """``convmem-hook`` (what the hooks run) hands a call over without the ``re`` that
    the installer's ``convmem`` launcher imports before convmem starts."""
    script = Path(sys.executable).with_name("convmem-hook")
    launcher = Path(sys.executable).with_name("convmem")
    assert script.is_file() and launcher.is_file(), "pip install -e . writes both"
    home = tmp_path / "home"
    homes.append(home)
    start_daemon(home)
    listening(home)
    body = json.dumps(payload("SessionStart", tmp_path / "t.jsonl"))
    env = {"CONVMEM_HOME": str(home)}
    bare = _imported("-c", "pass")
    ours = _imported(str(script), "claude-code", stdin=body, env=env) - bare
    theirs = _imported(str(launcher), "hook", "claude-code", stdin=body, env=env) - bare
    assert served(home) == 2
    assert "re" in theirs and "re" not in ours, sorted(ours)
    assert not ours & {"json", "sqlite3", "subprocess", "socket", "convmem.config", "typing"}


def test_changed_sources_are_noticed(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text("x = 1\n")
    daemon = hook_daemon.Daemon(str(tmp_path / "home"))
    daemon.sources = {str(source): source.stat().st_mtime_ns}
    assert not daemon._sources_changed()
    os.utime(source, ns=(0, source.stat().st_mtime_ns + 1_000_000))
    assert daemon._sources_changed()


def test_the_hook_modules_import_one_way_and_stay_small() -> None:
    """hook_entry → hook_client; hook_daemon → both; nothing imports back (no circle)."""
    import ast

    folder = REPO / "src" / "convmem" / "adapters"
    names = ("hook_entry", "hook_client", "hook_daemon", "hook_warmup")
    graph: dict[str, set[str]] = {}
    for name in names:
        text = (folder / f"{name}.py").read_text("utf-8")
        assert len(text.splitlines()) < 600, name
        deps: set[str] = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module == "convmem.adapters":
                    deps |= {a.name for a in node.names if a.name in names}
                elif node.module.removeprefix("convmem.adapters.") in names:
                    deps.add(node.module.removeprefix("convmem.adapters."))
        graph[name] = deps - {name}
    assert graph["hook_client"] == set()  # the client half knows nothing of the rest
    assert graph["hook_entry"] == {"hook_client"}

    def reaches(start: str, target: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(
            dep == target or (dep not in seen and reaches(dep, target, seen | {dep}))
            for dep in graph[start]
        )

    assert not [name for name in names if reaches(name, name)], graph
