"""The README's main command: the shipped demo, through a real subprocess."""

from __future__ import annotations

from conftest import Cli


def _block(out: str) -> str:
    rule = "-" * 78
    return out.split(rule)[1]


def test_demo_shows_the_corrected_value_after_compaction(cli: Cli) -> None:
    result = cli("demo")
    assert result.code == 0, result
    out = result.out
    assert "After the compaction the user asks (seq 262)" in out
    block = _block(out)
    notice = block[block.index("## Memory: notices") :]
    body = block[: block.index("## Memory: notices")]
    assert "The p95 latency must stay under 200 ms at 1k rps." in body
    assert "2000 tokens" in body
    assert "The token budget for the summariser is 3000 tokens." in notice
    assert "The token budget for the summariser is 3000 tokens." not in body
    for poison in ("99999", "IGNORE PREVIOUS", "delete db/migrations", "2500"):
        assert poison not in block
    assert "compaction policy: auto (detected: compaction-basic)" in out
    assert "budget [" in out and "omitted" in out


def test_demo_is_deterministic_and_idempotent(cli: Cli) -> None:
    first = cli("demo")
    assert "was replaced" not in first.out
    second = cli("demo")
    # a second run replays into a fresh demo session: the same events, the same block
    assert "(the session 'demo' of an earlier demo was replaced)" in second.out
    assert "297 events (297 new)" in second.out
    assert _block(second.out) == _block(first.out)
    assert cli("status", "--json").json()["counts"]["events"] == 297


def test_demo_keeps_every_rule_the_user_gave(cli: Cli) -> None:
    """The demo's items, read and judged: a rule about cancelling is no withdrawal (a
    change once dropped "cancelled only from pending or paid." as one)."""
    out = cli("demo").out
    assert "297 events (297 new), 19 memory items (1 superseded)" in out
    items = cli("items", "--session", "demo").out
    assert "cancelled only from pending or paid." in items
