"""Project memory with the real hosts: what earlier sessions settled reaches a new one.

* Claude Code 2.1.328: session 1 states a constraint and a decision; session 2 (a new
  session, no ``--resume``) corrects the decision; session 3 (new again) asks about
  the database. Its first model request must carry the constraint and the corrected
  decision inside convmem's block, the old decision only as superseded, and each
  item once.
* DSH 0.2.1: the same two facts in headless session 1, a fresh headless session 2 of
  the same project folder; its first request carries them in convmem's block.

The stand-in model logs every request body: what the model saw is what is asserted.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from convmem.core.constants import BLOCK_MARKER
from convmem.memory.store import MemoryStore

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_model import FakeModel
from hosts import DshInstall, claude_env
from test_dsh_e2e import diagnostics, prepare

pytestmark = pytest.mark.e2e

DEPLOY = "Deploy only to eu-west-1, never to us-east-1."
PG16 = "We decided to use PostgreSQL 16 for the orders service."
PG17 = "Actually, let's use PostgreSQL 17 for the orders service instead."
ASK = "Set up the database for the orders service."


def texts_of(body: dict[str, Any]) -> list[str]:
    """Every text a request carried, one string per block (system prompt included)."""
    out: list[str] = []

    def walk(content: Any) -> None:
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "text":
                    out.append(str(block.get("text", "")))

    walk(body.get("system"))
    for message in body.get("messages", []):
        walk(message.get("content"))
    return out


def memory_lines(blocks: list[str]) -> list[str]:
    """The item lines of convmem blocks (a notice line carries no kind in its tag)."""
    return [
        line
        for block in blocks
        for line in block.splitlines()
        if line.startswith("- [mem ") and " · " in line.split("]")[0]
    ]


def convmem_blocks(body: dict[str, Any]) -> list[str]:
    """convmem's blocks in a request, wherever the host put them (system-reminder or
    a message of their own): each from the marker to the end of its text."""
    found = []
    for text in texts_of(body):
        at = text.find(BLOCK_MARKER)
        if at >= 0:
            found.append(text[at:])
    return found


def check_first_request(blocks: list[str], everything: str) -> None:
    """The constraint and the corrected decision, in convmem's blocks, once each."""
    assert blocks, f"no convmem block reached the model:\n{everything[-3000:]}"
    lines = memory_lines(blocks)
    assert sum(DEPLOY in line for line in lines) == 1, lines
    assert sum("PostgreSQL 17" in line for line in lines) == 1, lines
    assert not any("PostgreSQL 16" in line for line in lines), lines
    for line in lines:
        if DEPLOY in line or "PostgreSQL 17" in line:
            assert re.search(r"· \d{4}-\d\d-\d\d · (earlier session|此前会话) \S+\]", line), line
    # where the old decision appears at all, it is marked as replaced
    for block in blocks:
        for line in block.splitlines():
            if "PostgreSQL 16" in line:
                assert "→" in line, line


# --- Claude Code ------------------------------------------------------------------------------


def test_claude_code_three_sessions_of_one_project(claude: Path, tmp_path: Path) -> None:
    home, project, store_dir = tmp_path / "home", tmp_path / "proj", tmp_path / "convmem"
    for folder in (home, project / "src", store_dir):
        folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    (store_dir / "config.toml").write_text('[assembly]\nlocale = "en"\n')
    convmem_env = {**os.environ, "CONVMEM_HOME": str(store_dir)}
    installed = subprocess.run(
        [sys.executable, "-m", "convmem", "install", "claude-code", "--project", str(project)],
        capture_output=True,
        text=True,
        env=convmem_env,
        timeout=120,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr

    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        env = claude_env(home, fm.base_url, CONVMEM_HOME=str(store_dir))

        def turn(prompt: str, session: str | None = None) -> str:
            cmd = [str(claude), "-p", prompt, "--output-format", "json"]
            if session:
                cmd += ["--resume", session]
            proc = subprocess.run(
                cmd, cwd=project, env=env, capture_output=True, text=True, timeout=180, check=False
            )
            assert proc.returncode == 0, f"{prompt!r}: {proc.stderr[-2000:]}"
            result: dict[str, Any] = json.loads(proc.stdout)
            assert not result.get("is_error"), result
            return str(result["session_id"])

        first = turn(DEPLOY)
        turn(PG16, first)
        second = turn(PG17)  # a new session: no --resume
        before = len(fm.main_requests())
        third = turn(ASK)
        requests = fm.main_requests()

    assert len({first, second, third}) == 3
    body = requests[before].body  # session 3's first model request
    check_first_request(convmem_blocks(body), "\n".join(texts_of(body)))

    store = MemoryStore.open(str(store_dir / "memory.sqlite"))
    try:
        projects = {store.session_project(s) for s in (first, second, third)}
        assert projects == {str(project)}, projects
        old = [i for i in store.items(first, ("superseded",)) if "PostgreSQL 16" in i.content]
        assert old and old[0].superseded_by is not None
        assert store.item(old[0].superseded_by).session_id == second  # type: ignore[union-attr]
    finally:
        store.close()


# --- DSH --------------------------------------------------------------------------------------


def test_dsh_two_sessions_of_one_project(dsh: DshInstall, tmp_path: Path) -> None:
    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        setup = prepare(dsh, tmp_path, fm.base_url, "headless")
        (setup["home"] / "config.toml").write_text('[assembly]\nlocale = "en"\n', "utf-8")

        def headless(task: str, *extra: str) -> str:
            proc = subprocess.run(
                [str(dsh.dsh), "--profile", setup["profile"], "--json", *extra, task],
                env=setup["env"],
                cwd=setup["project"],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert proc.returncode == 0, f"{proc.stderr[-2000:]}\n{diagnostics(setup['home'])}"
            lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
            return str(next(o["sessionId"] for o in lines if o.get("type") == "session"))

        first = headless(DEPLOY)
        headless(PG16, "--session-id", first)
        before = len(fm.main_requests())
        second = headless(PG17)  # a new session of the same project corrects the decision
        middle = len(fm.main_requests())
        headless(ASK, "--session-id", second)
        requests = fm.main_requests()

    assert first != second
    # the new session's first request: what session 1 settled, in convmem's block; the
    # prompt corrects the decision, and that correction holds in this very step (the
    # old decision is not shown as current; the prompt itself says what replaced it)
    opening = convmem_blocks(requests[before].body)
    lines = memory_lines(opening)
    assert sum(DEPLOY in line for line in lines) == 1, opening
    assert not any("PostgreSQL 16" in line for line in lines), opening
    assert all("earlier session" in line for line in lines), lines
    # the next step of that session: nothing of memory repeated, the old decision
    # nowhere current, the correction in front of the model
    later = requests[middle].body
    blocks = convmem_blocks(later)
    assert not any("PostgreSQL 16" in line for line in memory_lines(blocks)), blocks
    assert sum(DEPLOY in line for line in memory_lines(blocks)) == 1
    assert PG17 in json.dumps(later, ensure_ascii=False)
    store = MemoryStore.open(str(setup["home"] / "memory.sqlite"))
    try:
        assert store.session_project(first) == store.session_project(second)
        assert store.session_project(second) == str(setup["project"])
        old = [i for i in store.items(first, ("superseded",)) if "PostgreSQL 16" in i.content]
        assert old and store.item(old[0].superseded_by or "").session_id == second  # type: ignore[union-attr]
    finally:
        store.close()
