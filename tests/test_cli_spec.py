"""Behaviour the specification asks for, checked through ``convmem`` subprocesses:
budget bounds, search that matches the query, explain's lists and reasons, the
message a block was delivered as, and validation runs in ``explain``."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import FIXTURES, Cli, ev, write_events

EN = str(FIXTURES / "en_basic.jsonl")


# --- budget bounds -------------------------------------------------------------------------


def test_budget_never_goes_below_the_minimum(cli: Cli, tmp_path: Path) -> None:
    assert cli("ingest", EN).code == 0
    low = cli("assemble", "--session", "en1", "--query", "budget", "--budget", "50", "--json")
    data = low.json()
    assert data["budget"] == 600  # assembly.min_budget_tokens
    assert "budget 50 raised to assembly.min_budget_tokens 600" in data["reasons"]
    assert data["injected"] and data["used_tokens"] <= 600
    high = cli("assemble", "--session", "en1", "--query", "budget", "--budget", "900", "--json")
    assert high.json()["budget"] == 900 and not any("raised" in r for r in high.json()["reasons"])
    # a lower minimum in the settings lets a small budget through, as configured
    (tmp_path / "low.toml").write_text("[assembly]\nmin_budget_tokens = 100\n", "utf-8")
    small = cli(
        "--config",
        str(tmp_path / "low.toml"),
        "assemble",
        "--session",
        "en1",
        "--budget",
        "150",
        "--json",
    )
    assert small.json()["budget"] == 150


# --- search ----------------------------------------------------------------------------------


def test_a_bare_number_finds_what_was_said_with_it(cli: Cli) -> None:
    assert cli("ingest", EN).code == 0
    found = cli("search", "3000", "--json").json()
    contents = [r["content"] for r in found["items"]] + [r["text"] for r in found["evidence"]]
    assert any("3000 tokens" in c for c in contents), found
    assert all("3000" in c for c in contents), contents
    # by value: 300 is not 3000, and 3000 is not 30000
    three_hundred = cli("search", "300", "--json").json()
    assert not any("3000" in r["content"] for r in three_hundred["items"])
    assert not any("3000" in r["text"] for r in three_hundred["evidence"])
    with_unit = cli("search", "3000 tokens", "--json").json()
    assert any("3000 tokens" in r["text"] for r in with_unit["evidence"])
    human = cli("search", "3000")
    assert "3000 tokens" in human.out


def test_search_lists_only_what_matches(cli: Cli) -> None:
    assert cli("ingest", EN).code == 0
    nothing = cli("search", "zebra quantum flux", "--json").json()
    assert nothing["items"] == [] and nothing["evidence"] == [], nothing
    assert cli("search", "zebra quantum flux").out.strip() == "no matches"
    latency = cli("search", "latency", "--json").json()
    assert latency["items"], latency
    for row in latency["items"]:
        assert "latency" in row["content"].lower()
    for row in latency["evidence"]:
        assert "latency" in row["text"].lower()
    # standing constraints belong to the block, not to every search
    assert not any("Retry failed uploads" in r["content"] for r in latency["items"])


# --- explain ------------------------------------------------------------------------------------


def test_included_and_omitted_never_name_the_same_item(cli: Cli) -> None:
    assert cli("ingest", EN).code == 0
    assert cli("assemble", "--session", "en1", "--query", "what is the budget?").code == 0
    log = cli("explain", "--json").json()
    text = log["text"]
    assert "superseded" in text  # the notice names the replaced item...
    included = {label.removeprefix("mem ") for label in log["items"]}
    omitted = {o["id"] for o in log["omitted"]}
    assert not included & omitted, included & omitted  # ...which is not included


def test_a_user_message_from_an_unknown_source_is_blamed_on_its_source(
    cli: Cli, tmp_path: Path
) -> None:
    events = [
        ev(1, "user/message", "We are building the summariser service.", "u"),
        ev(2, "user/message", "The retry budget is 7 attempts per hour.", "u"),
        ev(
            3,
            "user/message",
            "The retry budget of the summariser is 900 attempts per hour.",
            "u",
            source={"kind": "some-other-plugin"},
        ),
    ]
    assert cli("ingest", str(write_events(tmp_path / "u.jsonl", events))).code == 0
    assert cli("assemble", "--session", "u", "--query", "is it 900 attempts?").code == 0
    log = cli("explain", "--session", "u", "--json").json()
    [why] = [o["reason"] for o in log["omitted"] if o["id"] == "seq:3"]
    assert why == "source some-other-plugin is not the person's own input", log["omitted"]
    assert "event type" not in why


def test_the_delivered_block_is_linked_to_its_message(cli: Cli, tmp_path: Path) -> None:
    assert cli("ingest", EN).code == 0
    block = cli("assemble", "--session", "en1", "--query", "latency", "--json").json()
    assert block["injected"]
    before = cli("explain", "--json").json()
    assert before["message_seq"] is None
    # the host stores the block it inserted and hands it back as an event
    back = ev(23, "user/message", block["text"], "en1", source={"kind": "convmem"}, role="user")
    assert cli("ingest", str(write_events(tmp_path / "back.jsonl", [back]))).code == 0
    after = cli("explain", "--json").json()
    assert after["id"] == before["id"] and after["message_seq"] == 23


def test_explain_shows_the_latest_validation_run(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "v.toml"
    config.write_text(
        '[validation]\nenabled = true\nchecks = [{id = "no-force", type = "forbidden_terms",'
        ' terms = ["force push"], block = true}]\n',
        "utf-8",
    )
    events = [
        ev(1, "user/message", "How do we publish the branch?", "v"),
        ev(2, "assistant/message", "Just force push it.", "v"),
    ]
    path = write_events(tmp_path / "v.jsonl", events)
    assert cli("--config", str(config), "ingest", str(path)).code == 0
    assert cli("--config", str(config), "assemble", "--session", "v").code == 0
    shown = cli("--config", str(config), "explain", "--session", "v")
    assert "latest validation: #1 seq 2, 1 violation(s), blocked, repair reminder issued" in (
        shown.out
    ), shown
    assert '[no-force] forbidden term "force push"' in shown.out
    data = cli("--config", str(config), "explain", "--session", "v", "--json").json()
    assert data["latest_validation"]["blocked"] == 1
    status = cli("--config", str(config), "status", "--json").json()
    assert status["latest_validation"] == data["latest_validation"]
    assert json.dumps(status["latest_validation"])  # plain data
