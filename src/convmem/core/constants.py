"""The shared vocabulary: every enumerated value convmem stores or compares against.

Kept in one place so that the schema, the extraction rules, the ranking and the
assembled text all agree on the same spellings.
"""

from __future__ import annotations

from typing import Final

# --- memory items -----------------------------------------------------------------

MEMORY_KINDS: Final = ("fact", "decision", "constraint", "preference", "proposal", "open_question")

EVIDENCE_TYPES: Final = (
    "user_explicit",
    "skill",
    "artifact_verified",
    "assistant_proposal",
    "inferred",
)

STATUSES: Final = ("active", "superseded", "disputed", "retracted")

#: What a ``memory_events`` row can record.
MEMORY_EVENTS: Final = (
    "created",
    "revised",
    "superseded",
    "retracted",
    "disputed",
    "reactivated",
    "promoted",
    "resolved",
)

#: Retrieval weights (spec: score formula).
KIND_WEIGHT: Final = {
    "decision": 1.0,
    "constraint": 1.0,
    "fact": 0.95,
    "preference": 0.8,
    "open_question": 0.8,
    "proposal": 0.5,
}
EVIDENCE_WEIGHT: Final = {
    "user_explicit": 1.0,
    "artifact_verified": 0.95,
    "skill": 0.9,
    "assistant_proposal": 0.6,
    "inferred": 0.4,
}

# --- skills and rules ---------------------------------------------------------------

RULE_CATEGORIES: Final = (
    "constraint",  # must / always
    "prohibition",  # never / must not
    "workflow",  # ordered steps
    "preference",  # prefer / should
    "current_state",  # describes how things are now; may go stale
    "reference",  # anything else worth quoting
)

RULE_SCOPES: Final = ("body", "quote", "path", "explanation")

# --- events -------------------------------------------------------------------------

COMPACTION_EVENT_TYPES: Final = (
    "compaction/start",
    "compaction/summary",
    "compaction/prune",
    "compaction/end",
)

#: The person's own messages: the evidence a block quotes by default, and what the
#: word index (``words_fts``; ``message_words`` on PostgreSQL) holds.
PERSON_MESSAGE: Final = "user/message"

CAPTURED_EVENT_TYPES: Final = (
    "user/message",
    "assistant/message",
    "system/message",
    "tool/call",
    "tool/result",
    "command/invoke",
    "command/output",
    *COMPACTION_EVENT_TYPES,
)

#: The event types extraction reads; its cursor moves over the others.
EXTRACTED_TYPES: Final = ("user/message", "assistant/message")

ROLES: Final = ("user", "assistant", "system", "tool", "command")

#: Role implied by an event type's prefix when the event does not name one.
ROLE_BY_PREFIX: Final = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool",
    "command": "command",
    "compaction": "system",
}

STORE_MODES: Final = ("host", "archive", "none")

# --- provenance of message content ---------------------------------------------------

#: The source kind convmem marks its own injected message with.
CONVMEM_SOURCE_KIND: Final = "convmem"

#: Source kinds whose text was produced by a program, not typed by the person. Stored
#: for completeness, never used as the user's words.
GENERATED_SOURCE_KINDS: Final = frozenset(
    {
        CONVMEM_SOURCE_KIND,
        "long-conversation-memory",
        "runtime-context",
        "agent-instructions",
        "skill-invocation",
        "time-context",
        "compaction-checkpoint",
        "compact-checkpoint",
        "plan-mode",
        # seen in Claude Code transcripts
        "hook-context",
        "client-meta",
        "compact-summary",
    }
)

#: Source kinds that mean "the person typed this" (None: no source recorded).
USER_SOURCE_KINDS: Final = frozenset({None, "user", "input", "prompt", "steer"})

# --- limits ---------------------------------------------------------------------------

MAX_EVENT_TEXT_CHARS: Final = 20_000
MAX_QUERY_TOKENS: Final = 160
RETRIEVAL_LIMIT_CAP: Final = 100
#: Characters per token of each class in the token estimate (``core.text.estimate_tokens``),
#: fitted to real tokenizers on English, Chinese, code and logs (``bench/token_meter.py``).
CJK_CHARS_PER_TOKEN: Final = 1.5
LETTERS_PER_TOKEN: Final = 4.3
DIGITS_PER_TOKEN: Final = 1.0
PUNCT_PER_TOKEN: Final = 1.8
SPACES_PER_TOKEN: Final = 14.0
OTHER_CHARS_PER_TOKEN: Final = 1.1

#: Sequence distance from the checkpoint within which evidence counts as recent.
RECENCY_WINDOW: Final = 40

#: The marker that opens every block convmem injects (used to recognise it coming back).
BLOCK_MARKER: Final = "[convmem memory]"

COMPACTION_POLICIES: Final = ("auto", "compaction-basic", "billion-context", "none")
