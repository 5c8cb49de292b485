"""An agent loop with convmem memory, runnable without a model or an API key.

    python examples/agent_loop.py

The loop keeps its conversation as an OpenAI chat completions message list and,
like a real loop with a finite context window, sends the model only the system
prompt and the last few messages. Before each call it asks
``OpenAIMemory.with_memory`` for the list to send: convmem records what is new
and, when something relevant has scrolled out of the window, inserts one memory
message in front of the newest user message.

The "model" is a stand-in: it answers a question by quoting the sentence in its
context that shares the most words with the question, so you can see whether the
answer was still in front of it. Swap ``fake_model`` for a real client call, e.g.
``client.chat.completions.create(model=..., messages=request)``.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from convmem.adapters.openai import OpenAIMemory
from convmem.config import load_settings
from convmem.runtime import MemoryRuntime

#: How many recent messages the loop sends (besides the system prompt).
WINDOW = 4

SCRIPT = [
    "The p95 latency of the sync endpoint must stay under 200 ms at 1k rps.",
    "We decided to use SQLite for the local index.",
    "Retry failed uploads at most 3 times.",
    "Please draft the upload module next.",
    "Add a progress bar to the CLI.",
    "What latency limit applies to the sync endpoint?",
    "Which database did we pick for the local index?",
]

_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "to", "for", "we", "did", "what", "which", "of", "at", "applies"}


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def fake_model(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Reply to the last message; answer questions only from what is in ``messages``."""
    question = _content(messages[-1])
    if not question.endswith("?"):
        return {"role": "assistant", "content": "Noted."}
    asked = _words(question)
    best, best_overlap = "", 0
    for message in messages[:-1]:
        for line in _content(message).splitlines():
            # a memory line ends with its source, e.g. "[ev seq:2]"; keep the claim
            sentence = re.sub(r"^- \[[^\]]*\]\s*|\s*(\(conditions:.*)?\[ev [^\]]*\]$", "", line)
            overlap = len(asked & _words(sentence))
            if overlap > best_overlap:
                best, best_overlap = sentence.strip(), overlap
    if best_overlap < 2:
        return {"role": "assistant", "content": "I don't know; it is not in my context."}
    return {"role": "assistant", "content": f"From my context: {best}"}


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(home=home, overrides={"assembly.locale": "en"})
        with MemoryRuntime.open(settings) as runtime:
            memory = OpenAIMemory(runtime, "demo")
            history: list[dict[str, Any]] = [
                {"role": "system", "content": "You are a careful coding agent."}
            ]
            for user_text in SCRIPT:
                history.append({"role": "user", "content": user_text})
                window = [history[0], *history[1:][-WINDOW:]]
                request = memory.with_memory(window)
                reply = fake_model(request)
                history.append(reply)
                print(f"user:      {user_text}")
                print(f"assistant: {reply['content']}")
                if user_text.endswith("?"):
                    print(f"  (without memory it would say: {fake_model(window)['content']})")
            for message in request:
                if message.get("name") == "convmem":
                    print("\nThe memory message sent with the last step:\n")
                    print(message["content"])


if __name__ == "__main__":
    main()
