"""``convmem doctor`` and ``status``'s warning, through real subprocesses.

Broken installs are made the way they break for real: a virtualenv moved after the
hooks were written with its path, a hook entry removed from the settings file. The
live check sends its synthetic event through the installed command itself.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import REPO, Cli, ev, write_events

BIN = Path(sys.executable).parent  # holds this test run's `convmem` script


def env_for(tmp_path: Path, path: str | None = None) -> dict[str, str]:
    """An isolated user home (no ~/.claude of the machine) and a chosen PATH."""
    user = tmp_path / "user"
    user.mkdir(exist_ok=True)
    return {"HOME": str(user), "PATH": path or f"{BIN}{os.pathsep}{os.defpath}", "DSH_HOME": ""}


def project_with_hooks(cli: Cli, tmp_path: Path, *extra: str) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    done = cli("install", "claude-code", "--project", str(project), *extra, env=env_for(tmp_path))
    assert done.code == 0, done
    return project


def test_a_working_install_passes_and_the_live_event_is_captured(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    project = project_with_hooks(cli, tmp_path)
    result = cli("doctor", "--project", str(project), "--live", env=env_for(tmp_path))
    assert result.code == 0, result
    lines = result.out.splitlines()
    assert any(line.startswith("OK    convmem: `convmem` on PATH") for line in lines)
    assert any("settings.local.json: convmem hooks for all 7 events" in line for line in lines)
    assert any(
        "live check: a Stop event through `convmem-hook claude-code`" in line for line in lines
    )
    assert not any(line.startswith("ERROR") for line in lines), result.out
    # the live check's event reached the hooks' own record, and its session is gone again
    again = cli("doctor", "--project", str(project), "--json", env=env_for(tmp_path)).json()
    seen = next(f for f in again if f["what"].startswith("last event reached convmem"))
    assert "Stop just now" in seen["what"] or "Stop 1 minute ago" in seen["what"]
    status = cli("status", "--json").json()
    assert not [s for s in status["sessions"] if s["session_id"].startswith("convmem-doctor")]


def _moved_venv(tmp_path: Path) -> tuple[Path, Path]:
    """A virtualenv with a console script, as pip writes it, then moved elsewhere."""
    old = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(old)
    script = old / "bin" / "convmem"
    paths = [str(REPO / "src"), *site.getsitepackages()]  # convmem and its dependencies
    script.write_text(
        f"#!{old / 'bin' / 'python'}\nimport sys\nsys.path[:0] = {paths!r}\n"
        "from convmem._entry import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    ran = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr  # it works where it was made
    moved = tmp_path / "moved"
    shutil.move(old, moved)
    return old, moved


def test_a_moved_venv_is_found_and_the_fix_named(cli: Cli, tmp_path: Path) -> None:
    old, moved = _moved_venv(tmp_path)
    # the old install wrote the venv's path into the hooks
    project = project_with_hooks(
        cli, tmp_path, "--command", f"{old / 'bin' / 'convmem'} hook claude-code"
    )
    result = cli("doctor", "--project", str(project), env=env_for(tmp_path))
    assert result.code == 1, result
    [line] = [x for x in result.out.splitlines() if "does not resolve" in x]
    assert line.startswith("ERROR claude-code:")
    assert f"{old / 'bin' / 'convmem'} does not exist (a moved or deleted install?)" in line
    assert f"fix: convmem install claude-code --project {project}" in line
    assert "uv tool install convmem" in line
    # the script moved with the venv, but its interpreter line still names the old place:
    # it resolves, and only the live check can tell that it cannot run
    settings = project / ".claude" / "settings.local.json"
    text = settings.read_text().replace(str(old), str(moved))
    settings.write_text(text)
    live = cli("doctor", "--project", str(project), "--live", env=env_for(tmp_path))
    assert live.code == 1, live
    [line] = [x for x in live.out.splitlines() if "live check" in x]
    assert line.startswith("ERROR claude-code: live check:") and "failed (exit 127" in line
    assert "fix: reinstall the hooks" in line


def test_a_removed_hook_is_found_and_the_fix_named(cli: Cli, tmp_path: Path) -> None:
    project = project_with_hooks(cli, tmp_path)
    settings = project / ".claude" / "settings.local.json"
    data = json.loads(settings.read_text())
    del data["hooks"]["UserPromptSubmit"]
    settings.write_text(json.dumps(data))
    result = cli("doctor", "--project", str(project), env=env_for(tmp_path))
    assert result.code == 1, result
    [line] = [x for x in result.out.splitlines() if "no convmem hook for" in x]
    assert line == (
        f"ERROR claude-code: {settings}: no convmem hook for UserPromptSubmit; "
        f"fix: convmem install claude-code --project {project}"
    )
    # the fix it names repairs it
    assert cli("install", "claude-code", "--project", str(project), env=env_for(tmp_path)).code == 0
    assert "no convmem hook for" not in cli("doctor", "--project", str(project)).out


def test_nothing_installed_and_convmem_off_path(cli: Cli, tmp_path: Path) -> None:
    project = tmp_path / "empty"
    project.mkdir()
    result = cli("doctor", "--project", str(project), env=env_for(tmp_path, path=os.defpath))
    assert result.code == 0, result
    assert "WARN  convmem: `convmem` is not on PATH here; fix: install convmem as a tool" in (
        result.out
    )
    assert f"fix: convmem install claude-code --project {project}" in result.out


def test_status_warns_when_an_installed_host_is_quiet(cli: Cli, tmp_path: Path) -> None:
    project = project_with_hooks(cli, tmp_path)
    quiet = subprocess.run(
        [sys.executable, "-m", "convmem", "status"],
        cwd=project,
        env={**os.environ, **env_for(tmp_path), "CONVMEM_HOME": str(tmp_path / "h")},
        capture_output=True,
        text=True,
        check=False,
    )
    # no store yet: one sentence (exit 1) that names the quiet host
    assert quiet.returncode == 1, quiet.stderr
    assert len(quiet.stderr.strip().splitlines()) == 1
    assert "no convmem store at" in quiet.stderr
    assert "warning: claude-code is set up to use convmem but no event arrived" in quiet.stderr
    assert "(last: never); run `convmem doctor --live`" in quiet.stderr


def test_dsh_profiles_are_checked_live(cli: Cli, home: Path, tmp_path: Path) -> None:
    dsh_home = tmp_path / "dsh"
    (dsh_home / "profiles" / "work").mkdir(parents=True)
    env = env_for(tmp_path)
    assert (
        cli("install", "dsh", "--profile", "work", "--dsh-home", str(dsh_home), env=env).code == 0
    )
    result = cli("doctor", "--dsh-home", str(dsh_home), "--live", env=env)
    assert result.code == 0, result
    assert "OK    dsh: profile work: convmem's plugin and server command" in result.out
    assert "OK    dsh: live check: an event through `convmem serve dsh` was captured" in result.out
    (dsh_home / "profiles" / "work" / "convmem-plugin.mjs").unlink()
    broken = cli("doctor", "--dsh-home", str(dsh_home), env=env)
    assert broken.code == 1
    assert "fix: convmem install dsh --profile work" in broken.out


@pytest.mark.sqlite_only  # about the SQLite file a hook cannot open
def test_a_store_the_hooks_cannot_open_is_an_error(cli: Cli, home: Path, tmp_path: Path) -> None:
    project = project_with_hooks(cli, tmp_path)
    events = write_events(tmp_path / "e.jsonl", [ev(1, "user/message", "hi", "s")])
    assert cli("ingest", str(events)).code == 0
    fine = cli("doctor", "--project", str(project), env=env_for(tmp_path))
    assert f"OK    store: {home / 'memory.sqlite'} opens" in fine.out, fine
    (home / "memory.sqlite").write_bytes(os.urandom(100_000))
    for name in ("memory.sqlite-wal", "memory.sqlite-shm"):
        (home / name).unlink(missing_ok=True)
    payload = {
        "session_id": "s2",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "hello",
        "transcript_path": str(tmp_path / "none.jsonl"),
        "cwd": str(project),
    }
    hook = subprocess.run(
        [str(BIN / "convmem-hook"), "claude-code", "--home", str(home)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, **env_for(tmp_path)},
        check=False,
    )
    assert hook.returncode == 0  # the host is never stopped by convmem
    broken = cli("doctor", "--project", str(project), env=env_for(tmp_path))
    assert broken.code == 1, broken
    assert "ERROR store: " in broken.out and "cannot be read" in broken.out
    assert "WARN  store: 1 hook error logged in the last day" in broken.out
