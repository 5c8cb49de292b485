"""The inspector in real headless Chromium: navigation, filters, lifecycle, blocks,
steering that the next ``assemble`` sees, hostile text, and the token.

Each test runs once per storage backend against a real ``convmem ui`` process; the
data goes in through the real command line, and what the page changed is read back
through it too.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, REPO, Cli, ev, write_events
from inspector.conftest import Ui

HOSTILE = (
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    '<a href="javascript:window.__pwned=3">click</a></pre></td><b>bold?</b>'
)


def follow(page: Any, locator: Any) -> None:
    """Click a link and wait for the page it leads to."""
    with page.expect_navigation():
        locator.click()


def expect_text(locator: Any, text: str) -> None:
    from playwright.sync_api import expect

    expect(locator).to_contain_text(text)


@pytest.fixture
def en1(cli: Cli) -> Cli:
    """The English fixture session: constraints, proposals, a correction (budget
    3000 tokens -> 2000 tokens)."""
    assert cli("ingest", str(FIXTURES / "en_basic.jsonl")).code == 0
    return cli


def items_by_content(cli: Cli, session: str = "en1") -> dict[str, dict[str, Any]]:
    rows = cli(
        "items",
        "--session",
        session,
        "--status",
        "active",
        "--status",
        "superseded",
        "--status",
        "retracted",
        "--status",
        "disputed",
        "--json",
    ).json()
    return {r["content"]: r for r in rows}


def test_navigation(en1: Cli, ui: Ui, page: Any) -> None:
    assert en1("assemble", "--session", "en1", "--query", "What is the budget?").code == 0
    expect_text(page.locator("h1"), "Sessions")
    page.get_by_role("link", name="en1", exact=True).click()
    expect_text(page.locator("h1"), "Session en1")
    page.get_by_role("navigation", name="Session").get_by_role("link", name="Timeline").click()
    expect_text(page.locator("h1"), "Timeline")
    assert page.locator("li.ev").count() == 22
    page.get_by_role("navigation", name="Session").get_by_role("link", name="Memory").click()
    expect_text(page.locator("h1"), "Memory")
    page.locator("#items a.mono").first.click()
    expect_text(page.locator("h2").first, "Steer")
    page.get_by_role("navigation", name="Session").get_by_role("link", name="Blocks").click()
    expect_text(page.locator("h1"), "Blocks")
    page.locator("table a", has_text="#").first.click()
    expect_text(page.locator("h1"), "Block #")
    expect_text(page.locator(".card").first, "What is the budget?")
    page.get_by_role("link", name="Search", exact=True).click()
    page.get_by_label("Query").fill("2000 tokens")
    page.get_by_role("button", name="Search").click()
    expect_text(page.locator(".card").nth(1), "make it 2000 tokens.")
    expect_text(page.locator(".formula").first, "× evidence")
    page.get_by_role("link", name="Status").click()
    expect_text(page.locator("h1"), "Status")
    page.get_by_role("link", name="Skills & rules").click()
    expect_text(page.locator("h1"), "Skills and rules")


def test_timeline_pages_and_filters(cli: Cli, ui: Ui, page: Any, tmp_path: Path) -> None:
    events = []
    for n in range(1, 131):
        if n % 3 == 1:
            events.append(ev(n, "user/message", f"Step {n}: keep the retry limit at {n} tries."))
        elif n % 3 == 2:
            events.append(ev(n, "tool/call", f"Bash(run {n})", tool_name="Bash", call_id=f"c{n}"))
        else:
            events.append(ev(n, "tool/result", f"ok {n}", tool_name="Bash", call_id=f"c{n - 1}"))
    events.append(ev(131, "compaction/summary", "Summary of the first 130 events."))
    assert cli("ingest", str(write_events(tmp_path / "long.jsonl", events))).code == 0
    page.goto(ui.url("/timeline?s=s1"))
    seqs = page.locator("li.ev a.seq").all_inner_texts()
    assert seqs[0] == "#82" and seqs[-1] == "#131" and len(seqs) == 50
    follow(page, page.get_by_role("link", name="← Older").first)
    assert page.locator("li.ev a.seq").all_inner_texts()[0] == "#32"
    follow(page, page.get_by_role("link", name="← Older").first)
    seqs = page.locator("li.ev a.seq").all_inner_texts()
    assert seqs == [f"#{n}" for n in range(1, 32)]
    assert page.get_by_role("link", name="← Older").count() == 0
    follow(page, page.get_by_role("link", name="Newer →").first)
    assert page.locator("li.ev a.seq").all_inner_texts()[0] == "#32"
    follow(page, page.get_by_role("link", name="tools", exact=True))
    kinds = set(page.locator("li.ev .head .badge").all_inner_texts())
    assert kinds == {"tool/call", "tool/result"}
    follow(page, page.get_by_role("link", name="compactions", exact=True))
    assert page.locator("li.ev a.seq").all_inner_texts() == ["#131"]
    follow(page, page.get_by_role("link", name="all", exact=True))
    page.get_by_label("Go to seq").fill("77")
    with page.expect_navigation():
        page.get_by_label("Go to seq").press("Enter")
    assert page.locator("li.ev.target a.seq").inner_text() == "#77"
    assert page.url.endswith("at=77")


def test_memory_filters(en1: Cli, ui: Ui, page: Any) -> None:
    page.goto(ui.url("/memory?s=en1"))
    total = page.locator("#items tbody tr").count()
    assert total == len(items_by_content(en1))
    page.get_by_label(re.compile(r"^\s*constraint")).check()
    page.wait_for_url(re.compile(r"kind=constraint"))
    page.wait_for_function(f"document.querySelectorAll('#items tbody tr').length < {total}")
    kinds = page.locator("#items tbody tr td:nth-child(2)").all_inner_texts()
    assert kinds and set(kinds) == {"constraint"}
    page.get_by_label(re.compile(r"^\s*superseded")).check()
    page.wait_for_url(re.compile(r"status=superseded"))
    page.wait_for_function("document.querySelectorAll('#items tbody tr').length === 1")
    expect_text(page.locator("#items tbody"), "The budget is 3000 tokens.")
    page.reload()  # the filtered address stands on its own
    assert page.locator("#items tbody tr").count() == 1


def test_an_items_lifecycle_after_a_correction(en1: Cli, ui: Ui, page: Any) -> None:
    items = items_by_content(en1)
    old, new = items["The budget is 3000 tokens."], items["make it 2000 tokens."]
    page.goto(ui.url(f"/item?id={old['id']}"))
    expect_text(page.locator(".crumbs"), "superseded")
    lifecycle = page.locator(".card", has=page.locator("h2", has_text="Lifecycle"))
    rows = lifecycle.locator("tbody tr, table tr:has(td)").all_inner_texts()
    assert [r.split("\t")[1] for r in rows] == ["created", "superseded"]
    expect_text(lifecycle, new["id"])
    sources = page.locator(".card", has=page.locator("h2", has_text="Quoted sources"))
    expect_text(sources, "The budget is 3000 tokens.")
    sources.get_by_role("link", name=re.compile(r"^seq:\d+$")).first.click()
    expect_text(page.locator("li.ev.target"), "The budget is 3000 tokens.")
    page.go_back()
    page.locator("dl.facts").get_by_role("link", name=new["id"]).click()
    expect_text(page.locator(".crumbs"), "active")
    expect_text(page.locator("dl.facts"), old["id"])
    # the score: none until asked for, then for the latest user message or a typed query
    assert page.locator("#score .formula").count() == 0
    page.get_by_role("link", name="score it against the latest user message").click()
    expect_text(page.locator("#score .formula"), "× evidence")
    page.get_by_label("Query").fill("token budget")
    page.get_by_role("button", name="Score").click()
    expect_text(page.locator("#score"), "“token budget”")
    expect_text(page.locator("#score .formula"), "kind 1")


def test_a_blocks_omissions(en1: Cli, ui: Ui, page: Any, home: Path) -> None:
    # a budget this small needs a smaller floor than the default 600
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[assembly]\nmin_budget_tokens = 100\n", "utf-8")
    assert en1("assemble", "--session", "en1", "--budget", "140", "--query", "budget").code == 0
    log = en1("explain", "--session", "en1", "--json").json()
    assert log["omitted"]
    page.goto(ui.url(f"/block?id={log['id']}"))
    omitted = page.locator(".card", has=page.locator("h2", has_text="Omitted"))
    expect_text(omitted.locator("h2"), f"Omitted ({len(log['omitted'])})")
    for entry in log["omitted"]:
        expect_text(omitted, entry["reason"])
    assert any(
        "of the budget" in o["reason"] or "left in the budget" in o["reason"]
        for o in log["omitted"]
    )
    expect_text(page.locator("h2", has_text="Budget"), "of 140 est. tokens")
    assert page.locator("svg.bar rect").count() >= 1
    shown = page.locator(".part pre").all_inner_texts()
    assert "\n".join(shown) == log["text"]
    # and beside the block before it
    assert en1("assemble", "--session", "en1", "--query", "budget").code == 0
    newest = en1("explain", "--session", "en1", "--json").json()
    page.goto(ui.url(f"/block?id={newest['id']}"))
    page.get_by_role("link", name=re.compile("Compare with the previous block")).click()
    expect_text(page.locator("h1"), f"#{log['id']}")
    assert page.locator("table.diff tr.insert, table.diff tr.replace").count() > 0


def test_a_retract_from_the_page_is_in_the_next_assemble(en1: Cli, ui: Ui, page: Any) -> None:
    item = items_by_content(en1)["Retry failed uploads at most 3 times."]
    before = en1("assemble", "--session", "en1", "--query", "retry uploads", "--json").json()
    assert f"mem {item['id']}" in before["items"]
    page.goto(ui.url(f"/item?id={item['id']}"))
    page.get_by_role("link", name="Retract…").click()
    expect_text(page.locator("#steer h2"), "Retract")
    # cancelling changes nothing
    page.get_by_role("link", name="Cancel").click()
    assert en1("inspect", item["id"], "--json").json()["item"]["status"] == "active"
    page.get_by_role("link", name="Retract…").click()
    page.get_by_label(re.compile("Reason")).fill("the limit was dropped")
    page.get_by_role("button", name="Yes, retract").click()
    expect_text(page.locator(".notice.done"), "Retracted.")
    expect_text(page.locator(".crumbs"), "retracted")
    expect_text(page.locator(".card", has=page.locator("h2", has_text="Lifecycle")), "ui")
    after = en1("assemble", "--session", "en1", "--query", "retry uploads", "--json").json()
    assert f"mem {item['id']}" not in after["items"]
    last = en1("inspect", item["id"], "--json").json()["lifecycle"][-1]
    assert (last["event"], last["actor"]) == ("retracted", "ui")
    assert last["detail"]["reason"] == "the limit was dropped"
    # and back
    page.get_by_role("link", name="Reactivate…").click()
    page.get_by_role("button", name="Yes, reactivate").click()
    expect_text(page.locator(".notice.done"), "Reactivated.")
    again = en1("assemble", "--session", "en1", "--query", "retry uploads", "--json").json()
    assert f"mem {item['id']}" in again["items"]


def test_promote_and_forget_ask_first_and_record_the_ui(en1: Cli, ui: Ui, page: Any) -> None:
    proposal = next(r for r in items_by_content(en1).values() if r["kind"] == "proposal")
    page.goto(ui.url(f"/item?id={proposal['id']}"))
    page.get_by_role("link", name="Promote…").click()
    page.get_by_label("Kind").select_option("constraint")
    page.get_by_role("button", name="Yes, promote").click()
    expect_text(page.locator(".notice.done"), "Promoted.")
    data = en1("inspect", proposal["id"], "--json").json()
    assert (data["item"]["kind"], data["item"]["evidence_type"]) == ("constraint", "user_explicit")
    assert (data["lifecycle"][-1]["event"], data["lifecycle"][-1]["actor"]) == ("promoted", "ui")
    page.get_by_role("link", name="Forget…").click()
    page.get_by_label(re.compile("Reason")).fill("wrong project")
    page.get_by_role("button", name="Yes, forget").click()
    expect_text(page.locator(".notice.done"), "Forgotten")
    last = en1("inspect", proposal["id"], "--json").json()["lifecycle"][-1]
    assert (last["event"], last["actor"], last["detail"]["reason"]) == (
        "retracted",
        "ui",
        "forgotten: wrong project",
    )


def test_a_dispute_is_resolved_from_the_page(cli: Cli, ui: Ui, page: Any, tmp_path: Path) -> None:
    events = [
        ev(1, "user/message", "The deploy window budget is 30 minutes."),
        ev(2, "assistant/message", "Noted."),
        ev(3, "user/message", "The deploy window budget is 45 minutes."),
    ]
    assert cli("ingest", str(write_events(tmp_path / "d.jsonl", events))).code == 0
    disputed = [r for r in items_by_content(cli, "s1").values() if r["status"] == "disputed"]
    assert len(disputed) == 2, disputed
    keep, other = sorted(disputed, key=lambda r: r["content"])
    page.goto(ui.url(f"/item?id={keep['id']}"))
    expect_text(page.locator("dl.facts"), other["id"])  # disputed with
    page.get_by_role("link", name="Resolve…").click()
    page.get_by_role("button", name="Yes, resolve").click()
    expect_text(page.locator(".notice.done"), "Resolved")
    assert cli("inspect", other["id"], "--json").json()["item"]["status"] == "superseded"
    assert cli("inspect", keep["id"], "--json").json()["lifecycle"][-1]["actor"] == "ui"


def test_hostile_event_text_is_inert(cli: Cli, ui: Ui, page: Any, tmp_path: Path) -> None:
    events = [
        ev(1, "user/message", f"We decided to keep this exact string: {HOSTILE}"),
        ev(2, "tool/call", f"Bash(echo '{HOSTILE}')", tool_name=HOSTILE[:40], call_id="c1"),
        ev(3, "tool/result", HOSTILE * 3, tool_name="Bash", call_id="c1"),
        ev(4, "assistant/message", f"I suggest we render {HOSTILE} as text."),
    ]
    assert cli("ingest", str(write_events(tmp_path / "h.jsonl", events))).code == 0
    assert cli("assemble", "--session", "s1", "--query", "exact string window").code == 0
    log_id = cli("explain", "--session", "s1", "--json").json()["id"]
    item = next(iter(items_by_content(cli, "s1").values()))
    query = HOSTILE.replace("&", "%26").replace("#", "%23")
    for path in (
        "/timeline?s=s1",
        "/event?s=s1&seq=3",
        "/memory?s=s1",
        f"/item?id={item['id']}",
        f"/block?id={log_id}",
        f"/search?q={query}",
        f"/item?id={item['id']}&q={query}",
    ):
        page.goto(ui.url(path))
        assert page.evaluate("typeof window.__pwned") == "undefined", path
        sources = page.evaluate("[...document.scripts].map(s => s.getAttribute('src'))")
        assert sources == ["/static/app.js", "/static/htmx.min.js"], path
        assert page.locator("main img, main b").count() == 0, path
        assert page.locator("main a[href^='javascript']").count() == 0, path
    page.goto(ui.url("/event?s=s1&seq=3"))
    expect_text(page.locator("pre.text"), "<script>window.__pwned = 1</script>")


def test_hostile_session_ids_are_links_not_markup(
    cli: Cli, ui: Ui, page: Any, tmp_path: Path
) -> None:
    sid = "a/b?c=<i>&d#e"
    assert (
        cli(
            "ingest",
            str(write_events(tmp_path / "s.jsonl", [ev(1, "user/message", "Hello there.", sid)])),
        ).code
        == 0
    )
    page.goto(ui.url("/"))
    page.get_by_role("link", name=sid).click()
    expect_text(page.locator("h1"), sid)
    page.get_by_role("navigation", name="Session").get_by_role("link", name="Timeline").click()
    expect_text(page.locator("li.ev"), "Hello there.")


def test_the_browser_without_the_token_is_refused(browser: Any, ui: Ui) -> None:
    context = browser.new_context()
    try:
        tab = context.new_page()
        response = tab.goto(ui.url("/session?s=en1"))
        assert response is not None and response.status == 403
        expect_text(tab.locator("h1"), "Token needed")
        response = tab.goto(ui.address)  # the printed address opens it
        assert response is not None and response.status == 200
        assert "token" not in tab.url  # taken out of the address bar
        response = tab.goto(ui.url("/status"))
        assert response is not None and response.status == 200
    finally:
        context.close()


SCREENSHOTS = (
    ("sessions", "/"),
    ("overview", "/session?s=demo"),
    ("timeline", "/timeline?s=demo&at=189"),
    ("memory", "/memory?s=demo"),
    ("item", None),  # the superseded item, found below
    ("block", None),  # the block the demo prints
    ("compare", None),
    ("search", "/search?q=latency+target+budget"),
    ("status", "/status"),
)


@pytest.mark.sqlite_only
def test_screenshots_of_the_demo(cli: Cli, ui: Ui, page: Any, tmp_path: Path) -> None:
    """Screenshots of the main pages from `convmem demo`'s data. They are written
    to docs/inspector/ when CONVMEM_UPDATE_SCREENSHOTS=1 (a CJK font, such as
    Debian's fonts-wqy-microhei, is needed for the Chinese text to show)."""
    assert cli("demo").code == 0
    superseded = cli("items", "--session", "demo", "--status", "superseded", "--json").json()
    blocks = ui.get("/blocks?s=demo")[2]
    ids = [int(n) for n in re.findall(r'name="a" value="(\d+)"', blocks)]
    question = "remind me what latency target"
    demo_block = min(n for n in ids if question in ui.get(f"/block?id={n}")[2])
    paths = dict(SCREENSHOTS)
    paths["item"] = f"/item?id={superseded[0]['id']}"
    paths["block"] = f"/block?id={demo_block}"
    paths["compare"] = f"/compare?a={demo_block - 1}&b={demo_block}"
    out = tmp_path / "shots"
    out.mkdir()
    for name, _ in SCREENSHOTS:
        page.goto(ui.url(paths[name]))
        page.screenshot(path=str(out / f"{name}.png"))
        assert (out / f"{name}.png").stat().st_size > 20_000, name
    if os.environ.get("CONVMEM_UPDATE_SCREENSHOTS") == "1":
        target = REPO / "docs" / "inspector"
        target.mkdir(exist_ok=True)
        for png in sorted(out.glob("*.png")):
            shutil.copy(png, target / png.name)
