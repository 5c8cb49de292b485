"""The first commands, through real subprocesses."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conftest import Cli, ev, write_events


def _conversation(session: str = "s1", n: int = 30) -> list[dict[str, object]]:
    out = []
    for i in range(1, n + 1):
        kind = "user/message" if i % 2 else "assistant/message"
        out.append(ev(i, kind, f"turn {i}: the budget is {1000 + i} tokens", session))
    return out


def test_ingesting_twice_leaves_status_identical(cli: Cli, tmp_path: Path) -> None:
    path = write_events(tmp_path / "a.jsonl", _conversation())
    first = cli("ingest", str(path))
    assert first.code == 0, first
    assert "30 new events" in first.out
    status1 = cli("status", "--json").json()
    second = cli("ingest", str(path))
    assert "0 new events, 30 already present" in second.out
    assert cli("status", "--json").json() == status1
    assert status1["counts"]["events"] == 30


def test_duplicated_and_shuffled_lines(cli: Cli, tmp_path: Path) -> None:
    events = _conversation(n=40)
    mixed = events + events[::3]
    random.Random(3).shuffle(mixed)
    path = write_events(tmp_path / "m.jsonl", mixed)
    result = cli("ingest", "--json", str(path))
    report = result.json()
    assert report["inserted"] == 40 and report["duplicates"] == len(events[::3])
    exported = cli("export", "--session", "s1").json()
    assert [e["seq"] for e in exported["tables"]["events"]] == list(range(1, 41))


def test_ingest_says_when_long_texts_were_cut(cli: Cli, home: Path, tmp_path: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        "[capture]\nmax_text_chars = 1000\n[archive]\nmax_chars_per_event = 1500\n", "utf-8"
    )
    events = _conversation(n=3)
    events[0]["text"] = "a" * 1200  # cut in the log, whole in the archive
    events[2]["text"] = "b" * 3000  # not whole in the archive either
    path = write_events(tmp_path / "long.jsonl", events)
    result = cli("ingest", str(path))
    assert result.code == 0, result
    assert (
        "note: 2 texts read are longer than capture.max_text_chars and cut in the event log;"
        " 1 of them is not whole in the archive either" in result.err
    ), result
    assert cli("ingest", "--json", str(path)).json()["truncated"] == 2
    short = write_events(tmp_path / "short.jsonl", _conversation("s2", n=2))
    assert "note:" not in cli("ingest", str(short)).err


@pytest.mark.parametrize("name", ["bom.jsonl", "-"])
def test_a_byte_order_mark_before_the_first_line_is_no_bad_line(
    cli: Cli, tmp_path: Path, name: str
) -> None:
    text = "\ufeff" + "".join(json.dumps(e) + "\n" for e in _conversation(n=3))
    if name == "-":
        result = cli("ingest", "-", input=text)
    else:
        (tmp_path / name).write_text(text, "utf-8")
        result = cli("ingest", str(tmp_path / name))
    assert result.code == 0, result
    assert "3 new events" in result.out and "0 bad lines" in result.out, result


def test_bad_lines_are_reported_and_the_rest_goes_in(cli: Cli, tmp_path: Path) -> None:
    good = _conversation(n=4)
    path = tmp_path / "bad.jsonl"
    with path.open("wb") as fh:
        fh.write((json.dumps(good[0]) + "\n").encode())
        fh.write(b"{not json\n")
        fh.write(b'{"session_id": "s1", "type": "user/message", "text": "no seq"}\n')
        fh.write(b'{"session_id": "s1", "seq": "7", "type": "user/message"}\n')
        fh.write(b'{"session_id": "s1", "seq": 8, "type": "user/message", "text": 5}\n')
        fh.write(b"\xff\xfe\x00binary\x00\n")
        fh.write(b"[1, 2, 3]\n")
        fh.write(("[" * 100_000 + "\n").encode())
        fh.write(b'{"session_id": "s1", "seq": 9, "type": "user/message", "text": "x",')
        fh.write(b' "time": "not a time"}\n')
        fh.write(b"\n")
        for e in good[1:]:
            fh.write((json.dumps(e) + "\n").encode())
    result = cli("ingest", str(path))
    assert result.code == 1
    assert "4 new events" in result.out
    for line, words in [
        (2, "not valid JSON"),
        (3, "'seq' is missing"),
        (4, "'seq' must be a whole number"),
        (5, "'text' must be a string"),
        (6, "not valid UTF-8"),
        (7, "not a JSON object"),
        (8, "nested too deeply"),
        (9, "field 'time' is 'not a time', not an ISO 8601 time"),
    ]:
        assert f"bad.jsonl:{line}: " in result.err and words in result.err, (line, result)


def test_a_50_mb_line_is_capped_not_fatal(cli: Cli, tmp_path: Path) -> None:
    big = ev(2, "tool/result", "x" * 50_000_000)
    path = write_events(tmp_path / "big.jsonl", [ev(1, "user/message", "small"), big])
    result = cli("ingest", str(path))
    assert result.code == 0, result
    rows = cli("export", "--session", "s1").json()["tables"]["events"]
    assert rows[1]["truncated"] == 1 and len(rows[1]["text"]) == 20_000


def test_missing_file_and_unknown_session_are_clear_errors(cli: Cli, tmp_path: Path) -> None:
    missing = cli("ingest", str(tmp_path / "nope.jsonl"))
    assert missing.code != 0 and "is not a readable file" in missing.err
    export = cli("export", "--session", "ghost")
    assert export.code != 0 and "no session 'ghost'" in export.err


def test_a_stored_event_sent_again_with_other_text_is_reported(cli: Cli, tmp_path: Path) -> None:
    first = write_events(tmp_path / "a.jsonl", _conversation(n=4))
    assert cli("ingest", str(first)).code == 0
    changed = _conversation(n=4)
    changed[2]["text"] = "turn 3: the budget is 9999 tokens"
    second = cli("ingest", str(write_events(tmp_path / "b.jsonl", changed)))
    assert second.code == 1
    assert f"{tmp_path / 'b.jsonl'}:3: its (session, seq) is already stored" in second.err
    assert "0 new events, 4 already present" in second.out
    # the stored text stays, nothing is added
    rows = cli("export", "--session", "s1").json()["tables"]["events"]
    assert [r["text"] for r in rows][2] == "turn 3: the budget is 1003 tokens"
    # the same text again is no conflict
    again = cli("ingest", str(first))
    assert again.code == 0 and "ignored" not in again.err


def test_an_unreadable_file_costs_only_itself(cli: Cli, tmp_path: Path) -> None:
    good = write_events(tmp_path / "good.jsonl", _conversation(n=4))
    result = cli("ingest", str(tmp_path / "missing.jsonl"), str(tmp_path), str(good))
    assert result.code == 1
    assert "missing.jsonl is not a readable file" in result.err
    assert "is a folder" in result.err
    assert result.out.startswith("4 new events")


def test_a_forced_format_that_fits_no_line_fails(cli: Cli, tmp_path: Path) -> None:
    path = write_events(tmp_path / "e.jsonl", _conversation(n=4))
    result = cli("ingest", "--format", "claude-code", str(path))
    assert result.code == 1
    assert "no line holds an event in the claude-code format" in result.err
    assert cli("ingest", str(path)).out.startswith("4 new events")


def test_purge_needs_yes_and_only_touches_one_session(cli: Cli, tmp_path: Path) -> None:
    path = write_events(tmp_path / "two.jsonl", _conversation("a", 6) + _conversation("b", 6))
    cli("ingest", str(path))
    refused = cli("purge", "--session", "a")
    assert refused.code != 0 and "--yes" in refused.err
    before_b = cli("export", "--session", "b").json()
    done = cli("purge", "--session", "a", "--yes")
    assert done.code == 0 and "purged session a" in done.out
    assert cli("export", "--session", "b").json() == before_b
    assert cli("status", "--json").json()["counts"]["events"] == 6


def test_export_to_file(cli: Cli, tmp_path: Path) -> None:
    cli("ingest", str(write_events(tmp_path / "e.jsonl", _conversation(n=3))))
    out = tmp_path / "out.json"
    assert cli("export", "--session", "s1", "--output", str(out)).code == 0
    data = json.loads(out.read_text("utf-8"))
    assert data["session_id"] == "s1" and len(data["tables"]["events"]) == 3
    # an export given to ingest is one sentence, not hundreds of bad lines
    again = cli("ingest", str(out))
    assert again.code == 1 and again.out == "", again
    [line] = again.err.strip().splitlines()
    assert "is a convmem export" in line, line


def test_bad_settings_file_is_one_sentence(cli: Cli, tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[retrieval]\nlimt = 3\n", "utf-8")
    result = cli("--config", str(cfg), "status")
    assert result.code != 0 and "unknown setting 'retrieval.limt'" in result.err


@pytest.mark.sqlite_only  # a damaged SQLite file
def test_corrupt_database_is_one_sentence(cli: Cli, home: Path) -> None:
    home.mkdir(parents=True)
    (home / "memory.sqlite").write_bytes(b"garbage" * 1000)
    result = cli("status")
    assert result.code != 0
    assert "damaged or not a convmem database" in result.err
    assert (home / "memory.sqlite").read_bytes() == b"garbage" * 1000


def test_every_command_has_help() -> None:
    import click

    from convmem.cli import main

    def walk(group: click.Group, prefix: str) -> list[tuple[str, click.Command]]:
        out = []
        for name, cmd in group.commands.items():
            out.append((prefix + name, cmd))
            if isinstance(cmd, click.Group):
                out += walk(cmd, prefix + name + " ")
        return out

    for name, cmd in walk(main, ""):
        assert cmd.help and cmd.help.strip(), f"`convmem {name}` has no help"
