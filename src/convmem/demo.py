"""The shipped demo: a long conversation replayed through the runtime like a host would.

Events are fed one at a time; before each real user message the runtime is asked
for its pre-step block, exactly as an adapter does. The demo reports the block
the host gets for the first question asked after the compaction, when the early
constraints have left the model's context.

A replay starts from an empty session: a demo session left by an earlier run is
removed first. Replayed over its own stored events, a step would be ranked with the
statistics of the turns that come after it, which a host never sees, and the block
would not be the one a first run shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from typing import TYPE_CHECKING

from convmem.adapters.events import parse_event
from convmem.capture import Event, is_user_evidence
from convmem.core.constants import COMPACTION_EVENT_TYPES

if TYPE_CHECKING:
    from convmem.runtime import MemoryRuntime


@dataclass
class DemoResult:
    session_id: str
    events: int
    inserted: int
    compaction_seqs: list[int]
    question_seq: int | None
    question: str
    block: str
    log_id: int | None
    replaced: bool = False


def demo_events() -> list[Event]:
    text = files("convmem.data").joinpath("demo.jsonl").read_text("utf-8")
    return [parse_event(json.loads(line)) for line in text.splitlines() if line.strip()]


def replay(runtime: MemoryRuntime, events: list[Event] | None = None) -> DemoResult:
    """Feed the conversation event by event, assembling before each user message."""
    events = demo_events() if events is None else events
    session_id = events[0].session_id
    replaced = runtime.store.count_events(session_id) > 0
    if replaced:
        runtime.store.purge_session(session_id)
    runtime.session_start(session_id, "startup", origin="demo")
    compactions: list[int] = []
    result = DemoResult(session_id, len(events), 0, compactions, None, "", "", None, replaced)
    for event in events:
        if event.type in COMPACTION_EVENT_TYPES:
            compactions.append(event.seq)
        real_prompt = is_user_evidence(event.type, event.source_kind, event.text)
        if real_prompt:
            result.inserted += runtime.on_event(event).inserted
            assembled = runtime.assemble(session_id, None, event.turn, event.step, event.text)
            wanted = compactions and result.question_seq is None and "?" in event.text
            if wanted and assembled.injected:
                result.question_seq, result.question = event.seq, event.text
                result.block = assembled.text
                latest = runtime.store.latest_assembly_log(session_id)
                result.log_id = None if latest is None else int(latest["id"])
            continue
        result.inserted += runtime.on_event(event).inserted
    return result
