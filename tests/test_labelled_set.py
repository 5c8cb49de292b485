"""The labelled extraction set and the classifier trained on it stay usable and honest."""

from __future__ import annotations

import json
import sys
from collections import Counter
from importlib.resources import files
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import extraction_data as gold  # noqa: E402
from convmem.memory import acts  # noqa: E402


def test_the_labelled_set_is_valid_and_large_enough() -> None:
    conversations = gold.load()  # raises with every problem named
    sentences: Counter[str] = Counter()
    for conv in conversations:
        assert gold.split_of(conv.id) == conv.split
        n = sum(len(t.sentences) for t in conv.turns)
        sentences["all"] += n
        sentences[conv.split] += n
        sentences[conv.lang] += n
        sentences[conv.domain] += n
    assert sentences["all"] >= 600
    assert sentences["heldout"] >= sentences["all"] / 5 * 0.9  # a fifth, by hash of the id
    assert sentences["zh"] >= sentences["all"] / 3
    assert min(sentences["project"], sentences["chat"]) >= sentences["all"] * 0.4


def test_the_shipped_model_speaks_the_features_of_this_code() -> None:
    model = json.loads(files("convmem.data").joinpath("acts-model.json").read_text("utf-8"))
    assert model["classes"] == [
        "none",
        "constraint",
        "decision",
        "fact",
        "preference",
        "open_question",
    ]
    assert model["trained_on"] == "bench/data/extraction/dev"
    prefixes = {name.split(":", 1)[0] for name in model["weights"]}
    assert prefixes <= {
        "act",
        "num",
        "lang",
        "zh",
        "zhstart",
        "zb",
        "w",
        "start",
        "len",
        "punct",
        "ctx",
    }
    # every named feature the model weighs is one the code still produces (a renamed
    # feature would silently weigh nothing)
    source = Path(acts.__file__).read_text("utf-8")
    fixed = {n for n in model["weights"] if n.split(":", 1)[0] in ("act", "ctx", "punct", "len")}
    missing = sorted(
        n for n in fixed if f'"{n}"' not in source and f'"{n.split(":")[0]}:"' not in source
    )
    assert missing == []
    assert {n for n in model["weights"] if n.startswith("num:")} <= {
        f"num:{t}"
        for t in (
            "quantity",
            "money",
            "percent",
            "duration",
            "time",
            "date",
            "version",
            "number",
            "none",
            "bounded",
            "range",
            "many",
        )
    }


def test_classification_is_deterministic() -> None:
    text = "Keep p95 under 200 ms at 1k rps, and the timeout is 30 s."
    first = [acts.classify(text).reason for _ in range(3)]
    assert len(set(first)) == 1


def test_the_link_conversations_are_valid() -> None:
    import links

    seen: set[tuple[Path, str]] = set()
    counts: Counter[str] = Counter()
    for split in links.SPLITS:
        for path in sorted((links.DATA / split).glob("*.txt")):
            for conv in links.load(path):
                assert (path, conv.name) not in seen, conv.name  # unique within a file
                seen.add((path, conv.name))
                assert 2 <= len(conv.messages) <= 8, conv.name
                assert all(role in ("U", "A") for role, _ in conv.messages), conv.name
                counts[split] += 1
                if conv.expected is None:
                    counts[f"{split}:none"] += 1
                    continue
                _, new, old = conv.expected
                assert 1 <= old < new <= len(conv.messages), conv.name
                # both ends of a link are the person's own words
                assert conv.messages[old - 1][0] == conv.messages[new - 1][0] == "U", conv.name
    assert counts["tuning"] >= 150 and counts["heldout"] >= 100
    assert counts["heldout:none"] >= 20  # negatives: a link made there is wrong
