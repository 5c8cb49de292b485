"""Locate (or install) the real host programs for end-to-end tests, and build their env.

Hosts live in a cache directory, ``$CONVMEM_E2E_CACHE`` or ``~/.cache/convmem-e2e``:

* Claude Code: ``npm install @anthropic-ai/claude-code@2.1.328 --prefix <cache>/claude-code``
* DSH: venv ``<cache>/dsh-venv`` with ``pip install deepseek-harness-sdk==0.2.1rc2``

``.ci/install-hosts.sh`` does the same from bash. Each ``find_*``/``ensure_*`` function
returns ``(value, reason)``: ``value`` is None when the host is unavailable and ``reason``
says why, so a test can hand it to ``conftest.unavailable`` (a skip, or a failure in
CI)::

    claude, why = ensure_claude_code()
    if claude is None:
        unavailable(f"Claude Code unavailable: {why}")
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

CLAUDE_CODE_VERSION = "2.1.328"
DSH_SDK_VERSION = "0.2.1rc2"
INSTALL_TIMEOUT = 600


def cache_dir() -> Path:
    return Path(os.environ.get("CONVMEM_E2E_CACHE") or Path.home() / ".cache" / "convmem-e2e")


# --------------------------------------------------------------------------- Claude Code
def find_claude_code(cache: Path | None = None) -> tuple[Path | None, str]:
    """Return the installed ``claude`` binary of the pinned version, without installing."""
    prefix = (cache or cache_dir()) / "claude-code"
    binary = prefix / "node_modules" / ".bin" / "claude"
    pkg = prefix / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json"
    if not binary.exists() or not pkg.exists():
        return None, f"claude-code not installed in {prefix}"
    version = json.loads(pkg.read_text()).get("version")
    if version != CLAUDE_CODE_VERSION:
        return None, f"claude-code {version} in {prefix}, want {CLAUDE_CODE_VERSION}"
    return binary, "ok"


def ensure_claude_code(cache: Path | None = None) -> tuple[Path | None, str]:
    """Return the ``claude`` binary, installing it with npm if needed."""
    found, why = find_claude_code(cache)
    if found:
        return found, why
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm not found on PATH"
    prefix = (cache or cache_dir()) / "claude-code"
    prefix.mkdir(parents=True, exist_ok=True)
    cmd = [
        npm,
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "--prefix",
        str(prefix),
        f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}",
    ]
    err = _run(cmd)
    if err:
        return None, f"npm install failed: {err}"
    return find_claude_code(cache)


# --------------------------------------------------------------------------- DSH
@dataclass(frozen=True)
class DshInstall:
    python: Path  # venv python, importing ``deepseek_harness`` (the SDK)
    dsh: Path  # the ``dsh`` command (a wrapper launching the self-contained runtime)


def find_dsh(cache: Path | None = None) -> tuple[DshInstall | None, str]:
    """Return the DSH venv python and ``dsh`` binary, without installing."""
    root = (cache or cache_dir()) / "dsh-venv"
    python, dsh = root / "bin" / "python", root / "bin" / "dsh"
    if not python.exists() or not dsh.exists():
        return None, f"DSH not installed in {root}"
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m, deepseek_harness; "
            "print(m.version('deepseek-harness-sdk'))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if probe.returncode != 0:
        return None, f"deepseek_harness not importable in {root}: {probe.stderr.strip()[-300:]}"
    if probe.stdout.strip() != DSH_SDK_VERSION:
        return (
            None,
            f"deepseek-harness-sdk {probe.stdout.strip()} in {root}, want {DSH_SDK_VERSION}",
        )
    return DshInstall(python, dsh), "ok"


def ensure_dsh(cache: Path | None = None) -> tuple[DshInstall | None, str]:
    """Return the DSH install, creating the venv and pip-installing if needed."""
    found, why = find_dsh(cache)
    if found:
        return found, why
    root = (cache or cache_dir()) / "dsh-venv"
    python = root / "bin" / "python"
    if not python.exists():
        try:
            venv.EnvBuilder(with_pip=True, clear=True).create(root)
        except Exception as exc:
            return None, f"cannot create venv {root}: {exc}"
    err = _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            f"deepseek-harness-sdk=={DSH_SDK_VERSION}",
            "zstandard",
        ]
    )
    if err:
        return None, f"pip install failed: {err}"
    return find_dsh(cache)


def _run(cmd: list[str]) -> str | None:
    """Run an install command; return None on success, else a short error text."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode != 0:
        return f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-500:]}"
    return None


# --------------------------------------------------------------------------- environments
def _base_env() -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TERM", "SYSTEMROOT")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.setdefault("PATH", os.defpath)
    # Hooks written in Python should run the interpreter running the tests.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return env


def claude_env(home: str | Path, base_url: str, **extra: str) -> dict[str, str]:
    """Environment for ``claude -p`` against the stand-in model, isolated in ``home``.

    Transcripts land in ``<home>/.claude/projects/<cwd-slug>/<session_id>.jsonl``.
    """
    env = _base_env()
    env.update(
        {
            "HOME": str(home),
            "ANTHROPIC_API_KEY": "sk-test",
            "ANTHROPIC_BASE_URL": base_url,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
        }
    )
    env.update(extra)
    return env


def dsh_env(dsh_home: str | Path, base_url: str, **extra: str) -> dict[str, str]:
    """Environment for ``dsh`` / the DSH SDK against the stand-in model.

    ``DSH_HOME`` is mandatory for dsh (it never falls back to ~/.dsh); sessions land in
    ``$DSH_HOME/sessions/<cwd-slug>/<session-id>/session.v4.jsonl.zstd``.
    """
    env = _base_env()
    env.update(
        {
            "HOME": str(dsh_home),
            "DSH_HOME": str(dsh_home),
            "DEEPSEEK_BASE_URL": base_url,
            "DEEPSEEK_API_KEY": "fake-key",
            "DSH_TELEMETRY_MODE": "DISABLED",
            "DSH_PERMISSION_MODE": "danger-full-access",
        }
    )
    env.update(extra)
    return env


def convmem(home: str | Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``convmem --home HOME ARGS`` as a subprocess of this interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "convmem", "--home", str(home), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
