"""Hostile input on every surface that reads outside data (hypothesis, plus explicit giants).

Event lines, Claude Code transcript lines, DSH session-log lines, search queries,
``SKILL.md`` files, settings files and validation configurations get malformed JSON,
wrong types, lone surrogates, NUL bytes, 50 MB strings, deep nesting, FTS5 syntax and
every Unicode script. Nothing may raise; a rejected input is reported with where it
was; the good input around it is still taken. The properties live in
``helpers/hostile.py``; ``bench/soak_hostile.py`` runs them 10^5 times.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, Cli, write_events
from convmem.capture import Event
from convmem.config import load_settings
from convmem.core.text import normalize_text
from convmem.errors import ConfigError
from convmem.ingest import MAX_LINE_BYTES, ingest_file
from convmem.memory.store import MemoryStore
from convmem.runtime import MemoryRuntime
from convmem.skills import SkillManager
from helpers import hostile, hostile_privacy

CASES = settings(
    max_examples=int(os.environ.get("CONVMEM_HOSTILE_EXAMPLES", "120")),
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
MB50 = 50 * 1024 * 1024

#: Hook calls in these tests run in-process: no resident hook process is left behind.
NO_DAEMON = {"CONVMEM_HOOK_DAEMON": "0"}


@pytest.fixture(scope="module")
def surface(tmp_path_factory: pytest.TempPathFactory) -> Iterator[hostile.Surface]:
    s = hostile.Surface(tmp_path_factory.mktemp("hostile"))
    for fixture in ("en_basic.jsonl", "zh_basic.jsonl", "mixed_tools.jsonl"):
        ingest_file(FIXTURES / fixture, s.runtime.on_events)
    yield s
    assert s.runtime.store.integrity_check() == []
    s.close()


# --- hypothesis -----------------------------------------------------------------------------


@CASES
@given(line=hostile.event_lines)
def test_event_lines(surface: hostile.Surface, line: bytes) -> None:
    surface.check_event_line(line)


@CASES
@given(line=hostile.claude_lines)
def test_claude_code_transcript_lines(surface: hostile.Surface, line: bytes) -> None:
    surface.check_claude_line(line)


@CASES
@given(line=hostile.dsh_lines)
def test_dsh_session_lines(surface: hostile.Surface, line: bytes) -> None:
    surface.check_dsh_line(line)


@CASES
@given(record=hostile.dsh_records, raw=hostile.request_lines)
def test_dsh_server_requests(surface: hostile.Surface, record: Any, raw: bytes) -> None:
    surface.check_dsh_request(record, raw)


def test_dsh_server_batch_with_an_unhashable_type(surface: hostile.Surface) -> None:
    record = {"type": ["user/message"], "seq": 2, "data": {"content": "x"}}
    surface.check_dsh_request(record, b"{}")


@CASES
@given(query=hostile.queries, session=st.sampled_from(["en1", "zh1", "mix1"]))
def test_search_queries(surface: hostile.Surface, query: str, session: str) -> None:
    surface.check_query(session, query)


@CASES
@given(content=hostile.skill_files())
def test_skill_files(surface: hostile.Surface, content: bytes) -> None:
    surface.check_skill_file(content)


def test_a_skill_with_a_lone_surrogate_is_ingested_with_it_replaced(tmp_path: Path) -> None:
    # the same rule as event text: an unpaired surrogate becomes U+FFFD, nothing is lost
    for name, text in (
        ("a", '---\nname: a\ndescription: "\\ud800"\n---\n- Never.\n'),
        ("b", "---\nname: b\n---\n- Always test.\n"),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "SKILL.md").write_text(text, "utf-8")
    manager = SkillManager(MemoryStore.open(":memory:"), load_settings(env={}))
    report = manager.ingest_paths([tmp_path])
    assert [f.name for f in report.files] == ["a", "b"] and report.problems == []
    skills = {s["name"]: s for s in manager.list_skills()}
    assert skills["a"]["description"] == "\ufffd"


@CASES
@given(content=hostile.settings_files())
def test_settings_files(surface: hostile.Surface, content: bytes) -> None:
    surface.check_settings_file(content)


@CASES
@given(checks=hostile.checks, text=hostile.hostile_text)
def test_validation_configs(surface: hostile.Surface, checks: Any, text: str) -> None:
    surface.check_validation(checks, text)


@CASES
@given(rules=hostile.preconditions, tool=hostile.hostile_text, tool_input=hostile.tool_inputs)
def test_precondition_configs(
    surface: hostile.Surface, rules: Any, tool: str, tool_input: Any
) -> None:
    surface.check_preconditions(rules, tool, tool_input)


def test_every_surface_saw_both_outcomes(surface: hostile.Surface) -> None:
    """The strategies are hostile enough to be refused and mild enough to be taken.

    It drives the surfaces itself, so that it holds when run alone too."""

    @CASES
    @given(
        line=hostile.event_lines,
        skill=hostile.skill_files(),
        config=hostile.settings_files(),
    )
    def drive(line: bytes, skill: bytes, config: bytes) -> None:
        surface.check_event_line(line)
        surface.check_skill_file(skill)
        surface.check_settings_file(config)

    drive()
    seen = surface.seen
    for outcome in ("reported", "accepted", "skill-reported", "settings-reported"):
        assert seen[outcome] > 0, seen
    assert seen["skill-accepted"] + seen["settings-accepted"] > 0, seen


# --- every Unicode code point ------------------------------------------------------------------


def test_every_unicode_code_point_round_trips_and_is_searchable(tmp_path: Path) -> None:
    """All of U+0000..U+10FFFF but the surrogates, 6000 code points per event."""
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    chunks = ["".join(map(chr, points[i : i + 6000])) for i in range(0, len(points), 6000)]
    lines = [  # every 8th a user message (extraction reads those), the others tool output
        {"session_id": "unicode", "seq": n, "type": "tool/result", "text": text}
        | ({"type": "user/message"} if n % 8 == 0 else {})
        for n, text in enumerate(chunks)
    ]
    path = tmp_path / "unicode.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    settings = load_settings(env={}).with_values(capture__max_text_chars=20_000)
    with MemoryRuntime(MemoryStore.open(str(tmp_path / "m.sqlite")), settings) as rt:
        report = ingest_file(path, rt.on_events)
        assert report.problems == [] and report.inserted == len(chunks)
        stored = {e.seq: e.text for e in rt.store.events("unicode")}
        for n, text in enumerate(chunks):
            assert stored[n] == normalize_text(text)[:20_000], f"chunk {n} changed"
            probe = _searchable_trigram(stored[n])
            if probe:
                hits = rt.store.events_containing("unicode", probe, 50)
                assert n in [e.seq for e in hits], (n, probe)
            if n % 8 == 0:
                result = rt.assemble("unicode", [], query=stored[n][:500], log=False)
                assert result.errors == []
        assert rt.store.integrity_check() == []


def _searchable_trigram(text: str) -> str | None:
    for i in range(len(text) - 2):
        tri = text[i : i + 3]
        if all(unicodedata.category(c)[0] in "LN" for c in tri) and tri.isprintable():
            return tri
    return None


# --- explicit giants and depths -----------------------------------------------------------------


def test_a_50_mb_event_between_good_lines(tmp_path: Path) -> None:
    big = ("The budget is 3000 tokens. " * (MB50 // 27 + 1))[:MB50]
    path = write_events(
        tmp_path / "big.jsonl",
        [
            {"session_id": "s", "seq": 1, "type": "user/message", "text": "before"},
            {"session_id": "s", "seq": 2, "type": "tool/result", "text": big},
            {"session_id": "s", "seq": 3, "type": "user/message", "text": "after"},
        ],
    )
    with MemoryRuntime(MemoryStore.open(str(tmp_path / "m.sqlite")), load_settings(env={})) as rt:
        report = ingest_file(path, rt.on_events)
        assert report.problems == [] and report.inserted == 3
        giant = rt.store.events("s")[1]
        assert giant.truncated and len(giant.text) == 20_000 and giant.store == "archive"
        assert len(rt.store.archive_text("s", 2) or "") == 200_000
        result = rt.assemble("s", [], query=big, log=True)  # a 50 MB query as well
        assert result.errors == []


def test_a_huge_query_is_not_logged_whole(tmp_path: Path) -> None:
    with MemoryRuntime(MemoryStore.open(str(tmp_path / "m.sqlite")), load_settings(env={})) as rt:
        rt.on_events([Event("s", 1, "user/message", "The budget is 3000 tokens.")])
        rt.pre_step("s", None, query="What is the budget? " * 50_000)  # 1 MB
        logged = rt.store.db.scalar("SELECT length(query) FROM assembly_logs")
        assert logged <= int(rt.settings["capture.max_text_chars"])


def test_a_line_over_the_line_limit_is_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as fh:
        fh.write(b'{"session_id": "s", "seq": 1, "type": "user/message", "text": "before"}\n')
        fh.write(b'{"text": "' + b"x" * (MAX_LINE_BYTES + 10) + b'"}\n')
        fh.write(b'{"session_id": "s", "seq": 3, "type": "user/message", "text": "after"}\n')
    with MemoryRuntime(MemoryStore.open(str(tmp_path / "m.sqlite")), load_settings(env={})) as rt:
        report = ingest_file(path, rt.on_events)
        assert [(p.line, p.message) for p in report.problems] == [
            (2, f"line longer than {MAX_LINE_BYTES} bytes")
        ]
        assert [e.seq for e in rt.store.events("s")] == [1, 3]


def test_a_50_mb_skill_file_is_refused_by_size(tmp_path: Path) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(b"- Never do this.\n" * (MB50 // 17))
    report = SkillManager(MemoryStore.open(":memory:"), load_settings(env={})).ingest_paths(
        [folder]
    )
    assert report.files == []
    assert len(report.problems) == 1 and "over skills.max_file_bytes" in report.problems[0]


def test_a_50_mb_settings_value_is_one_short_error(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_text("[assembly]\nlocale = '" + "x" * MB50 + "'\n", "utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={})
    assert "assembly.locale" in str(info.value) and len(str(info.value)) < 300


def test_a_50_mb_value_of_the_wrong_type_is_one_short_error(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_text('[assembly]\nskip_when_empty = "' + "x" * 1_000_000 + '"\n', "utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={})
    assert len(str(info.value)) < 1000


@pytest.mark.parametrize("depth", [100, 10_000, 1_000_000])
def test_deep_json_is_one_reported_line(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.jsonl"
    with path.open("wb") as fh:
        fh.write(b'{"session_id": "s", "seq": 1, "type": "user/message", "text": "before"}\n')
        fh.write(b'{"session_id": "s", "seq": 2, "type": "tool/result", "content": ')
        fh.write(b"[" * depth + b"]" * depth + b"}\n")
        fh.write(b'{"session_id": "s", "seq": 3, "type": "user/message", "text": "after"}\n')
    for fmt in ("events", "claude-code", "dsh"):
        with MemoryRuntime(MemoryStore.open(":memory:"), load_settings(env={})) as rt:
            report = ingest_file(path, rt.on_events, fmt=fmt, session="s")
            assert all(p.line == 2 for p in report.problems), report.problems
            if fmt == "events":
                assert {1, 3} <= {e.seq for e in rt.store.events("s")}


def test_deeply_nested_settings_are_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("skills.paths = " + "[" * 5000 + "]" * 5000 + "\n", "utf-8")
    with pytest.raises(ConfigError):
        load_settings(path, env={})


def test_nan_is_not_a_number_setting(tmp_path: Path) -> None:
    path = tmp_path / "nan.toml"
    path.write_text("[retrieval]\nmin_score = nan\n", "utf-8")
    with pytest.raises(ConfigError):
        load_settings(path, env={})


def test_deep_yaml_in_a_skill_is_a_reported_problem(tmp_path: Path) -> None:
    folder = tmp_path / "deep"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: " + "[" * 100_000 + "\n---\n- Never.\n")
    report = SkillManager(MemoryStore.open(":memory:"), load_settings(env={})).ingest_paths(
        [folder]
    )
    assert report.files == [] and report.problems[0].startswith(str(folder / "SKILL.md"))


def test_lone_surrogates_and_nul_in_every_event_field(tmp_path: Path) -> None:
    """Text is repaired; identifiers are refused by name; neighbours go in."""
    fields: dict[str, Any] = {
        "session_id": "s\ud800",
        "time": "\udfff",
        "role": "user\ud800",
        "tool_name": "\ud83d",
        "call_id": "c\udc00",
        "source": {"kind": "\ud800", "form": "x"},
        "turn": 2**70,
        "step": -(2**70),
    }
    lines = [json.dumps({"session_id": "s", "seq": 0, "type": "user/message", "text": "first"})]
    for n, (name, value) in enumerate(fields.items(), 1):
        obj = {"session_id": "s", "seq": n, "type": "user/message", "text": "x", name: value}
        lines.append(json.dumps(obj))
    base = {"session_id": "s", "type": "user/message"}
    lines.append(json.dumps({**base, "seq": 100, "text": "a\ud800b\x00c\udfffd"}))
    lines.append(json.dumps({**base, "seq": 101, "text": "last"}))
    path = tmp_path / "e.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    with MemoryRuntime(MemoryStore.open(str(tmp_path / "m.sqlite")), load_settings(env={})) as rt:
        report = ingest_file(path, rt.on_events)
        named = {p.line: p.message for p in report.problems}
        for n, name in enumerate(fields, 2):
            field = "source_kind" if name == "source" else name
            assert f"'{field}'" in named.get(n, ""), (name, named)
        texts = {e.seq: e.text for e in rt.store.events("s")}
        assert texts == {0: "first", 100: "a\ufffdbc\ufffdd", 101: "last"}


# --- through the CLI ----------------------------------------------------------------------------


def test_cli_reports_each_bad_line_with_file_and_line(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        b'{"session_id": "s", "seq": 1, "type": "user/message", "text": "one"}\n'
        b"{not json\n"
        b'{"session_id": "s", "seq": "2", "type": "user/message"}\n'
        b"\xff\xfe\n"
        b'{"session_id": "s", "seq": 5, "type": "user/message", "text": "two"}\n'
    )
    result = cli("ingest", str(path))
    assert result.code == 1
    lines = result.err.strip().splitlines()
    assert [ln.split(": ", 1)[0] for ln in lines] == [
        f"skipped {path}:2",
        f"skipped {path}:3",
        f"skipped {path}:4",
    ]
    assert "2 new events" in result.out


@pytest.mark.parametrize(
    "query",
    [
        b"\xff\xfe",
        b'"unbalanced',
        b"NEAR(a b",
        b"a* OR b* NOT c",
        b"''; DROP TABLE events; --",
        "数据库 ⏎ \u202e".encode(),
        b"x" * 100_000,
    ],
    ids=["bad-utf8", "quote", "near", "ops", "sql", "cjk", "100k"],
)
def test_cli_search_takes_any_query(cli: Cli, query: bytes) -> None:
    assert cli("ingest", str(FIXTURES / "en_basic.jsonl")).code == 0
    env = {**os.environ, "CONVMEM_HOME": os.environ["CONVMEM_HOME"], "LC_ALL": "C.UTF-8"}
    for extra in ([], ["--json"]):
        proc = subprocess.run(
            [sys.executable.encode(), b"-m", b"convmem", b"search", query, *map(str.encode, extra)],
            capture_output=True,
            env={**env, "PYTHONUTF8": "0"},
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert b"Traceback" not in proc.stderr


def test_cli_names_a_bad_settings_file(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    for content in (b"[assembly\n", b"\xff", b"assembly.locale = 5\n", b"nope = 1\n"):
        bad.write_bytes(content)
        result = cli("--config", str(bad), "status")
        assert result.code == 1
        [line] = result.err.strip().splitlines()
        assert line.startswith("Error: ") and (str(bad) in line or "setting" in line)


def test_hook_with_a_hostile_payload_stays_silent(cli: Cli, tmp_path: Path) -> None:
    payloads = [
        "",
        "null",
        "[" * 100_000,
        json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s\ud800", "prompt": 5}),
        json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "\ud800"}),
        json.dumps(
            {
                "hook_event_name": "PostToolUse",
                "session_id": "s",
                "transcript_path": str(FIXTURES / "zh_basic.jsonl"),
            }
        ),
        json.dumps({"hook_event_name": "SessionStart", "session_id": "s", "transcript_path": 5}),
    ]
    for payload in payloads:
        result = cli("hook", "claude-code", input=payload, env=NO_DAEMON)
        assert result.code == 0 and result.err == "" and result.out == "", result


def test_event_objects_built_by_hand_are_validated_by_name() -> None:
    with MemoryRuntime(MemoryStore.open(":memory:"), load_settings(env={})) as rt:
        with pytest.raises(Exception, match="'tool_name'"):
            rt.on_events([Event("s", 1, "tool/call", "x", tool_name="t" * 5000)])
        assert rt.store.count_events() == 0


# --- the classes of issue 13 (helpers/hostile_privacy.py) --------------------------------


@pytest.fixture(scope="module")
def privacy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[hostile_privacy.PrivacySurface]:
    home = tmp_path_factory.mktemp("privacy") / "home"
    rt = MemoryRuntime.open(load_settings(home=home, env={}))
    yield hostile_privacy.PrivacySurface(rt)
    assert rt.store.integrity_check() == []
    rt.close()


@CASES
@given(case=hostile_privacy.secret_cases)
def test_secrets_in_hostile_text(privacy: hostile_privacy.PrivacySurface, case: Any) -> None:
    privacy.check_secret(case)


@CASES
@given(case=hostile_privacy.private_cases)
# a compatibility ideograph after the span is stored in its canonical (NFC) form
@example(case=("<private>", "</private>", 0, False, True, "", "\uf900", "user/message"))
def test_private_span_variants(privacy: hostile_privacy.PrivacySurface, case: Any) -> None:
    privacy.check_private(case)


@settings(max_examples=12, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(case=hostile_privacy.scrubber_runs)
def test_scrubber_runs(privacy: hostile_privacy.PrivacySurface, case: Any) -> None:
    privacy.check_scrubber_run(case)


@CASES
@given(line=hostile.claude_lines)
def test_hook_capture_moves_past_hostile_transcript_lines(
    privacy: hostile_privacy.PrivacySurface, line: bytes
) -> None:
    privacy.check_hook_line(line)


def test_soak_findings_stay_fixed(surface: hostile.Surface) -> None:
    """Two cases the 10^5-case soak found: an assistant line whose content is ``true``
    (it stopped ingest, and the hook at that line), and a DSH turn marker past SQLite's
    integer range (it made every later message of the batch unstorable)."""
    surface.check_claude_line(b'{"type": "assistant", "message": {"model": "m", "content": true}}')
    record = {"type": "turn/start", "seq": 2, "data": {"turn": 4_611_686_018_427_387_905}}
    surface.check_dsh_request(record, b"")
