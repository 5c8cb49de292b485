"""The command line's answers to a new user's mistakes, and private files (issue 13).

Item 7 (a YAML alias bomb in SKILL.md), item 11 (``export -o`` under any umask), and
the "Also" list: a read-only command never creates a data folder, a missing output
folder is one sentence, ``items --status`` takes only known statuses, every command
given an unknown ``--session`` exits 1, and ``convmem.log`` is rotated.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, Cli
from convmem.core.paths import LOG_MAX_BYTES, append_private


def test_a_yaml_alias_bomb_is_refused_in_one_line(cli: Cli, tmp_path: Path) -> None:
    bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for n, prev in zip("bcdefghi", "abcdefgh", strict=True):
        bomb.append(f"{n}: &{n} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]")
    folder = tmp_path / "bomb"
    folder.mkdir()
    text = "---\nname: bomb\n" + "\n".join(bomb) + "\n---\n- Never deploy on Fridays.\n"
    (folder / "SKILL.md").write_text(text, "utf-8")
    assert len(text) < 600  # 8^8 strings once expanded
    good = tmp_path / "good"
    good.mkdir()
    (good / "SKILL.md").write_text("---\nname: good\n---\n- Always run the tests.\n", "utf-8")
    result = cli("skills", "ingest", str(folder), str(good), "--json")
    report = result.json()
    assert [f["name"] for f in report["files"]] == ["good"]
    [problem] = report["problems"]
    assert "alias" in problem and str(folder / "SKILL.md") in problem


@pytest.mark.parametrize("mask", [0o000, 0o022])
def test_export_files_are_private_under_any_umask(
    cli: Cli, home: Path, tmp_path: Path, mask: int
) -> None:
    assert cli("ingest", str(FIXTURES / "en_basic.jsonl")).code == 0
    out = tmp_path / "export.json"
    out.write_text("old")
    os.chmod(out, 0o666)
    env = {**os.environ, "CONVMEM_HOME": str(home)}
    for target in (out, tmp_path / "new.json"):
        proc = subprocess.run(
            [sys.executable, "-m", "convmem", "export", "--session", "en1", "-o", str(target)],
            env=env,
            capture_output=True,
            text=True,
            preexec_fn=lambda: os.umask(mask),
        )
        assert proc.returncode == 0, proc.stderr
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        assert '"session_id": "en1"' in target.read_text()


def test_export_to_a_missing_folder_is_one_sentence(cli: Cli, tmp_path: Path) -> None:
    assert cli("ingest", str(FIXTURES / "en_basic.jsonl")).code == 0
    result = cli("export", "--session", "en1", "-o", str(tmp_path / "missing" / "x.json"))
    assert result.code == 1
    [line] = result.err.strip().splitlines()
    assert line.startswith("Error: ") and "does not exist" in line and "internal" not in line


def test_export_to_a_full_device_is_one_sentence(cli: Cli) -> None:
    assert cli("ingest", str(FIXTURES / "en_basic.jsonl")).code == 0
    mode = os.stat("/dev/full").st_mode
    result = cli("export", "--session", "en1", "-o", "/dev/full")
    assert result.code == 1
    [line] = result.err.strip().splitlines()
    assert "cannot write /dev/full: No space left on device" in line and "internal" not in line
    assert os.stat("/dev/full").st_mode == mode  # a device keeps its permissions


@pytest.mark.sqlite_only  # about a data folder's SQLite file
def test_commands_that_need_a_store_never_create_a_data_folder(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "dir"
    env = {k: v for k, v in os.environ.items() if k not in ("CONVMEM_STORE", "CONVMEM_HOME")}
    for args in (
        ["status"],
        ["status", "--json"],
        ["search", "budget"],
        ["explain"],
        ["items", "--session", "s"],
        ["inspect", "mem_x"],
        ["export", "--session", "s"],
        ["skills", "list"],
        ["rules", "show"],
        ["assemble", "--session", "s"],
        # they change only what a store holds: no store, nothing to change
        ["retract", "mem_x"],
        ["forget", "mem_x"],
        ["promote", "mem_x"],
        ["resolve", "mem_x"],
        ["reactivate", "mem_x"],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "convmem", "--home", str(missing), *args],
            env=env,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 1, (args, proc.stderr)
        [line] = proc.stderr.strip().splitlines()
        assert "no convmem store at" in line, line
    assert not (tmp_path / "nonexistent").exists()


def test_an_unknown_session_exits_1_for_every_command(cli: Cli) -> None:
    assert cli("ingest", str(FIXTURES / "en_basic.jsonl")).code == 0
    for args in (
        ["status", "--session", "nope"],
        ["items", "--session", "nope"],
        ["search", "budget", "--session", "nope"],
        ["explain", "--session", "nope"],
        ["assemble", "--session", "nope"],
        ["export", "--session", "nope"],
        ["purge", "--session", "nope", "--yes"],
    ):
        result = cli(*args)
        assert result.code == 1, (args, result)
        [line] = result.err.strip().splitlines()
        assert "no session 'nope'" in line, (args, line)


def test_items_takes_only_known_statuses(cli: Cli) -> None:
    assert cli("ingest", str(FIXTURES / "en_basic.jsonl")).code == 0
    result = cli("items", "--session", "en1", "--status", "bogus")
    assert result.code == 2 and "bogus" in result.err
    assert cli("items", "--session", "en1", "--status", "superseded").code == 0


def test_the_error_log_is_rotated(tmp_path: Path) -> None:
    home = tmp_path / "home"
    line = "x" * 999 + "\n"
    for _ in range(LOG_MAX_BYTES // 1000 * 2 + 10):
        append_private(home / "convmem.log", line)
    log, old = home / "convmem.log", home / "convmem.log.1"
    assert old.exists() and log.stat().st_size <= LOG_MAX_BYTES + 1000
    assert old.stat().st_size <= LOG_MAX_BYTES + 1000
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert sorted(p.name for p in home.iterdir()) == ["convmem.log", "convmem.log.1"]
