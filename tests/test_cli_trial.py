"""What a new user's trial of the command line found, through real subprocesses.

Each test reproduces one finding on a real SQLite file (or the backend under test)
and pins the answer the user should get instead: a count that was missing, a
refusal that was silent, a message that named the wrong thing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import Cli, ev, write_events
from convmem.adapters.events import parse_event
from convmem.config import load_settings
from convmem.runtime import MemoryRuntime

TRIAL = [
    ev(1, "user/message", "Retries: at most 3.", "t"),
    ev(2, "assistant/message", "I suggest we use PostgreSQL 16 for the database.", "t"),
]


def _items(cli: Cli, tmp_path: Path) -> dict[str, dict[str, str]]:
    """Ingest the trial session; its items by kind."""
    assert cli("ingest", str(write_events(tmp_path / "t.jsonl", TRIAL))).code == 0
    return {i["kind"]: i for i in cli("items", "--session", "t", "--json").json()}


def test_promote_refuses_an_item_that_is_not_a_proposal(cli: Cli, tmp_path: Path) -> None:
    items = _items(cli, tmp_path)
    constraint = items["constraint"]
    refused = cli("promote", constraint["id"])
    assert refused.code == 1 and "not an assistant proposal" in refused.err
    assert len(refused.err.strip().splitlines()) == 1
    after = cli("inspect", constraint["id"], "--json").json()["item"]
    assert (after["kind"], after["evidence_type"]) == ("constraint", "user_explicit")
    promoted = cli("promote", items["proposal"]["id"])
    assert promoted.code == 0 and "active (decision, user_explicit)" in promoted.out


def test_assemble_says_when_it_raised_the_budget(cli: Cli, tmp_path: Path) -> None:
    _items(cli, tmp_path)
    small = cli("assemble", "--session", "t", "--query", "retries", "--budget", "5")
    assert small.code == 0 and "Retries" in small.out
    assert "budget 5 raised to assembly.min_budget_tokens 600" in small.err
    assert "raised" not in cli("assemble", "--session", "t", "--budget", "900").err


SEARCHED = [
    ev(1, "user/message", "The cache must hold 😀 items at most 40.", "q"),
    ev(2, "user/message", "pasted log:\nERROR timeout at step 3\nERROR timeout again", "q"),
]


def test_search_takes_text_that_starts_with_a_dash(cli: Cli, tmp_path: Path) -> None:
    cli("ingest", str(write_events(tmp_path / "q.jsonl", SEARCHED)))
    for args in (["-timeout"], ["--limit", "3", "-timeout"], ["--", "-timeout"]):
        found = cli("search", *args)
        assert found.code == 0 and "ERROR timeout" in found.out, (args, found)
    assert cli("search", "ERROR", "timeout", "--json").json()["query"] == "ERROR timeout"


def test_search_finds_an_emoji_alone(cli: Cli, tmp_path: Path) -> None:
    cli("ingest", str(write_events(tmp_path / "q.jsonl", SEARCHED)))
    found = cli("search", "😀", "--json").json()
    assert [r["seq"] for r in found["evidence"]] == [1]


def test_search_results_are_one_line_each(cli: Cli, tmp_path: Path) -> None:
    cli("ingest", str(write_events(tmp_path / "q.jsonl", SEARCHED)))
    found = cli("search", "timeout")
    assert found.out.startswith("score")  # only evidence: no blank line first
    lines = found.out.splitlines()
    assert len(lines) == 3 and "pasted log: ⏎ ERROR timeout" in lines[2], found


def test_a_relative_sqlite_url_is_reported_with_the_path_looked_at(
    cli: Cli, tmp_path: Path
) -> None:
    missing = cli("--store", "sqlite:///tmp/x.sqlite", "status")
    assert missing.code == 1
    assert f"no convmem store at {Path.cwd() / 'tmp' / 'x.sqlite'} yet" in missing.err


def test_an_absolute_sqlite_url_is_shown_as_given(cli: Cli, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/m.sqlite"  # a fourth slash: tmp_path is absolute
    assert cli("--store", url, "ingest", str(write_events(tmp_path / "t.jsonl", TRIAL))).code == 0
    assert f"store: sqlite {url} " in cli("--store", url, "status").out


def test_a_file_given_as_home_is_not_a_folder_for_every_command(cli: Cli, tmp_path: Path) -> None:
    events = write_events(tmp_path / "t.jsonl", TRIAL)
    for args in (["ingest", str(events)], ["status"], ["items", "--session", "t"]):
        result = cli("--home", str(events), *args, env={"CONVMEM_STORE": ""})
        assert result.code == 1 and "is not a folder" in result.err, (args, result)


def _batch_line(i: int) -> dict[str, object]:
    return ev(i, "user/message", f"the batch size must be {i} items", "h")


def test_an_interrupted_ingest_says_to_run_it_again(cli: Cli, home: Path, tmp_path: Path) -> None:
    huge = write_events(tmp_path / "huge.jsonl", (_batch_line(i) for i in range(1, 20_001)))
    env = {**os.environ, "CONVMEM_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "convmem", "ingest", str(huge)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)
    assert proc.poll() is None, "the ingest ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err
    assert "interrupted; committed events are kept; run the same command again" in err


def test_status_counts_messages_not_yet_extracted(cli: Cli, home: Path, tmp_path: Path) -> None:
    lines = [_batch_line(i) for i in range(1, 6)]
    runtime = MemoryRuntime.open(load_settings(home=str(home)))
    runtime.capture.capture_many([parse_event(line) for line in lines[:4]])
    runtime.close()  # captured as an interrupted ingest leaves them: not extracted
    behind = cli("status")
    assert "not yet extracted: 4 messages in 1 session (h); run the same `convmem ingest`" in (
        behind.out
    )
    assert cli("status", "--json").json()["not_extracted"] == 4
    assert cli("ingest", str(write_events(tmp_path / "h.jsonl", lines))).code == 0
    caught_up = cli("status", "--json").json()
    assert caught_up["not_extracted"] == 0 and caught_up["sessions"][0]["events"] == 5
    assert "not yet extracted" not in cli("status").out


def _line(text: str) -> str:
    return text + "\n"


def test_a_line_without_text_is_a_bad_line(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text(
        _line('{"session_id": "m", "seq": 1, "type": "user/message", "text": "Keep it."}')
        + _line('{"session_id": "m", "seq": 2, "type": "user/message"}')
        + _line('{"session_id": "m", "seq": 3, "type": "assistant/message", "text": null}')
        + _line('{"session_id": "m", "seq": 4, "type": "compaction/start"}'),
        "utf-8",
    )
    result = cli("ingest", str(path))
    assert result.code == 1
    assert f"{path}:2: field 'text' (or 'content') is missing or null" in result.err
    assert f"{path}:3: field 'text'" in result.err and ":4:" not in result.err
    assert result.out.startswith("2 new events")


def test_a_repeated_seq_with_other_text_is_counted(cli: Cli, tmp_path: Path) -> None:
    events = [*TRIAL, ev(1, "user/message", "Retries: at most 5.", "t")]
    path = write_events(tmp_path / "t.jsonl", events)
    for _ in range(2):  # the second run reads the same repeat again
        result = cli("ingest", str(path))
        assert result.code == 1  # something was ignored
        assert "1 line gave a (session, seq) already read or stored with different text" in (
            result.out
        )
        assert f"{path}:3: repeats" in result.err
    assert cli("ingest", str(path), "--json").json()["duplicates"] == 2
    [item] = [
        i for i in cli("items", "--session", "t", "--json").json() if "Retries" in i["content"]
    ]
    assert item["content"] == "Retries: at most 3."


def test_a_line_without_a_session_names_the_option(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text(_line('{"seq": 1, "type": "user/message", "text": "hi"}'), "utf-8")
    result = cli("ingest", str(path))
    assert "must be a non-empty string; `--session ID` supplies it" in result.err
    assert cli("ingest", "--session", "n", str(path)).code == 0


def test_ingest_reads_standard_input(cli: Cli, tmp_path: Path) -> None:
    text = write_events(tmp_path / "t.jsonl", TRIAL).read_text("utf-8")
    result = cli("ingest", "-", input=text)
    assert result.code == 0 and result.out.startswith("2 new events"), result
    assert cli("ingest", "-", input=text).out.startswith("0 new events, 2 already present")


def test_a_folder_or_a_missing_file_exits_1(cli: Cli, tmp_path: Path) -> None:
    for name, said in ((tmp_path, "is a folder"), (tmp_path / "nope", "not a readable file")):
        result = cli("ingest", str(name))
        assert result.code == 1 and said in result.err and "Usage" not in result.err, result


def test_purge_of_an_unknown_session_says_so_before_asking_for_yes(
    cli: Cli, tmp_path: Path
) -> None:
    _items(cli, tmp_path)
    for args in (["--session", "nope"], ["--project", "nope"]):
        result = cli("purge", *args)
        assert result.code == 1 and f"no {args[0][2:]} 'nope'" in result.err, result
    asked = cli("purge", "--session", "t")
    assert asked.code == 2 and "add --yes" in asked.err
    assert cli("purge", "--session", "t", "--yes").out.startswith("purged session t")


def _lock(path: Path, on: bool) -> bool:
    """Make ``path`` unwritable (or writable again): immutable for root, whom file modes
    do not stop; read-only otherwise. False when this system does not allow it."""
    if os.geteuid() != 0:
        path.chmod(0o444 if on else 0o644)
        return True
    flag = "+i" if on else "-i"
    done = subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False)
    return done.returncode == 0


def test_a_read_only_database_file_is_named_not_its_folder(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    if os.environ.get("CONVMEM_STORE"):
        pytest.skip("a SQLite file only")
    _items(cli, tmp_path)
    db = home / "memory.sqlite"
    if not _lock(db, True):
        pytest.skip("chattr +i is not allowed here")
    try:
        more = write_events(tmp_path / "more.jsonl", [ev(3, "user/message", "Use tabs.", "t")])
        for args in (["ingest", str(more)], ["assemble", "--session", "t"]):
            result = cli(*args)
            assert result.code == 1, result
            assert f"the database file {db} is read-only; make it writable" in result.err
            assert "folder" not in result.err
    finally:
        _lock(db, False)


def test_global_options_may_follow_the_command(cli: Cli, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    events = write_events(tmp_path / "t.jsonl", TRIAL)
    assert cli("ingest", str(events), "--home", str(other)).code == 0
    assert (other / "memory.sqlite").is_file()
    listed = cli("items", "--session", "t", f"--home={other}", "--json")
    assert listed.code == 0 and {i["kind"] for i in listed.json()} >= {"constraint"}
    # the fixture's own home (CONVMEM_HOME) was never written
    assert "no convmem store" in cli("items", "--session", "t").err
    # a value after "--" is an argument, not an option; a missing value is said so
    searched = cli("search", "--home", str(other), "--", "--home")
    assert searched.code == 0 and "no matches" in searched.out
    # the words of a search are its text, whatever they look like
    worded = cli("search", "--home", str(other), "why", "does", "--store", "fail")
    assert worded.code == 0 and "no matches" in worded.out
    missing = cli("status", "--home")
    assert missing.code == 2 and "'--home' requires an argument" in missing.err


def test_a_text_block_whose_text_is_not_a_string_is_refused(cli: Cli, tmp_path: Path) -> None:
    lines = [
        {"role": "user", "content": [{"type": "text", "text": 123}]},
        {"role": "assistant", "content": "Noted."},
    ]
    path = write_events(tmp_path / "chat.jsonl", lines)
    result = cli("ingest", "--session", "c", str(path))
    assert result.code == 1
    assert "chat.jsonl:1: a 'text' block's field 'text' must be a string" in result.err
    assert "1 new event" in result.out


@pytest.mark.parametrize(
    "args",
    [
        ["--home", "", "status"],
        ["status", "--home", "  "],
        ["--store", "", "status"],
        ["ingest", "--project", "", "-"],
        ["ingest", "--session", " ", "-"],
    ],
)
def test_an_option_typed_empty_is_refused(cli: Cli, args: list[str]) -> None:
    result = cli(*args, input="")
    assert result.code == 2 and "is empty; give a value, or leave the option out" in result.err
