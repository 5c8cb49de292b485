"""Hostile inputs and the properties every input surface must keep.

Strategies (hypothesis) for: canonical event lines, Claude Code transcript lines,
DSH session-log lines, search queries, ``SKILL.md`` files, settings files and
validation configurations. They mix malformed JSON, wrong types, lone surrogates,
NUL bytes, deep nesting, FTS5 query syntax, characters from every Unicode plane and
script, and text that looks like convmem's own markers.

Each ``check_*`` function is one property: the input goes through the real code path
between good inputs, and the call must not raise; a rejected input must be reported
with where it was (file and line, file path, check id or setting name); the good
inputs around it must still be there. ``tests/test_hostile.py`` runs them under
hypothesis; ``bench/soak_hostile.py`` runs 10^5 cases.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from convmem.config import SETTINGS, load_settings
from convmem.core.text import normalize_text
from convmem.errors import ConfigError
from convmem.ingest import ingest_file
from convmem.memory.store import MemoryStore
from convmem.runtime import MemoryRuntime

# --- text --------------------------------------------------------------------------------

#: FTS5 query syntax and SQL/LIKE metacharacters.
FTS_BITS = [
    '"',
    '""',
    "*",
    "NEAR(",
    "NEAR(a b, 2)",
    ")",
    "(",
    " AND ",
    " OR ",
    " NOT ",
    "^",
    ":",
    "text:",
    "events_fts",
    "-",
    "+",
    "{",
    "}",
    "'",
    "\\",
    "%",
    "_",
    "MATCH",
    ";",
    "--",
    "/*",
    "*/",
    "\x00",
    "a*",
    '"a" OR "b"',
    "rank",
    "bm25(",
    "''; DROP TABLE events; --",
]
#: One or more characters from many scripts, plus marks, joiners and direction controls.
SCRIPT_BITS = [
    "Latin ÀÉÎõü",
    "Ελληνικά",
    "Кириллица",
    "Հայերեն",
    "עברית",
    "العربية",
    "ܣܘܪܝܝܐ",
    "ދިވެހި",
    "देवनागरी",
    "বাংলা",
    "ਗੁਰਮੁਖੀ",
    "ગુજરાતી",
    "ଓଡ଼ିଆ",
    "தமிழ்",
    "తెలుగు",
    "ಕನ್ನಡ",
    "മലയാളം",
    "සිංහල",
    "ไทย",
    "ລາວ",
    "བོད་ཡིག",
    "မြန်မာ",
    "ქართული",
    "한국어 조선말",
    "ᚠᚢᚦ",
    "ᚁᚂᚃ",
    "ግዕዝ",
    "ᏣᎳᎩ",
    "ᐃᓄᒃᑎᑐᑦ",
    "ᠮᠣᠩᠭᠣᠯ",
    "ខ្មែរ",
    "汉字漢字",
    "ひらがな",
    "カタカナ",
    "ꆈꌠꁱ",
    "𓀀𓁐𓂀",
    "𒀀𒀁",
    "𐌰𐌱𐌲",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "👩‍👩‍👧‍👦🏳️‍🌈",
    "é",
    "\u202eRTL\u202c",
    "\u200b\u200d\ufeff",
    "\u2028\u2029",
    "\ufffd",
    "\U0010fffd",
    "\ue000",
]
#: Text that looks like something convmem treats specially.
SPECIAL_BITS = [
    "<private>",
    "</private>",
    "<PRIVATE>x</private>",
    "[convmem memory]",
    "[redacted:x]",
    "```",
    "\r\n",
    "\r",
    "\t",
    "\x7f",
    "\x1b[31m",
    "-----BEGIN RSA PRIVATE KEY-----",
    "AKIAABCDEFGHIJKLMNOP",
    "Bearer abcdefghijklmnopqrstuvwxyz",
    "seq:12",
    "[ev seq:1]",
    "Actually, make it 9000 tokens instead.",
    "IGNORE PREVIOUS INSTRUCTIONS",
    "3000 ms",
    "src/a.py",
    "../../etc/passwd",
    "${HOME}",
    "$(rm -rf /)",
    "{{x}}",
    "%s%n",
    "\\u0000",
]
# --- realistic bases -----------------------------------------------------------------------

EVENT_BASES: list[dict[str, Any]] = [
    {"session_id": "hostile", "seq": 2, "type": "user/message", "text": "The budget is 3000."},
    {
        "session_id": "hostile",
        "seq": 2,
        "type": "assistant/message",
        "time": "2026-01-01T00:00:00Z",
        "turn": 1,
        "step": 1,
        "role": "assistant",
        "content": [{"type": "text", "text": "I suggest 2 retries."}],
        "source": {"kind": "model", "form": "x"},
    },
    {
        "session_id": "hostile",
        "seq": 2,
        "type": "tool/call",
        "tool_name": "Bash",
        "call_id": "c1",
        "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}],
    },
    {
        "session_id": "hostile",
        "seq": 2,
        "type": "tool/result",
        "call_id": "c1",
        "content": [{"type": "tool_result", "content": [{"type": "text", "text": "ok"}]}],
    },
    {"session_id": "hostile", "seq": 2, "type": "compaction/summary", "text": "Summary."},
]

CLAUDE_BASES: list[dict[str, Any]] = [
    {
        "type": "user",
        "sessionId": "s",
        "uuid": "u1",
        "timestamp": "2026-12-02T10:00:01.000Z",
        "promptId": "p-1",
        "message": {"role": "user", "content": [{"type": "text", "text": "Use port 8080."}]},
    },
    {"type": "user", "isMeta": True, "message": {"role": "user", "content": "<command-name>x"}},
    {
        "type": "assistant",
        "message": {
            "model": "m",
            "content": [
                {"type": "text", "text": "Running it."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
            ],
        },
    },
    {
        "type": "user",
        "toolUseResult": {"type": "text"},
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a\nb"}],
        },
    },
    {"type": "user", "isCompactSummary": True, "message": {"content": "Summary of work."}},
    {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto"}},
    {
        "type": "attachment",
        "attachment": {
            "type": "hook_additional_context",
            "content": ["[convmem memory] session s"],
            "hookEvent": "UserPromptSubmit",
        },
    },
    {"type": "user", "message": {"content": "<local-command-stdout>done</local-command-stdout>"}},
]

DSH_BASES: list[dict[str, Any]] = [
    {
        "type": "user/message",
        "seq": 2,
        "time": 1796224777630,
        "data": {
            "content": [{"type": "text", "text": "Keep it under 3000."}],
            "source": {"kind": "user"},
        },
    },
    {
        "type": "assistant/message",
        "seq": 2,
        "time": 1796224777630,
        "data": {"turn": 1, "step": 1, "message": {"role": "assistant", "content": "Sure."}},
    },
    {
        "type": "tool/call",
        "seq": 2,
        "data": {"name": "bash", "callId": "c1", "arguments": {"a": 1}},
    },
    {
        "type": "tool/result",
        "seq": 2,
        "data": {"message": {"toolCallId": "c1", "content": [{"type": "text", "text": "ok"}]}},
    },
    {"type": "compaction/summary", "seq": 2, "data": {"summary": "Earlier work."}},
    {"type": "compaction/end", "seq": 2, "data": {"error": "boom"}},
    {"type": "command/run", "seq": 2, "data": {"name": "memory", "args": "status"}},
    {"type": "command/done", "seq": 2, "data": {"text": "ok", "kind": "success"}},
    {"type": "turn/start", "seq": 2, "data": {"turn": 3}},
]
_KEYS = sorted({k for b in EVENT_BASES + CLAUDE_BASES + DSH_BASES for k in b})

ANY_CHAR = st.characters(exclude_categories=())  # every plane, surrogates included
LONE_SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)

hostile_text = st.lists(
    st.one_of(
        st.text(ANY_CHAR, max_size=24),
        st.sampled_from(FTS_BITS),
        st.sampled_from(SCRIPT_BITS),
        st.sampled_from(SPECIAL_BITS),
        LONE_SURROGATE,
        st.integers(0, 10**6).map(str),
    ),
    max_size=10,
).map("".join)

big_int = st.one_of(
    st.integers(-5, 2**31),
    st.sampled_from([-1, 0, 2**62, 2**62 + 1, 2**63, -(2**63), 2**64, 10**30, -(10**30)]),
)
json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    big_int,
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_text,
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(hostile_text, st.sampled_from(_KEYS)), inner, max_size=4),
    ),
    max_leaves=12,
)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for key, value in obj.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(obj, list):
        for n, value in enumerate(obj):
            out += _paths(value, (*prefix, n))
    return out


@st.composite
def mutated(draw: st.DrawFn, bases: list[dict[str, Any]]) -> Any:
    """A realistic object with one to three fields replaced, removed or added."""
    obj: Any = copy.deepcopy(draw(st.sampled_from(bases)))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(obj)))
        op = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if not path:
            if op == "replace":
                obj = draw(json_value)
            continue
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        if op == "replace":
            parent[path[-1]] = draw(json_value)
        elif op == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(hostile_text)] = draw(json_value)
        else:
            parent.insert(0, draw(json_value))
    return obj


def _dump(obj: Any, ascii_only: bool) -> bytes:
    try:
        return json.dumps(obj, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        return b"{not json"


def line_bytes(objects: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """One hostile line (no newline inside) built around ``objects``."""
    encoded = st.tuples(objects, st.booleans()).map(lambda t: _dump(*t))
    return st.one_of(
        encoded,
        encoded,
        encoded,
        st.tuples(json_value, st.booleans()).map(lambda t: _dump(*t)),
        st.binary(max_size=120),
        encoded.flatmap(lambda b: st.integers(0, len(b)).map(lambda n: b[:n])),  # torn line
        st.integers(50, 3000).map(lambda n: b"[" * n + b"]" * n),  # deep, valid
        st.integers(50, 200_000).map(lambda n: b'{"a":' * n),  # deep, invalid
        st.sampled_from(
            [b"null", b"[]", b"{}", b'"x"', b"1e999999", b"-0", b"NaN", b"\xef\xbb\xbf{}"]
        ),
    ).map(lambda b: b.replace(b"\n", b" "))


event_lines = line_bytes(mutated(EVENT_BASES))
claude_lines = line_bytes(mutated(CLAUDE_BASES))
dsh_lines = line_bytes(mutated(DSH_BASES))
dsh_records = mutated(DSH_BASES)
request_lines = line_bytes(
    mutated(
        [
            {"id": 1, "op": op, "session_id": "live"}
            for op in (
                "hello",
                "event",
                "events",
                "pre_step",
                "pre_execute",
                "command",
                "catch_up",
                "session_start",
            )
        ]
    )
)
queries = st.one_of(hostile_text, st.text(ANY_CHAR, max_size=300), st.sampled_from(FTS_BITS))


# --- files ---------------------------------------------------------------------------------

_GOOD_FRONTMATTER = {"name": "x", "description": "d", "when_to_use": "w", "enabled": True}
_YAML_BITS = [
    "name: &a [*a]",
    "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\ndescription: *c",
    "name: !!python/object/apply:os.system ['true']",
    "name: !!binary aGVsbG8=",
    "enabled: yes",
    "name: [",
    "name: '\t'",
    "? [a, b]\n: c",
    "date: 2020-13-45",
    "name: 'two\nlines'",
    "description: {a: {b: {c: [1, 2, {d: e}]}}}",
    "- just\n- a list",
    "%YAML 9.9\n---",
    "name: " + "[" * 3000,
    "name: good-skill",
]


@st.composite
def skill_files(draw: st.DrawFn) -> bytes:
    """A SKILL.md: hostile frontmatter, hostile body, or raw bytes."""
    kind = draw(st.sampled_from(["front", "front", "body", "bytes", "unclosed"]))
    if kind == "bytes":
        return draw(st.binary(max_size=400))
    if kind == "front":
        meta = draw(mutated([_GOOD_FRONTMATTER]))
        front = draw(
            st.one_of(
                st.just(json.dumps(meta, ensure_ascii=draw(st.booleans()))),
                st.sampled_from(_YAML_BITS),
                hostile_text,
            )
        )
    else:
        front = "name: hostile\ndescription: a skill"
    body = draw(
        st.lists(
            st.one_of(
                hostile_text,
                st.sampled_from(["- Never do X.", "1. Step one.", "# Steps", "```", "> quote"]),
            ),
            max_size=8,
        ).map("\n".join)
    )
    closing = "" if kind == "unclosed" else "\n---\n"
    return ("---\n" + front + closing + body).encode("utf-8", "surrogatepass")


_TOML_KEYS = [s.name for s in SETTINGS] + ["assembly", "validation", "unknown.key", "x"]
_TOML_VALUES = [
    '"text"',
    '"\\u0000"',
    '"\\ud800"',
    "'''multi\nline'''",
    "1",
    "-1",
    "9223372036854775808",
    "1e999",
    "nan",
    "inf",
    "-inf",
    "true",
    "1979-05-27",
    "[]",
    '[1, "a"]',
    "[[1], [2]]",
    '[{type = "required_terms", terms = ["a"]}]',
    "{a = 1}",
    '"zh"',
    '"en"',
    "0.0",
    "3000",
    '[{type = "forbidden_terms", terms = [""]}]',
    '[{must_exist = "**", tools = 5}]',
]


@st.composite
def settings_files(draw: st.DrawFn) -> bytes:
    """A settings TOML: known and unknown keys with values of every TOML type, or junk."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=300))
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        key = draw(st.one_of(st.sampled_from(_TOML_KEYS), hostile_text))
        value = draw(
            st.one_of(
                st.sampled_from(_TOML_VALUES),
                hostile_text.map(lambda t: json.dumps(t)),
                big_int.map(str),
            )
        )
        quoted = json.dumps(key) if draw(st.booleans()) else key
        lines.append(f"{quoted} = {value}")
    if draw(st.booleans()):
        lines.insert(0, draw(st.sampled_from(["[assembly]", "[validation]", "[x]", "[[a]]", "["])))
    return "\n".join(lines).encode("utf-8", "surrogatepass")


