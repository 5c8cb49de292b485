"""The supported install, for real: the built wheel in a fresh environment, then Claude Code.

The wheel is built from this source tree and installed (not editable) into a new
virtualenv, as ``uv tool install`` or ``pipx install`` would; only that environment's
``bin`` is on ``PATH`` (not the one running the tests), so the hooks Claude Code runs
can only be the installed ``convmem``. The packaged plugin must pass the real
``claude plugin validate``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_model import FakeModel, all_user_text
from hosts import claude_env

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CONSTRAINT = "The export job must never run longer than 45 minutes."


@pytest.fixture(scope="module")
def tool_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment with the wheel built from this tree installed in it."""
    root = tmp_path_factory.mktemp("tool")
    dist = root / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = dist.glob("convmem-*.whl")
    env_dir = root / "env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    installed = subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    return env_dir


def _path(tool: Path) -> str:
    # the tool's bin first, then the system's; never this test run's own environment
    keep = [p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if p]
    ours = str(Path(sys.executable).parent)
    return os.pathsep.join([str(tool / "bin"), *(p for p in keep if p != ours)])


def test_the_wheel_is_not_the_source_tree_and_its_plugin_validates(
    claude: Path, tool_env: Path, tmp_path: Path
) -> None:
    where = subprocess.run(
        [
            str(tool_env / "bin" / "python"),
            "-c",
            "import convmem.adapters, pathlib; "
            "print(pathlib.Path(convmem.adapters.__file__).parent / 'claude_plugin')",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    plugin = Path(where.stdout.strip())
    assert str(tool_env) in str(plugin) and str(REPO) not in str(plugin)
    for part in (".claude-plugin/plugin.json", "hooks/hooks.json", "commands/convmem.md"):
        assert (plugin / part).is_file(), part
    home = tmp_path / "home"
    home.mkdir()
    checked = subprocess.run(
        [str(claude), "plugin", "validate", str(plugin)],
        capture_output=True,
        text=True,
        env={"HOME": str(home), "PATH": _path(tool_env)},
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Validation passed" in checked.stdout


def test_claude_code_runs_the_installed_convmem(
    claude: Path, tool_env: Path, tmp_path: Path
) -> None:
    home, project, store = tmp_path / "home", tmp_path / "proj", tmp_path / "convmem"
    for folder in (home, project, store):
        folder.mkdir()
    path = _path(tool_env)
    setup_env = {"HOME": str(home), "PATH": path, "CONVMEM_HOME": str(store)}
    installed = subprocess.run(
        ["convmem", "install", "claude-code", "--project", str(project)],
        capture_output=True,
        text=True,
        env=setup_env,
        timeout=120,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    assert "not on PATH" not in installed.stderr
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    commands = {h["command"] for g in settings["hooks"].values() for e in g for h in e["hooks"]}
    assert commands == {"convmem-hook claude-code"}
    assert not (project / ".claude" / "settings.json").exists()  # the team's file untouched

    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        env = claude_env(home, fm.base_url, CONVMEM_HOME=str(store))
        env["PATH"] = path
        session = None
        for prompt in (
            CONSTRAINT,
            "Let us plan the export schema.",
            "/compact",
            "How long may it run?",
        ):
            cmd = [str(claude), "-p", prompt, "--output-format", "json"]
            if session:
                cmd += ["--resume", session]
            proc = subprocess.run(
                cmd, cwd=project, env=env, capture_output=True, text=True, timeout=180, check=False
            )
            assert proc.returncode == 0, proc.stderr[-2000:]
            session = session or json.loads(proc.stdout)["session_id"]
        last = fm.main_requests()[-1].body
    assert "How long may it run?" in all_user_text(last)
    assert CONSTRAINT in all_user_text(last), "the installed convmem did not bring it back"
    doctor = subprocess.run(
        ["convmem", "doctor", "--project", str(project), "--live"],
        capture_output=True,
        text=True,
        env=setup_env,
        timeout=300,
        check=False,
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert f"`convmem` on PATH: {tool_env / 'bin' / 'convmem'}" in doctor.stdout
    assert (
        "UserPromptSubmit" in doctor.stdout
        and "never" not in doctor.stdout.split("UserPromptSubmit")[1][:12]
    )
    assert not (store / "convmem.log").exists(), (store / "convmem.log").read_text()


def test_pipx_installs_the_source_tree_as_a_tool(tmp_path: Path) -> None:
    """The documented tool install: `pipx install` of the source folder puts a working
    `convmem` on PATH, in an environment of its own."""
    env = {
        **os.environ,
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pipx", "install", str(REPO)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    command = tmp_path / "bin" / "convmem"
    assert command.exists()
    assert (tmp_path / "bin" / "convmem-hook").exists()  # what the hooks run, beside it
    home = tmp_path / "home"
    version = subprocess.run(
        [str(command), "--home", str(home), "doctor", "--project", str(tmp_path)],
        capture_output=True,
        text=True,
        env={"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.defpath}", "HOME": str(tmp_path)},
        timeout=120,
        check=False,
    )
    assert version.returncode == 0, version.stderr
    assert f"`convmem` on PATH: {command}" in version.stdout
    # not the source tree: its own copy inside pipx's environment
    where = subprocess.run(
        [
            str(tmp_path / "pipx" / "venvs" / "convmem" / "bin" / "python"),
            "-c",
            "import convmem; print(convmem.__file__)",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert str(tmp_path / "pipx") in where.stdout and str(REPO) not in where.stdout
