"""What convmem understands, through the CLI: each failure class of real text, pinned.

The cases live in tests/understanding.yaml (sentences of the project's own, English and
Chinese). Each is ingested with `convmem ingest`, read back with `convmem items --json`
and, where the case is about what reaches the model, assembled with `convmem assemble`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import Cli, ev, write_events

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "understanding.yaml").read_text("utf-8")
)
STATUSES = ("active", "superseded", "disputed", "retracted")


def _ingest(cli: Cli, tmp_path: Path, session: str, messages: list[str]) -> None:
    path = write_events(
        tmp_path / f"{session}.jsonl",
        [ev(n, "user/message", text, session=session) for n, text in enumerate(messages, 1)],
    )
    result = cli("ingest", str(path))
    assert result.code == 0, result


def _items(cli: Cli, session: str) -> list[dict[str, Any]]:
    args = ["items", "--session", session, "--json"]
    for status in STATUSES:
        args += ["--status", status]
    result = cli(*args)
    assert result.code == 0, result
    found: list[dict[str, Any]] = result.json()
    return found


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=c["known_miss"]))
        if c.get("known_miss")
        else c
        for c in CASES
    ],
    ids=[c["id"] for c in CASES],
)
def test_understanding(cli: Cli, tmp_path: Path, case: dict[str, Any]) -> None:
    _ingest(cli, tmp_path, case["id"], case["say"])
    got = sorted((i["kind"], i["status"], i["content"]) for i in _items(cli, case["id"]))
    assert got == sorted(tuple(i) for i in case["items"])


def _assemble(cli: Cli, session: str, query: str) -> str:
    result = cli("assemble", "--session", session, "--query", query, "--json")
    assert result.code == 0, result
    text: str = result.json()["text"]
    return text


def test_a_correction_reads_as_current_and_the_old_value_as_replaced(
    cli: Cli, tmp_path: Path
) -> None:
    _ingest(
        cli,
        tmp_path,
        "fix",
        [
            "Keep p95 under 200 ms and the request timeout at 30 s.",
            "ok, what's next on the list?",
            "Actually make the request timeout 45 s.",
        ],
    )
    block = _assemble(cli, "fix", "what timeout did we settle on?")
    assert "make the request timeout 45 s." in block
    assert "Keep p95 under 200 ms" in block  # the other value of the sentence still holds
    memory = block.split("## Memory: notices")[0]
    assert "the request timeout at 30 s" not in memory.replace("⟦", "").split("superseded")[0]
    assert "superseded: “the request timeout at 30 s.”" in block


def test_a_retracted_item_and_its_source_never_read_as_current(cli: Cli, tmp_path: Path) -> None:
    _ingest(
        cli,
        tmp_path,
        "ret",
        [
            "The hotel needs free parking. We land at 8:30 PM on May 5.",
            "Forget the parking requirement.",
        ],
    )
    block = _assemble(cli, "ret", "what do we need from the hotel? parking?")
    remembered = block.split("## Memory: raw evidence")[0]
    assert "The hotel needs free parking." not in remembered
    # the source message may be quoted for its other sentence, with the withdrawn clause marked
    assert "needs free parking" not in block.replace("⟦retracted:", "")
    assert "⟦retracted:" in block or "We land at 8:30 PM" not in block


def test_no_relevant_memory_says_so_even_with_standing_items(cli: Cli, tmp_path: Path) -> None:
    _ingest(
        cli,
        tmp_path,
        "ins",
        ["Never touch the production database directly.", "We decided to use PostgreSQL 16."],
    )
    block = _assemble(cli, "ins", "What is my dentist's name?")
    assert "Never touch the production database directly." in block  # standing context
    assert "No committed evidence in this session's memory supports" in block
    zh = _assemble(cli, "ins", "我的牙医叫什么名字？")
    assert "会话记忆中没有" in zh or "No committed evidence" in zh


def test_pasted_logs_neither_state_nor_dispute_anything(cli: Cli, tmp_path: Path) -> None:
    case = next(c for c in CASES if c["id"] == "en-pasted-log")
    _ingest(cli, tmp_path, "log", case["say"])
    block = _assemble(cli, "log", "what is the p95 target?")
    assert "The p95 latency must stay under 200 ms." in block
    assert "disputed" not in block
