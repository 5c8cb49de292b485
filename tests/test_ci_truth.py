"""A green CI run must not hide tests that never ran (issue 13, "Tests that tell the truth").

With ``CONVMEM_CI=1`` (set by ``.ci/run``) a missing host or tool fails: the real-host
tests fail instead of skipping, and ``.ci/install-hosts.sh`` exits non-zero when npm
is missing. Outside CI the same tests skip, loudly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO

TOOLS = ("bash", "mkdir", "grep", "mktemp", "rm", "dirname", "cat", "env")


def _path_without_npm(tmp_path: Path) -> str:
    """A PATH with the few tools the scripts use, and Python, but no node or npm."""
    folder = tmp_path / "bin"
    folder.mkdir(parents=True)
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (folder / tool).symlink_to(found)
    (folder / "python3").symlink_to(sys.executable)
    return str(folder)


def _e2e(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": _path_without_npm(tmp_path),
        "CONVMEM_E2E_CACHE": str(tmp_path / "empty-cache"),
    }
    env.pop("CONVMEM_CI", None)
    if ci:
        env["CONVMEM_CI"] = "1"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            str(REPO / "tests" / "e2e" / "test_claude_code_e2e.py"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_missing_host_fails_in_ci_and_skips_outside(tmp_path: Path) -> None:
    outside = _e2e(tmp_path / "a", ci=False)
    assert outside.returncode == 0, outside.stdout[-2000:]
    assert "skipped" in outside.stdout and "npm not found" in outside.stdout + outside.stderr
    inside = _e2e(tmp_path / "b", ci=True)
    assert inside.returncode == 1, inside.stdout[-2000:]
    assert "CONVMEM_CI=1: a missing host or tool fails the run" in inside.stdout


def test_install_hosts_fails_without_npm_in_ci(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    # DSH from the machine's cache when it is there, so that only npm is missing
    installed = Path(os.environ.get("CONVMEM_E2E_CACHE") or Path.home() / ".cache/convmem-e2e")
    if (installed / "dsh-venv" / "bin" / "dsh").exists():
        (cache / "dsh-venv").symlink_to(installed / "dsh-venv")
    env = {**os.environ, "PATH": _path_without_npm(tmp_path), "CONVMEM_E2E_CACHE": str(cache)}
    script = REPO / ".ci" / "install-hosts.sh"
    env.pop("CONVMEM_CI", None)
    ci = subprocess.run(
        ["bash", str(script)],
        env={**env, "CONVMEM_CI": "1"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert ci.returncode != 0 and "npm not found" in ci.stderr, ci.stderr[-2000:]
    if (cache / "dsh-venv").exists():
        local = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
        assert local.returncode == 0 and "skipping Claude Code" in local.stderr, local.stderr
