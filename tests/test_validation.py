"""Validation: the four check types, scopes, scripts, blocking, reminders, preconditions."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from convmem.capture import Capture, Event
from convmem.config import Settings, load_settings
from convmem.memory.models import StoredEvent
from convmem.memory.store import MemoryStore
from convmem.validation import (
    REMINDER_MAX_CHARS,
    PreconditionDecision,
    ValidationRun,
    Validator,
    Violation,
)
from pipeline import new_store

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "validation"
SCRIPT = str(FIXTURES / "checks.py")
PREFIX = "Repair reminder (convmem validation, attempt"


def make_settings(*checks: dict[str, Any], **values: Any) -> Settings:
    values.setdefault("validation__enabled", True)
    return load_settings(env={}).with_values(validation__checks=tuple(checks), **values)


@pytest.fixture
def store() -> Iterator[MemoryStore]:
    s = new_store()
    yield s
    s.close()


def check_text(text: str, *checks: dict[str, Any], **values: Any) -> ValidationRun:
    s = MemoryStore.open(":memory:")
    try:
        return Validator(s, make_settings(*checks, **values)).validate_text(text)
    finally:
        s.close()


def messages(run_: ValidationRun) -> list[str]:
    return [v.message for v in run_.violations]


def capture(store: MemoryStore, settings: Settings, events: Iterable[tuple[int, str, str]]) -> None:
    Capture(store, settings).capture_many(
        [Event("s1", seq, type_, text) for seq, type_, text in events]
    )


def say(seq: int, text: str) -> tuple[int, str, str]:
    return (seq, "assistant/message", text)


# --- required_terms --------------------------------------------------------------------

REQ = {"type": "required_terms", "id": "req", "terms": ["budget", "预算"]}


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("The Budget is 2000 tokens; 预算已确认。", True),
        ("the BUDGET, 预算", True),
        ("The budgets are fine; 预算", False),  # word edge: "budgets" is another word
        ("budget only", False),
        ("预算 only", False),
        ("预算budget", True),  # a CJK neighbour is not a Latin word character
    ],
)
def test_required_terms(text: str, ok: bool) -> None:
    result = check_text(text, REQ)
    assert result.ok is ok
    assert result.checked == 1 and result.skipped == 0 and result.deterministic


def test_required_terms_min_count_and_message() -> None:
    check = {**REQ, "terms": ["p95"], "min_count": 2}
    assert check_text("p95 here and P95 there", check).ok
    result = check_text("only one p95", check)
    assert messages(result) == ['required term "p95" appears 1 time(s) (needs 2)']
    assert result.violations[0] == Violation("req", "required_terms", messages(result)[0])


def test_required_terms_whitespace_in_term_is_flexible() -> None:
    assert check_text("at 1k\n  rps", {**REQ, "terms": ["1k rps"]}).ok


# --- forbidden_terms -------------------------------------------------------------------

FORBID = {"type": "forbidden_terms", "id": "no-force", "terms": ["force push", "强制推送"]}


def test_forbidden_terms_pass_and_fail() -> None:
    assert check_text("We merge normally.", FORBID).ok
    result = check_text("Then force push and 强制推送.", FORBID)
    assert not result.ok
    assert messages(result) == [
        'forbidden term "force push" appears 1 time(s), first at character 5',
        'forbidden term "强制推送" appears 1 time(s), first at character 20',
    ]


@pytest.mark.parametrize(
    "text",
    [
        'Never run "force push" here.',
        "Never run `force push` here.",
        "绝不要「强制推送」。",
        "“force push” is banned",
        "Example:\n```sh\ngit force push\n```\ndone",
        "~~~\n强制推送\n~~~",
    ],
)
def test_forbidden_terms_quote_exception(text: str) -> None:
    assert not check_text(text, FORBID).ok
    assert check_text(text, {**FORBID, "except_in": ["quote"]}).ok
    assert check_text(text, {**FORBID, "scope": ["body", "path"]}).ok
    assert not check_text(text, {**FORBID, "except_in": ["path"]}).ok


def test_forbidden_terms_path_exception() -> None:
    check = {**FORBID, "terms": ["secrets"]}
    text = "I edited config/secrets.toml only."
    assert not check_text(text, check).ok
    assert check_text(text, {**check, "except_in": ["path"]}).ok
    assert check_text(text, {**check, "scope": "explanation"}).ok  # explanation = body
    assert not check_text("the secrets are in config/secrets.toml", {**check, "scope": "body"}).ok


def test_bad_scope_is_an_error_not_a_crash() -> None:
    result = check_text("x", {**FORBID, "except_in": ["footnote"]})
    assert result.skipped == 1 and result.checked == 0 and not result.ok
    assert result.errors == ("check no-force: unknown scope footnote (use body, quote, path)",)


def test_warning_severity_keeps_run_ok() -> None:
    result = check_text("force push", {**FORBID, "severity": "warning"})
    assert result.ok and result.violations[0].severity == "warning"
    assert result.error_violations == ()


# --- numbers_with_conditions -----------------------------------------------------------

NUM = {
    "type": "numbers_with_conditions",
    "id": "latency",
    "numbers": [{"value": 200, "unit": "ms", "conditions": ["p95", "1k rps"]}],
}


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("The p95 latency stays under 200 ms at 1k rps.", []),
        ("Latency (P95) is 200ms at 1,000 requests/s.", []),  # numeric condition, unit alias
        ("p95 under 200 milliseconds at 1000 rps", []),
        ("Latency is under 200 ms.", ["p95", "1k rps"]),
        ("The p95 latency is under 200 ms.", ["1k rps"]),
        ("The p95 is 200 tokens, no conditions needed", []),  # another unit: not our number
        ("p95 at 1k rps. " + "x" * 100 + " Then 200 ms.", ["p95", "1k rps"]),  # outside window
    ],
)
def test_numbers_with_conditions(text: str, missing: list[str]) -> None:
    result = check_text(text, NUM)
    assert result.ok is (not missing)
    if missing:
        listed = ", ".join(f'"{c}"' for c in missing)
        assert listed in messages(result)[0]
        assert "within 80 characters" in messages(result)[0]


def test_number_window_is_configurable() -> None:
    text = "p95 at 1k rps. " + "x" * 100 + " Then 200 ms."
    assert check_text(text, {**NUM, "window": 200}).ok
    assert not check_text("p95 at 1k rps, 200 ms", {**NUM, "window": 3}).ok


def test_each_mention_is_checked() -> None:
    text = "p95 is 200 ms at 1k rps. " + "y" * 120 + " Later: 200 ms again."
    result = check_text(text, NUM)
    assert len(result.violations) == 1
    assert "at character" in messages(result)[0] and '"200 ms"' in messages(result)[0]


@pytest.mark.parametrize(
    ("forbidden", "text", "ok"),
    [
        (["3000 tokens"], "The budget is 3,000 tokens.", False),
        (["3000 tokens"], "The budget is 3000 words.", True),
        ([3000], "3000 words", False),
        ([{"value": 3, "unit": "s"}], "timeout 3 seconds", False),
        ([{"value": 3, "unit": "s"}], "timeout 3 ms", True),
        (["v2-beta"], "ship V2-BETA now", False),
        (["3000 tokens"], "预算 3000 tokens", False),
    ],
)
def test_forbidden_numbers(forbidden: list[Any], text: str, ok: bool) -> None:
    check = {"type": "numbers_with_conditions", "forbidden_numbers": forbidden}
    result = check_text(text, check)
    assert result.ok is ok, result
    if not ok:
        assert result.violations[0].check == "numbers_with_conditions#1"
        assert "is stated 1 time(s)" in messages(result)[0]


def test_forbidden_number_in_quote_can_be_excepted() -> None:
    check = {"type": "numbers_with_conditions", "forbidden_numbers": ["3000 tokens"]}
    text = 'It was "3000 tokens" before the correction; now 2000 tokens.'
    assert not check_text(text, check).ok
    assert check_text(text, {**check, "except_in": ["quote"]}).ok


@pytest.mark.parametrize(
    ("check", "error"),
    [
        ({"type": "numbers_with_conditions"}, "needs `numbers` or `forbidden_numbers`"),
        ({**NUM, "window": -1}, "`window` must be a whole number ≥ 0"),
        ({**NUM, "numbers": [{"unit": "ms"}]}, "needs a numeric `value`"),
        ({**NUM, "numbers": [{"value": 1, "conditions": []}]}, "`conditions` must not be empty"),
        ({"type": "required_terms"}, "`terms` must not be empty"),
        ({"type": "required_terms", "terms": [1]}, "`terms` must be a list of non-empty"),
        ({**REQ, "min_count": 0}, "`min_count` must be a whole number ≥ 1"),
        ({**REQ, "severity": "fatal"}, "`severity` must be error or warning"),
    ],
)
def test_bad_check_config_is_reported_and_skipped(check: dict[str, Any], error: str) -> None:
    result = check_text("p95 200 ms budget", check, FORBID)
    assert result.checked == 1 and result.skipped == 1 and not result.ok
    assert len(result.errors) == 1 and error in result.errors[0]


# --- unknown types ------------------------------------------------------------------------


def test_unknown_type_is_reported_and_skipped() -> None:
    result = check_text("force push", {"type": "llm_judge", "id": "judge"}, FORBID)
    assert result.checked == 1 and result.skipped == 1
    assert result.errors[0].startswith("check judge: unknown type 'llm_judge'")
    assert len(result.violations) == 1  # the known check still ran
    assert check_text("fine", {"type": "nope"}).errors[0].startswith("check nope#1: unknown type")


# --- script ---------------------------------------------------------------------------------


def script(function: str = "check", **extra: Any) -> dict[str, Any]:
    return {
        "type": "script",
        "id": f"s-{function}",
        "module": SCRIPT,
        "function": function,
        **extra,
    }


def test_script_bool_result_is_non_deterministic_by_default() -> None:
    ok = check_text("all done", script())
    assert ok.ok and ok.checked == 1 and not ok.deterministic
    bad = check_text("TODO: finish", script())
    assert messages(bad) == ["script check failed"]
    v = bad.violations[0]
    assert not v.deterministic and not v.blocking


def test_script_declared_deterministic() -> None:
    result = check_text("TODO", script(deterministic=True, block=True))
    assert result.deterministic and result.violations[0].deterministic
    assert result.violations[0].blocking


def test_script_list_result_with_context_and_severity() -> None:
    s = MemoryStore.open(":memory:")
    validator = Validator(s, make_settings(script("findings")))
    result = validator.validate_text("maybe!!", {"event_seq": 7})
    assert [(v.message, v.severity) for v in result.violations] == [
        ("hedging word in event 7", "error"),
        ("double exclamation", "warning"),
    ]
    assert validator.validate_text("clear.").ok
    s.close()


def test_script_by_dotted_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FIXTURES))
    check = {"type": "script", "module": "convmem_sample_check"}
    assert check_text("hash with SHA256", check).ok
    assert messages(check_text("no hash", check)) == ["the reply must mention sha256"]


def test_script_relative_to_config_file() -> None:
    settings = load_settings(FIXTURES / "validation.toml", env={})
    s = MemoryStore.open(":memory:")
    result = Validator(s, settings).validate_text(
        "TODO: the p95 budget is 200 ms at 1k rps; run `git push --force` later"
    )
    s.close()
    assert result.checked == 4 and result.skipped == 0, result.errors
    assert [v.check for v in result.violations] == ["no-todo"]


@pytest.mark.parametrize(
    ("check", "error"),
    [
        (script("boom"), "script raised RuntimeError: script exploded"),
        (script("wrong_type"), "script returned int; expected bool or list"),
        (script("missing_fn"), "script raised AttributeError"),
        ({"type": "script", "module": "no/such/file.py"}, "not found"),
        ({"type": "script", "module": "no_such_module_xyz"}, "ModuleNotFoundError"),
        ({"type": "script"}, "`module` (file path or dotted name) must be a string"),
    ],
)
def test_script_failures_are_errors_not_crashes(check: dict[str, Any], error: str) -> None:
    result = check_text("text", check, REQ)
    assert result.skipped == 1 and result.checked == 1 and not result.ok
    assert error in result.errors[0]


def test_script_that_hangs_is_stopped() -> None:
    result = check_text("text", script("hang"), validation__script_timeout_seconds=0.5)
    assert result.errors == ("check s-hang: script timed out after 0.5 s and was stopped",)
    assert result.skipped == 1 and not result.ok


# --- validate_new, logs and checkpoints -----------------------------------------------------


def test_validate_new_logs_each_assistant_message_and_advances(store: MemoryStore) -> None:
    settings = make_settings(FORBID)
    capture(
        store,
        settings,
        [(1, "user/message", "force push?"), say(2, "No force push."), say(3, "OK."), say(4, " ")],
    )
    validator = Validator(store, settings)
    logs = validator.validate_new("s1")
    assert [(log["event_seq"], log["ok"]) for log in logs] == [(2, False), (3, True)]
    assert store.checkpoint("s1").last_validate_seq == 4
    assert validator.validate_new("s1") == []  # idempotent
    rows = store.validation_logs("s1")
    assert [r["event_seq"] for r in rows] == [2, 3]
    assert rows[0]["violations"] == logs[0]["violations"]
    assert rows[0]["violations"][0]["check"] == "no-force"
    assert logs[0]["id"] == rows[0]["id"]
    capture(store, settings, [say(5, "force push again")])
    assert [log["event_seq"] for log in validator.validate_new("s1")] == [5]


@pytest.mark.parametrize("settings_kw", [{"validation__enabled": False}, {}])
def test_validate_new_noop_still_advances(store: MemoryStore, settings_kw: dict[str, Any]) -> None:
    checks = (FORBID,) if settings_kw else ()
    settings = make_settings(*checks, **settings_kw)
    capture(store, settings, [say(1, "force push"), (2, "tool/result", "ok")])
    validator = Validator(store, settings)
    assert validator.validate_new("s1") == []
    assert store.checkpoint("s1").last_validate_seq == 2
    assert store.validation_logs("s1") == []
    assert validator.repair_reminder("s1") is None


def test_validate_new_never_raises(store: MemoryStore) -> None:
    class BrokenStore(type(store)):  # type: ignore[misc]
        def events(self, *args: Any, **kwargs: Any) -> list[StoredEvent]:
            raise OSError("disk on fire")

    settings = make_settings(FORBID)
    capture(store, settings, [say(1, "force push")])
    broken = BrokenStore(store.db)
    logs = Validator(broken, settings).validate_new("s1")
    assert logs[0]["errors"] == ["validation failed: OSError: disk on fire"]
    assert store.latest_validation_log("s1")["errors"] == logs[0]["errors"]  # type: ignore[index]
    assert store.checkpoint("s1").last_validate_seq == -1  # retried next time
    closed = MemoryStore.open(":memory:")
    closed.close()
    assert Validator(closed, settings).validate_new("s1") == []


# --- blocking and repair reminders -------------------------------------------------------


def test_a_failure_that_does_not_block_is_advisory(store: MemoryStore) -> None:
    settings = make_settings(FORBID, REQ)  # deterministic, but not configured to block
    capture(store, settings, [say(1, "we force push")])
    [log] = Validator(store, settings).validate_new("s1")
    assert not log["ok"] and len(log["violations"]) == 3
    assert log["blocked"] is False and log["repair_reminder"] is None
    assert store.count_repair_reminders("s1") == 0


@pytest.mark.parametrize("deterministic", [True, False])
@pytest.mark.parametrize("block", [True, False])
@pytest.mark.parametrize("exhausted", [True, False])
def test_blocking_matrix(
    store: MemoryStore, deterministic: bool, block: bool, exhausted: bool
) -> None:
    check = script(block=block, deterministic=deterministic)
    settings = make_settings(check, validation__max_repair_attempts=1)
    validator = Validator(store, settings)
    seq = 1
    if exhausted:  # use up the single attempt first, with a check that blocks
        blocking = make_settings(
            script(block=True, deterministic=True), validation__max_repair_attempts=1
        )
        capture(store, blocking, [say(seq, "TODO first")])
        assert Validator(store, blocking).validate_new("s1")[0]["repair_reminder"]
        seq += 1
    capture(store, settings, [say(seq, "TODO again")])
    [log] = validator.validate_new("s1")
    assert not log["ok"]
    assert log["blocked"] is (deterministic and block and not exhausted)
    assert log["deterministic"] is deterministic
    # only a blocked reply is repaired: a script's judgement or an unblocking check is
    # advisory, and nothing is repaired once the attempts are used up
    assert (log["repair_reminder"] is not None) is log["blocked"]


def test_global_block_on_violation_and_warning_never_blocks(store: MemoryStore) -> None:
    settings = make_settings(
        FORBID, {**REQ, "severity": "warning"}, validation__block_on_violation=True
    )
    capture(store, settings, [say(1, "force push")])
    [log] = Validator(store, settings).validate_new("s1")
    assert log["blocked"] is True
    assert [v["blocking"] for v in log["violations"]] == [True, False, False]
    assert "[req]" not in log["repair_reminder"]  # warnings are not repaired
    per_check_off = make_settings({**FORBID, "block": False}, validation__block_on_violation=True)
    capture(store, settings, [say(2, "force push")])
    assert Validator(store, per_check_off).validate_new("s1")[0]["blocked"] is False


def test_repair_reminder_at_most_max_attempts(store: MemoryStore) -> None:
    settings = make_settings({**FORBID, "block": True})
    validator = Validator(store, settings)
    assert validator.repair_reminder("s1") is None
    reminders = []
    for seq in range(1, 5):
        capture(store, settings, [say(seq, "we force push")])
        validator.validate_new("s1")
        reminders.append(validator.repair_reminder("s1"))
    assert reminders[0] is not None and reminders[1] is not None
    assert reminders[0].startswith(f"{PREFIX} 1 of 2): the assistant reply at seq 1 failed")
    assert reminders[1].startswith(f"{PREFIX} 2 of 2):")
    assert "- [no-force] forbidden term" in reminders[0]
    assert reminders[2:] == [None, None]
    assert store.count_repair_reminders("s1") == 2
    assert validator.repair_reminder("s1") is None


def test_repair_reminder_is_stable_and_cleared_by_a_good_reply(store: MemoryStore) -> None:
    settings = make_settings({**FORBID, "block": True})
    validator = Validator(store, settings)
    capture(store, settings, [say(1, "force push")])
    validator.validate_new("s1")
    first = validator.repair_reminder("s1")
    assert first is not None and validator.repair_reminder("s1") == first  # no new attempt
    assert store.count_repair_reminders("s1") == 1
    capture(store, settings, [say(2, "Sorry, we will merge normally.")])
    validator.validate_new("s1")
    assert validator.repair_reminder("s1") is None


def test_only_the_newest_message_of_a_batch_gets_a_reminder(store: MemoryStore) -> None:
    settings = make_settings(FORBID, validation__block_on_violation=True)
    capture(store, settings, [say(1, "force push"), say(2, "force push"), say(3, "force push")])
    logs = Validator(store, settings).validate_new("s1")
    assert [bool(log["repair_reminder"]) for log in logs] == [False, False, True]
    assert [log["blocked"] for log in logs] == [False, False, True]
    assert store.count_repair_reminders("s1") == 1


def test_reminder_is_bounded(store: MemoryStore) -> None:
    terms = [f"forbidden-word-{i:02d}-with-a-long-tail" for i in range(30)]
    settings = make_settings({"type": "forbidden_terms", "terms": terms, "block": True})
    capture(store, settings, [say(1, " ".join(terms))])
    [log] = Validator(store, settings).validate_new("s1")
    reminder = log["repair_reminder"]
    assert len(reminder) <= REMINDER_MAX_CHARS
    assert reminder.startswith(f"{PREFIX} 1 of 2):")
    assert reminder.splitlines()[-1].startswith("- … and ") and reminder.endswith(" more")


def test_zero_repair_attempts_never_remind_or_block(store: MemoryStore) -> None:
    settings = make_settings(
        FORBID, validation__block_on_violation=True, validation__max_repair_attempts=0
    )
    capture(store, settings, [say(1, "force push")])
    [log] = Validator(store, settings).validate_new("s1")
    assert log["blocked"] is False and log["repair_reminder"] is None and not log["ok"]


# --- determinism ------------------------------------------------------------------------------

ALL = (REQ, FORBID, NUM, {"type": "numbers_with_conditions", "forbidden_numbers": [3000]})


def test_results_are_deterministic() -> None:
    text = "Budget 3000 tokens; force push; latency 200 ms; 强制推送"
    first = check_text(text, *ALL)
    assert first.as_dict() == check_text(text, *ALL).as_dict()
    assert first.deterministic and len(first.violations) == 5

    def logs() -> list[dict[str, Any]]:
        s = MemoryStore.open(":memory:", clock=lambda: "2026-01-01T00:00:00Z")
        settings = make_settings(*ALL)
        capture(s, settings, [say(1, text), say(2, "budget 预算 fine")])
        Validator(s, settings).validate_new("s1")
        rows = s.validation_logs("s1")
        s.close()
        return rows

    assert logs() == logs()


# --- preconditions ------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    (tmp_path / "poetry.lock").write_text("")
    return tmp_path


def gate(store: MemoryStore, *rules: dict[str, Any]) -> Validator:
    return Validator(store, make_settings(validation__preconditions=rules))


def test_no_preconditions_allows(store: MemoryStore, project: Path) -> None:
    decision = gate(store).check_preconditions("s1", "Write", {"file_path": "x", "cwd": ""})
    assert decision == PreconditionDecision(True, None)


def test_must_exist(store: MemoryStore, project: Path) -> None:
    v = gate(store, {"must_exist": "src/**", "tools": ["Edit"], "reason": "edit only"})
    cwd = str(project)
    assert v.check_preconditions("s1", "Edit", {"file_path": "src/app.py", "cwd": cwd}).allowed
    denied = v.check_preconditions("s1", "Edit", {"file_path": "src/new.py", "cwd": cwd})
    assert denied == PreconditionDecision(
        False,
        'convmem precondition: Edit on "src/new.py" denied because the path does not exist;'
        ' paths matching "src/**" must already exist (must_exist). Reason: edit only',
    )
    absolute = str(project / "src" / "pkg" / "new.py")
    assert not v.check_preconditions("s1", "edit", {"file_path": absolute, "cwd": cwd}).allowed
    assert v.check_preconditions("s1", "Edit", {"file_path": "docs/new.md", "cwd": cwd}).allowed
    assert v.check_preconditions("s1", "Write", {"file_path": "src/new.py", "cwd": cwd}).allowed


def test_must_exist_uses_process_cwd(
    store: MemoryStore, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    v = gate(store, {"must_exist": "src/*.py"})
    assert v.check_preconditions("s1", "NotebookEdit", {"notebook_path": "src/app.py"}).allowed
    assert not v.check_preconditions("s1", "Write", {"path": "src/b.py"}).allowed
    assert v.check_preconditions("s1", "Write", {"path": "src/sub/b.py"}).allowed  # * stays


def test_must_not_exist_with_tools_and_bash(store: MemoryStore, project: Path) -> None:
    v = gate(store, {"must_not_exist": "*.lock", "tools": ["Write", "Bash"]})
    cwd = str(project)
    denied = v.check_preconditions("s1", "Write", {"file_path": "poetry.lock", "cwd": cwd})
    assert not denied.allowed and denied.reason is not None
    assert '"poetry.lock"' in denied.reason and "already exists" in denied.reason
    assert "*.lock" in denied.reason
    assert v.check_preconditions("s1", "Write", {"file_path": "new.lock", "cwd": cwd}).allowed
    assert v.check_preconditions("s1", "Edit", {"file_path": "poetry.lock", "cwd": cwd}).allowed
    bash = {"command": "cp /tmp/x poetry.lock && ls src/", "cwd": cwd}
    assert not v.check_preconditions("s1", "Bash", bash).allowed
    assert v.check_preconditions("s1", "Bash", {"command": "ls -la", "cwd": cwd}).allowed


def test_precondition_config_from_toml(store: MemoryStore, project: Path) -> None:
    settings = load_settings(FIXTURES / "validation.toml", env={})
    v = Validator(store, settings)
    cwd = str(project)
    assert not v.check_preconditions("s1", "Edit", {"file_path": "src/x.py", "cwd": cwd}).allowed
    assert not v.check_preconditions(
        "s1", "Bash", {"command": "rm poetry.lock", "cwd": cwd}
    ).allowed
    assert v.check_preconditions("s1", "Read", {"file_path": "poetry.lock", "cwd": cwd}).allowed


def test_preconditions_do_not_depend_on_validation_enabled(
    store: MemoryStore, project: Path
) -> None:
    settings = make_settings(
        validation__enabled=False, validation__preconditions=({"must_exist": "src/**"},)
    )
    decision = Validator(store, settings).check_preconditions(
        "s1", "Edit", {"file_path": "src/nope.py", "cwd": str(project)}
    )
    assert not decision.allowed


def test_bad_precondition_rule_is_ignored(store: MemoryStore, project: Path) -> None:
    v = gate(
        store,
        {"must_exist": 42},
        {"tools": "Write"},
        {"must_not_exist": "*.lock", "tools": "write"},
    )
    decision = v.check_preconditions(
        "s1", "Write", {"file_path": "poetry.lock", "cwd": str(project)}
    )
    assert not decision.allowed  # the valid third rule still applies