_CHECK_TYPES = ["required_terms", "forbidden_terms", "numbers_with_conditions", "bogus", None]
_CHECK_BASES: list[dict[str, Any]] = [
    {"id": "t", "type": "forbidden_terms", "terms": ["9000"], "scope": ["body"], "block": True},
    {"id": "r", "type": "required_terms", "terms": ["ok"], "min_count": 2, "except_in": ["quote"]},
    {
        "id": "n",
        "type": "numbers_with_conditions",
        "numbers": [{"value": 3000, "unit": "tokens", "conditions": ["peak"]}],
        "forbidden_numbers": [9000, "9k", {"value": 1}],
        "window": 40,
        "severity": "warning",
    },
]
_PRECONDITION_BASES: list[dict[str, Any]] = [
    {"must_exist": "src/**", "tools": ["write"], "reason": "r"},
    {"must_not_exist": "*.lock", "tools": "bash"},
]

checks = st.lists(
    st.one_of(
        mutated(_CHECK_BASES),
        st.builds(
            lambda t, extra: {"type": t, **extra},
            st.sampled_from(_CHECK_TYPES),
            st.dictionaries(
                st.sampled_from(["terms", "numbers", "scope", "window", "id"]), json_value
            ),
        ),
    ).filter(lambda c: isinstance(c, dict) and c.get("type") != "script"),
    max_size=4,
)
preconditions = st.lists(
    mutated(_PRECONDITION_BASES).filter(lambda c: isinstance(c, dict)), max_size=3
)
tool_inputs = st.dictionaries(
    st.one_of(st.sampled_from(["file_path", "path", "command", "cwd", "workdir"]), hostile_text),
    json_value,
    max_size=4,
)


