"""The token estimate against real tokenizers whose vocabularies ship in packages.

convmem's budgets are in estimated tokens (no host hands a plugin its tokenizer). This
pins how far the estimate may drift from real counts on English, Chinese, code, logs
and convmem's own blocks; ``bench/token_meter.py`` reports the full figures.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from convmem.core.text import estimate_tokens

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import token_meter  # noqa: E402

#: Largest total error allowed per kind of text, against the tokenizers built for it
#: (cl100k is an English-centred vocabulary: it is not held to Chinese).
BOUNDS = {"english": 0.10, "chinese": 0.20, "code": 0.12, "logs": 0.15, "blocks": 0.20}
CORPORA = {
    # in-repo texts, so the test needs nothing from outside the repository
    "english": lambda: token_meter._extraction_turns("en"),
    "chinese": lambda: token_meter._extraction_turns("zh"),
    "code": token_meter.code,
    "logs": token_meter.logs,
    "blocks": token_meter.blocks,
}


@pytest.fixture(scope="module")
def counters() -> dict[str, object]:
    return dict(token_meter.tokenizers())


@pytest.mark.parametrize("kind", sorted(BOUNDS))
def test_estimate_is_within_bounds_of_real_tokenizers(
    kind: str, counters: dict[str, object]
) -> None:
    texts = CORPORA[kind]()
    assert len(texts) >= 20, kind
    for name, count in counters.items():
        if kind == "chinese" and name == "cl100k":
            continue
        result = token_meter.measure(texts, count)  # type: ignore[arg-type]
        assert abs(result["total_error"]) <= BOUNDS[kind], (kind, name, result)


def test_the_flat_spec_formula_undercounts_logs_and_blocks(counters: dict[str, object]) -> None:
    """Why convmem prices character classes: the flat rate misses digits and symbols."""
    count = counters["qwen2.5"]
    for kind in ("logs", "blocks"):
        texts = CORPORA[kind]()
        flat = token_meter.measure(texts, count, token_meter.spec_estimate)  # type: ignore[arg-type]
        ours = token_meter.measure(texts, count)  # type: ignore[arg-type]
        assert flat["total_error"] < -0.25 and abs(ours["total_error"]) < abs(flat["total_error"])


def test_the_estimate_is_cheap_and_deterministic() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("Hello world") == 3
    assert estimate_tokens("你好世界") == 3
    assert estimate_tokens("2026-11-03T10:10:16Z") == 17
    text = "[mem mem_en1_5237f1afdc3574bd · constraint · user] p95 under 200 ms"
    assert estimate_tokens(text) == estimate_tokens(text)
