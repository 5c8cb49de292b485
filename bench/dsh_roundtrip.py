"""Pre-step round trip through ``convmem serve dsh``, as the DSH plugin sees it.

Starts the real server process, feeds it a synthetic session as raw DSH events
(the ``events`` op, in batches like the plugin's), marks a compaction so that the
memory block is actually assembled and returned, then times N ``pre_step`` requests
from write to reply on the pipes. Usage::

    python bench/dsh_roundtrip.py [--events 400] [--steps 500] [--out bench/results]
    python bench/dsh_roundtrip.py --events 10000 --steps 300 --name dsh-roundtrip-1e4
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from convmem.capture import Event

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import synthetic_events

T0_MS = 1_796_224_776_000


def dsh_event(e: Event) -> dict[str, Any]:
    """A canonical synthetic event in the shape DSH 0.2.1 logs it."""
    time_ms = T0_MS + e.seq * 1000
    text = [{"type": "text", "text": e.text}]
    if e.type == "user/message":
        data: dict[str, Any] = {"content": text, "source": {"kind": "user"}, "role": "user"}
    elif e.type == "assistant/message":
        message = {"role": "assistant", "content": text, "source": {"kind": "model"}}
        data = {"turn": e.turn, "step": 1, "message": message}
    elif e.type == "tool/call":
        data = {"turn": e.turn, "step": 1, "callId": f"c{e.seq}", "name": e.tool_name or "bash"}
        data["arguments"] = json.dumps({"command": e.text})
    else:
        source = {"kind": "tool", "callId": f"c{e.seq - 1}"}
        message = {"role": "tool", "source": source, "toolCallId": f"c{e.seq - 1}"}
        data = {"turn": e.turn, "step": 1, "message": {**message, "content": text}}
    return {"type": e.type, "seq": e.seq, "time": time_ms, "data": data}


class Client:
    def __init__(self, home: Path) -> None:
        env = {**os.environ, "CONVMEM_HOME": str(home)}
        env.pop("DSH_HOME", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "convmem", "serve", "dsh"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.next_id = 0

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"id": self.next_id, "op": op, **fields}).encode() + b"\n")
        self.proc.stdin.flush()
        reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
        if not reply.get("ok"):
            raise SystemExit(f"{op} failed: {reply}")
        return reply

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(events: int, steps: int) -> dict[str, Any]:
    session = "synth-0"
    canonical = list(synthetic_events(events, sessions=1))
    raw = [dsh_event(e) for e in canonical]
    last = raw[-1]["seq"]
    raw += [
        {"type": "compaction/start", "seq": last + 1, "time": T0_MS, "data": {"turn": 999}},
        {"type": "compaction/end", "seq": last + 2, "time": T0_MS, "data": {"turn": 999}},
    ]
    queries = [e.text for e in canonical if e.type == "user/message"]
    with tempfile.TemporaryDirectory() as tmp:
        client = Client(Path(tmp))
        started = time.perf_counter()
        client.ask("hello")
        start_ms = (time.perf_counter() - started) * 1000
        client.ask("session_start", session_id=session, source="startup")
        started = time.perf_counter()
        for i in range(0, len(raw), 50):
            batch = [{"session_id": session, "event": ev} for ev in raw[i : i + 50]]
            client.ask("events", events=batch)
        ingest_s = time.perf_counter() - started
        for query in queries[:5]:  # warm-up
            client.ask("pre_step", session_id=session, turn=1000, step=1, query=query)
        trips: list[float] = []
        server: list[float] = []
        injected = 0
        for n in range(steps):
            query = queries[n % len(queries)]
            t = time.perf_counter()
            reply = client.ask("pre_step", session_id=session, turn=1000 + n, step=1, query=query)
            trips.append((time.perf_counter() - t) * 1000)
            server.append(float(reply["ms"]))
            injected += bool(reply["text"])
        floor: list[float] = []  # the transport alone: an op that does no work
        for _ in range(steps):
            t = time.perf_counter()
            client.ask("pre_execute", session_id=session, tool="read", arguments={})
            floor.append((time.perf_counter() - t) * 1000)
        client.close()
    return {
        "benchmark": "dsh pre-step round trip (plugin pipe -> convmem serve dsh -> reply)",
        "date": time.strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "events": len(raw),
        "steps": steps,
        "injected_steps": injected,
        "server_start_to_hello_ms": round(start_ms, 1),
        "ingest_seconds": round(ingest_s, 3),
        "round_trip_ms": {
            "median": round(statistics.median(trips), 3),
            "p90": round(percentile(trips, 0.90), 3),
            "p99": round(percentile(trips, 0.99), 3),
            "max": round(max(trips), 3),
        },
        "transport_floor_ms": {
            "median": round(statistics.median(floor), 3),
            "p99": round(percentile(floor, 0.99), 3),
        },
        "server_ms": {
            "median": round(statistics.median(server), 3),
            "p99": round(percentile(server, 0.99), 3),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=400)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    parser.add_argument("--name", default="dsh-roundtrip", help="result file name, no suffix")
    args = parser.parse_args()
    result = run(args.events, args.steps)
    rt = result["round_trip_ms"]
    print(
        f"{result['events']} events, {result['steps']} pre-steps ({result['injected_steps']}"
        f" injected): round trip median {rt['median']} ms, p90 {rt['p90']} ms,"
        f" p99 {rt['p99']} ms (server side median {result['server_ms']['median']} ms; pipe and"
        f" JSON alone median {result['transport_floor_ms']['median']} ms)"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