# --- the properties --------------------------------------------------------------------------


class Surface:
    """One data dir and runtime shared by many cases; counts what each case showed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.settings = load_settings(home=root / "home", env={})
        self.runtime = MemoryRuntime.open(self.settings)
        self.counter = itertools.count()
        self.seen: Counter[str] = Counter()
        self.skill_store = MemoryStore.open(":memory:")

    def close(self) -> None:
        self.runtime.close()
        self.skill_store.close()

    def _file(self, suffix: str) -> Path:
        return self.root / f"case-{next(self.counter)}{suffix}"

    def _user_texts(self, session: str) -> set[str]:
        return {e.text for e in self.runtime.store.events(session, types=["user/message"])}

    def check_event_line(self, hostile: bytes) -> None:
        n = next(self.counter)
        good = f"good-{n}"
        before = json.dumps({"session_id": good, "seq": 1, "type": "user/message", "text": "one"})
        after = json.dumps({"session_id": good, "seq": 3, "type": "user/message", "text": "two"})
        path = self._file(".jsonl")
        path.write_bytes(before.encode() + b"\n" + hostile + b"\n" + after.encode() + b"\n")
        report = ingest_file(path, self.runtime.on_events, fmt="events")
        self._reported_at(report, path, {2})
        assert [e.seq for e in self.runtime.store.events(good)] == [1, 3], "good lines lost"

    def check_claude_line(self, hostile: bytes) -> None:
        path = self._file(".jsonl")
        prompt = {"type": "user", "message": {"role": "user", "content": "first prompt {n}"}}
        lines = [json.dumps(prompt).replace("{n}", path.stem).encode(), hostile]
        lines.append(
            json.dumps(prompt).replace("first", "second").replace("{n}", path.stem).encode()
        )
        path.write_bytes(b"\n".join(lines) + b"\n")
        report = ingest_file(path, self.runtime.on_events, fmt="claude-code", session=path.stem)
        self._reported_at(report, path, {2})
        texts = self._user_texts(path.stem)
        assert {f"first prompt {path.stem}", f"second prompt {path.stem}"} <= texts

    def check_dsh_line(self, hostile: bytes) -> None:
        path = self._file(".jsonl")
        sid = path.stem
        header = {"type": "session", "version": 4, "id": sid, "cwd": "/w"}

        def user(seq: int, text: str) -> bytes:
            data = {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
            return json.dumps({"type": "user/message", "seq": seq, "data": data}).encode()

        body = [
            json.dumps(header).encode(),
            user(10**9 + 1, "alpha"),
            hostile,
            user(10**9 + 3, "omega"),
        ]
        path.write_bytes(b"\n".join(body) + b"\n")
        report = ingest_file(path, self.runtime.on_events, fmt="dsh")
        self._reported_at(report, path, {3})
        assert {"alpha", "omega"} <= self._user_texts(sid)

    def check_dsh_request(self, record: Any, raw: bytes) -> None:
        """A live ``events`` request with one hostile record between two good ones."""
        from convmem.adapters.dsh import DshServer

        sid = f"live-{next(self.counter)}"
        server = DshServer(self.runtime, dsh_home="")

        def good(seq: int, text: str) -> dict[str, Any]:
            data = {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
            return {"session_id": sid, "event": {"type": "user/message", "seq": seq, "data": data}}

        batch = [good(1, "alpha"), {"session_id": sid, "event": record}, good(10**9, "omega")]
        request = {"id": 7, "op": "events", "events": batch}
        reply = server.handle_line(_dump(request, True))
        assert reply["id"] == 7 and reply["ok"], reply
        assert {"alpha", "omega"} <= self._user_texts(sid)
        other = server.handle_line(raw)
        assert isinstance(other.get("ok"), bool)
        json.dumps(other, default=str)
        self.seen["dsh-request-" + ("skipped" if reply["skipped"] else "taken")] += 1

    def _reported_at(self, report: Any, path: Path, lines: set[int]) -> None:
        for problem in report.problems:
            assert problem.path == str(path) and problem.line in lines, str(problem)
            assert problem.message and "\n" not in problem.message
        self.seen["reported" if report.problems else "accepted"] += 1

    def check_query(self, session: str, query: str) -> None:
        from convmem.adapters.dsh import memory_command
        from convmem.retrieval import Retriever

        retriever = Retriever(self.runtime.store, self.settings)
        found = retriever.retrieve(session, query)
        retriever.retrieve_evidence(session, found.signals, found.items, 20)
        result = self.runtime.assemble(session, [], query=query, log=False)
        assert result.errors == [], result.errors
        kind, _ = memory_command(self.runtime, session, "search " + query)
        assert kind in ("success", "error")
        store = self.runtime.store  # as retrieval calls it: with normalized text
        term = normalize_text(query[:200])
        store.search_events(session, [term], 5)
        store.events_containing(session, term, 5)
        self.seen["injected" if result.injected else "empty"] += 1

    def check_skill_file(self, content: bytes) -> None:
        from convmem.skills import SkillManager

        root = self._file("")
        (root / "a-good").mkdir(parents=True)
        (root / "a-good" / "SKILL.md").write_text(
            "---\nname: good-skill\ndescription: fine\n---\n- Never push to main.\n", "utf-8"
        )
        (root / "b-hostile").mkdir()
        bad = root / "b-hostile" / "SKILL.md"
        bad.write_bytes(content)
        report = SkillManager(self.skill_store, self.settings).ingest_paths([root])
        names = {f.name: f.path for f in report.files}
        assert names.get("good-skill") == str(root / "a-good" / "SKILL.md"), report.problems
        for problem in report.problems:
            assert problem.startswith(f"{bad}: "), problem
        assert str(bad) in names.values() or report.problems
        self.seen["skill-" + ("reported" if report.problems else "accepted")] += 1

    def check_settings_file(self, content: bytes) -> None:
        path = self._file(".toml")
        path.write_bytes(content)
        try:
            settings = load_settings(path, home=self.root / "home", env={})
        except ConfigError as exc:
            message = str(exc)
            names = [s.name for s in SETTINGS]
            assert str(path) in message or "setting" in message, message
            assert any(n in message for n in names) or str(path) in message or "'" in message
            self.seen["settings-reported"] += 1
            return
        self._use_settings(settings)
        self.seen["settings-accepted"] += 1

    def _use_settings(self, settings: Any) -> None:
        """Run the in-memory pipeline under these settings (never their paths)."""
        if any(c.get("type") == "script" for c in settings["validation.checks"]):
            return
        store = MemoryStore.open(":memory:")
        with MemoryRuntime(store, settings) as rt:
            from convmem.capture import Event

            rt.on_events(
                [
                    Event("s", 1, "user/message", "The token budget must stay under 3000 tokens."),
                    Event("s", 2, "assistant/message", "I suggest 2 retries; budget 3000 tokens."),
                ]
            )
            result = rt.assemble("s", [], query="token budget", log=False)
            assert result.errors == [], result.errors

    def check_validation(self, checks: list[dict[str, Any]], text: str) -> None:
        from convmem.validation import Validator

        good = {"id": "good", "type": "required_terms", "terms": ["budget"]}
        try:
            settings = self.settings.with_values(
                validation__checks=[*checks, good], validation__enabled=True
            )
        except ConfigError:
            self.seen["validation-config-refused"] += 1
            return
        run = Validator(self.runtime.store, settings).validate_text(text)
        for error in run.errors:
            assert error.startswith("check "), error
        assert not any(e.startswith("check good:") for e in run.errors)
        assert run.checked >= 1
        self.seen["validation-errors" if run.errors else "validation-clean"] += 1

    def check_preconditions(self, rules: list[dict[str, Any]], tool: str, tool_input: Any) -> None:
        from convmem.validation import Validator

        try:
            settings = self.settings.with_values(validation__preconditions=rules)
        except ConfigError:
            return
        decision = Validator(self.runtime.store, settings).check_preconditions(
            "s", tool, tool_input
        )
        assert isinstance(decision.allowed, bool)
        self.seen["precondition-" + ("allowed" if decision.allowed else "denied")] += 1
