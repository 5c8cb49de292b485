"""A deterministic generator of long synthetic sessions.

Mixed English and Chinese user messages with constraints, numbers and
corrections; assistant replies; tool calls and results. The same arguments always
give the same events.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator

from convmem.capture import Event

_SUBJECTS = [
    "the cache",
    "the API",
    "the parser",
    "the importer",
    "the scheduler",
    "the UI",
    "数据库",
    "解析器",
    "缓存层",
    "调度器",
]
_USER = [
    "The p95 latency of {s} must stay under {n} ms at {k}k rps.",
    "We decided to keep {s} behind a feature flag until week {k}.",
    "Never deploy {s} on Fridays.",
    "I prefer small pull requests for {s}, under {n} lines.",
    "Should we split {s} into {k} services?",
    "Actually, make the {s} timeout {n} ms instead.",
    "{s}的连接池大小必须是 {k}0 个，不要超过。",
    "我们决定{s}先不上线，预算改成 {n} tokens。",
    "Please look at src/{f}/main.py and fix the failing test in tests/test_{f}.py.",
    "Remind me what we agreed about {s}.",
]
_ASSISTANT = [
    "I suggest we add a retry with {k} attempts to {s}.",
    "Done: updated {s}; {n} tests pass.",
    "Let me check the logs for {s} first.",
    "我建议{s}增加 {k} 个副本。",
]
_TOOL = [
    "PASSED {n} tests in {k}.{k}s\n" + "ok\n" * 3,
    "ERROR: connection refused after {n} ms (attempt {k})",
    "-rw-r--r-- 1 dev dev {n} src/{f}/main.py\n-rw-r--r-- 1 dev dev {k}00 README.md",
    '{{"status": "ok", "latency_ms": {n}, "rows": {k}000}}',
]
_FILES = ["api", "core", "cache", "io", "jobs"]


def synthetic_events(count: int, sessions: int = 1, seed: int = 1234) -> Iterator[Event]:
    rng = random.Random(seed)
    per = max(1, count // sessions)
    made = 0
    for s in range(sessions):
        sid = f"synth-{s}"
        seq = 0
        turn = 0
        while seq < per and made < count:
            turn += 1
            for kind in ("user", "assistant", "tool/call", "tool/result", "assistant"):
                if seq >= per or made >= count:
                    break
                seq += 1
                made += 1
                fill = {
                    "s": rng.choice(_SUBJECTS),
                    "n": rng.randint(10, 5000),
                    "k": rng.randint(1, 9),
                    "f": rng.choice(_FILES),
                }
                time = f"2026-01-{1 + turn // 500 % 28:02d}T{turn % 24:02d}:00:{seq % 60:02d}Z"
                if kind == "user":
                    yield Event(
                        sid,
                        seq,
                        "user/message",
                        rng.choice(_USER).format(**fill),
                        time=time,
                        turn=turn,
                    )
                elif kind == "assistant":
                    yield Event(
                        sid,
                        seq,
                        "assistant/message",
                        rng.choice(_ASSISTANT).format(**fill),
                        time=time,
                        turn=turn,
                    )
                elif kind == "tool/call":
                    yield Event(
                        sid,
                        seq,
                        "tool/call",
                        f"Bash(pytest -q tests/test_{fill['f']}.py)",
                        time=time,
                        turn=turn,
                        tool_name="Bash",
                        call_id=f"c{seq}",
                    )
                else:
                    yield Event(
                        sid,
                        seq,
                        "tool/result",
                        rng.choice(_TOOL).format(**fill),
                        time=time,
                        turn=turn,
                        tool_name="Bash",
                        call_id=f"c{seq - 1}",
                    )


# --------------------------------------------------------------------------- session mix
#
# A richer stream for the scale benchmark: many sessions of log-uniform length,
# a Zipf-distributed vocabulary of topics and identifiers per project, English and
# Chinese (and mixed) user messages, constraints with units, corrections of earlier
# numbers, questions, pasted stack traces, several tool calls per turn with results
# of varied length. ``session_mix(n)`` is a prefix of ``session_mix(m)`` for n < m,
# so every size holds the smaller sizes' events.

_MIX_NOUNS = (
    "cache parser importer scheduler queue worker gateway router index planner "
    "exporter renderer tokenizer session ledger invoice billing account profile "
    "search upload download thumbnail webhook migration schema backup replica shard "
    "cluster deploy pipeline runner build release config secret vault metric alert "
    "dashboard report crawler fetcher sitemap feed digest mailer notifier payment "
    "refund coupon cart checkout catalog inventory warehouse shipment tracker route "
    "map geocoder tile font theme layout widget modal form validator serializer "
    "encoder decoder codec stream buffer socket proxy balancer limiter throttle "
    "retry backoff circuit breaker health probe sidecar daemon cron timer clock "
    "calendar reminder ticket comment thread reaction avatar badge leaderboard "
    "quota plan tenant region zone bucket blob object snapshot journal wal compactor "
    "vacuum analyzer optimizer planner executor kernel driver adapter plugin hook "
    "bridge client server handler middleware controller model view template store"
).split()
_MIX_ADJ = (
    "legacy new async batch nightly hourly primary secondary shared local remote "
    "cold hot fast slow internal public admin mobile web desktop regional global "
    "partial incremental full streaming offline online staging canary"
).split()
_MIX_METRICS = (
    ("p95 latency", "ms"),
    ("p99 latency", "ms"),
    ("timeout", "ms"),
    ("memory limit", "MB"),
    ("disk quota", "GB"),
    ("throughput", "rps"),
    ("error rate", "%"),
    ("retry count", "retries"),
    ("worker count", "workers"),
    ("batch size", "rows"),
    ("token budget", "tokens"),
    ("pool size", "connections"),
)
_MIX_ZH_NOUNS = (
    "数据库 缓存层 解析器 调度器 网关 队列 索引 报表 账单 支付 退款 搜索 上传 "
    "备份 副本 分片 集群 部署 流水线 配置 密钥 监控 告警 看板 爬虫 通知 优惠券 "
    "购物车 库存 仓库 物流 地图 主题 表单 校验器 编码器 代理 限流器 重试 熔断器 "
    "健康检查 定时任务 日历 工单 评论 头像 配额 租户 区域 快照 日志 压缩器 驱动 插件"
).split()
_MIX_ZH_METRICS = (
    ("超时时间", "毫秒"),
    ("内存上限", "MB"),
    ("连接池大小", "个"),
    ("重试次数", "次"),
    ("批量大小", "行"),
    ("并发数", "个"),
    ("预算", "tokens"),
)
_MIX_ZH_VERBS = ("迁移到", "合并进", "拆分成", "替换为", "接入")
_MIX_DAYS = ("周一", "周二", "周三", "周四", "周五")
_MIX_STYLES = (
    "small pull requests",
    "type hints everywhere",
    "tests before the fix",
    "one commit per change",
    "plain SQL over the ORM",
    "structured logs",
    "feature flags",
)
_MIX_ERRORS = (
    "KeyError",
    "TimeoutError",
    "ConnectionResetError",
    "AssertionError",
    "ValueError",
    "sqlite3.OperationalError",
    "PermissionError",
)
_MIX_TOOLS = ("Bash", "Read", "Edit", "Grep", "Write")


def _zipf_cum(n: int, s: float = 1.1) -> list[float]:
    """Cumulative Zipf weights (rank r has weight 1 / r**s), for ``rng.choices``."""
    out, total = [], 0.0
    for rank in range(1, n + 1):
        total += 1.0 / rank**s
        out.append(total)
    return out


class _Project:
    """The vocabulary of one session: topics, identifiers and files, Zipf-weighted."""

    def __init__(self, rng: random.Random) -> None:
        nouns = rng.sample(_MIX_NOUNS, 40)
        adjs = rng.sample(_MIX_ADJ, 8)
        self.topics = [f"{rng.choice(adjs)} {n}" if rng.random() < 0.4 else n for n in nouns]
        self.idents = [
            rng.choice(
                (
                    f"{a}_{b}",
                    f"{a}{b.capitalize()}",
                    f"{a.upper()}_{b.upper()}",
                    f"{a}-{b}",
                )
            )
            for a, b in zip(nouns, rng.sample(_MIX_NOUNS, 40), strict=True)
        ]
        pkg = rng.choice(_MIX_NOUNS)
        self.files = [f"src/{pkg}/{n}.py" for n in nouns[:20]] + [
            f"tests/test_{n}.py" for n in nouns[:10]
        ]
        self.zh = rng.sample(_MIX_ZH_NOUNS, 20)
        self.w_topics = _zipf_cum(len(self.topics))
        self.w_idents = _zipf_cum(len(self.idents))
        self.w_files = _zipf_cum(len(self.files))
        self.w_zh = _zipf_cum(len(self.zh))
        self.said: list[tuple[str, str, str, int]] = []  # (lang, topic, metric, value) stated

    def topic(self, rng: random.Random) -> str:
        return rng.choices(self.topics, cum_weights=self.w_topics)[0]

    def ident(self, rng: random.Random) -> str:
        return rng.choices(self.idents, cum_weights=self.w_idents)[0]

    def file(self, rng: random.Random) -> str:
        return rng.choices(self.files, cum_weights=self.w_files)[0]

    def zh_topic(self, rng: random.Random) -> str:
        return rng.choices(self.zh, cum_weights=self.w_zh)[0]


def _number(rng: random.Random) -> int:
    return rng.choice((rng.randint(1, 9), rng.randint(10, 500), rng.randint(500, 20_000)))


def _mix_user(rng: random.Random, p: _Project) -> str:
    roll = rng.random()
    if p.said and roll < 0.08:  # a correction of a number stated earlier
        lang, topic, metric, value = p.said[rng.randrange(max(0, len(p.said) - 8), len(p.said))]
        new = max(1, value + rng.choice((-1, 1)) * max(1, value // rng.randint(2, 5)))
        p.said.append((lang, topic, metric, new))
        if lang == "zh":
            return f"不对，{topic}的{metric}应该是 {new}，不是 {value}。"
        return rng.choice(
            (
                f"Actually, make the {topic} {metric} {new} instead of {value}.",
                f"Correction: the {metric} for {topic} is {new}, not {value}.",
                f"Scratch that, {topic} should use a {metric} of {new}.",
            )
        )
    if roll < 0.22:
        metric, unit = rng.choice(_MIX_METRICS)
        topic, n = p.topic(rng), _number(rng)
        p.said.append(("en", topic, metric, n))
        return rng.choice(
            (
                f"The {metric} of {topic} must stay under {n} {unit}.",
                f"Keep the {topic} {metric} at or below {n} {unit} in production.",
                f"For {topic}, never exceed a {metric} of {n} {unit}; "
                f"we hit an outage at {n * 2} {unit} last quarter.",
            )
        )
    if roll < 0.32:
        metric, unit = rng.choice(_MIX_ZH_METRICS)
        topic, n = p.zh_topic(rng), _number(rng)
        p.said.append(("zh", topic, metric, n))
        return rng.choice(
            (
                f"{topic}的{metric}不能超过 {n} {unit}。",
                f"{topic}的{metric}必须是 {n} {unit}，不要改。",
                f"记住：{topic}的{metric}上限是 {n} {unit}，超过就报警。",
            )
        )
    if roll < 0.40:
        return rng.choice(
            (
                f"我们决定把{p.zh_topic(rng)}{rng.choice(_MIX_ZH_VERBS)}{p.zh_topic(rng)}，"
                f"下{rng.choice(_MIX_DAYS)}上线。",
                f"把 {p.ident(rng)} 的 timeout 改成 {_number(rng)} ms，然后重跑 {p.file(rng)}。",
                f"{p.zh_topic(rng)}为什么又失败了？"
                f"看一下 {p.file(rng)} 第 {rng.randint(1, 400)} 行。",
            )
        )
    if roll < 0.50:
        return rng.choice(
            (
                f"We decided to move {p.topic(rng)} behind the {p.ident(rng)} flag "
                f"until week {rng.randint(1, 52)}.",
                f"Decision: {p.topic(rng)} stays on the {rng.choice(_MIX_ADJ)} cluster "
                f"and {p.topic(rng)} moves to {p.ident(rng)}.",
                f"Never deploy {p.topic(rng)} on Fridays.",
            )
        )
    if roll < 0.56:
        return f"I prefer {rng.choice(_MIX_STYLES)} for {p.topic(rng)}."
    if roll < 0.72:
        return rng.choice(
            (
                f"Please look at {p.file(rng)} and fix the failing test in {p.file(rng)}.",
                f"Rename {p.ident(rng)} to {p.ident(rng)} everywhere and update the docs.",
                f"Add a retry with backoff to {p.topic(rng)} and log every attempt.",
                f"Write a migration that adds an index on {p.ident(rng)}.",
            )
        )
    if roll < 0.84:
        return rng.choice(
            (
                f"Why does {p.ident(rng)} fail when {p.topic(rng)} has {_number(rng)} items?",
                f"Should we split {p.topic(rng)} into {rng.randint(2, 6)} services?",
                f"What did we agree about the {rng.choice(_MIX_METRICS)[0]} of {p.topic(rng)}?",
                f"Remind me what we decided about {p.topic(rng)}.",
            )
        )
    if roll < 0.92:
        err = rng.choice(_MIX_ERRORS)
        lines = "\n".join(
            f'  File "{p.file(rng)}", line {rng.randint(1, 900)}, in {p.ident(rng)}'
            for _ in range(rng.randint(2, 6))
        )
        return (
            f"I get this when running {p.topic(rng)}:\n"
            f"Traceback (most recent call last):\n{lines}\n{err}: {p.ident(rng)}\n"
            "Any idea?"
        )
    return rng.choice(("ok", "thanks, go on", "继续", "looks good", "好的，提交吧"))


def _mix_assistant(rng: random.Random, p: _Project) -> str:
    parts = [
        rng.choice(
            (
                f"I'll start with {p.file(rng)}.",
                f"Looking at {p.topic(rng)} first.",
                f"The failure comes from {p.ident(rng)}.",
                f"我先检查{p.zh_topic(rng)}的配置。",
                f"Done: updated {p.topic(rng)}; {_number(rng)} tests pass.",
            )
        )
    ]
    for _ in range(rng.randint(0, 3)):
        parts.append(
            rng.choice(
                (
                    f"I suggest a retry with {rng.randint(2, 6)} attempts in {p.ident(rng)}.",
                    _metric_now(rng, p),
                    f"I moved {p.ident(rng)} into {p.file(rng)} and kept the old name as an alias.",
                    f"我建议{p.zh_topic(rng)}增加 {rng.randint(2, 9)} 个副本。",
                    f"Next I will check whether {p.topic(rng)} still calls {p.ident(rng)}.",
                )
            )
        )
    return " ".join(parts)


def _metric_now(rng: random.Random, p: _Project) -> str:
    metric, unit = rng.choice(_MIX_METRICS)
    return f"The {metric} of {p.topic(rng)} is now {_number(rng)} {unit}."


def _mix_tool(rng: random.Random, p: _Project, tool: str) -> tuple[str, str]:
    f = p.file(rng)
    if tool == "Bash":
        call = rng.choice((f"pytest -q {f}", f"git diff --stat {f}", "make lint", f"wc -l {f}"))
        if call.startswith("pytest"):
            fails = rng.choice((0, 0, 0, 1, 2))
            body = "".join(
                f"FAILED {f}::test_{p.ident(rng)} - {rng.choice(_MIX_ERRORS)}\n"
                for _ in range(fails)
            )
            passed, secs, cents = _number(rng), rng.randint(1, 90), rng.randint(0, 99)
            result = f"{body}{passed} passed, {fails} failed in {secs}.{cents:02d}s"
        else:
            result = "\n".join(
                f"{rng.randint(1, 400):>5} {p.file(rng)}" for _ in range(rng.randint(1, 8))
            )
        return f"Bash({call})", result
    if tool == "Read":
        lines = [
            f"{i:>4}  {rng.choice(('def', 'class', 'return', 'if', '#'))} {p.ident(rng)}"
            f"({p.ident(rng)}={_number(rng)})"
            for i in range(1, rng.choice((3, 8, 20, 60)))
        ]
        return f"Read({f})", "\n".join(lines)
    if tool == "Grep":
        hits = [
            f"{p.file(rng)}:{rng.randint(1, 900)}: {p.ident(rng)} = {_number(rng)}"
            for _ in range(rng.randint(0, 10))
        ]
        return f"Grep({p.ident(rng)})", "\n".join(hits) or "No matches found"
    old, new = p.ident(rng), p.ident(rng)
    return (
        f"{tool}({f}: replace {old} with {new})",
        rng.choice(
            (
                f"The file {f} has been updated.",
                f'{{"ok": true, "path": "{f}", "bytes": {_number(rng)}}}',
                f"Error: {rng.choice(_MIX_ERRORS)}: {old} not found in {f}",
            )
        ),
    )


def session_mix(
    count: int, seed: int = 7, min_len: int = 100, max_len: int = 20_000
) -> Iterator[Event]:
    """``count`` events over sessions of log-uniform length in [min_len, max_len]."""
    rng = random.Random(seed)
    made = 0
    sid_n = 0
    clock = 1_767_600_000  # 2026-01-05T08:00:00Z, in seconds
    while made < count:
        sid_n += 1
        length = int(math.exp(rng.uniform(math.log(min_len), math.log(max_len))))
        sid = f"mix-{sid_n:05d}"
        srng = random.Random(f"{seed}:{sid}")
        project = _Project(srng)
        seq = turn = 0
        clock += srng.randint(600, 86_400)
        while seq < length and made < count:
            turn += 1
            clock += srng.randint(20, 900)
            kinds = ["user/message"]
            if srng.random() < 0.5:
                kinds.append("assistant/message")
            for _ in range(srng.choice((0, 1, 1, 2, 3, 4))):
                kinds += ["tool/call", "tool/result"]
            kinds.append("assistant/message")
            call_id = tool_result = ""
            tool = _MIX_TOOLS[0]
            for kind in kinds:
                if seq >= length or made >= count:
                    break
                seq += 1
                made += 1
                clock += srng.randint(1, 30)
                when = _iso(clock)
                if kind == "user/message":
                    yield Event(sid, seq, kind, _mix_user(srng, project), time=when, turn=turn)
                elif kind == "assistant/message":
                    text = _mix_assistant(srng, project)
                    yield Event(sid, seq, kind, text, time=when, turn=turn)
                elif kind == "tool/call":
                    tool = srng.choice(_MIX_TOOLS)
                    text, tool_result = _mix_tool(srng, project, tool)
                    call_id = f"call_{sid_n}_{seq}"
                    yield Event(
                        sid, seq, kind, text, time=when, turn=turn, tool_name=tool, call_id=call_id
                    )
                else:
                    yield Event(
                        sid,
                        seq,
                        kind,
                        tool_result,
                        time=when,
                        turn=turn,
                        tool_name=tool,
                        call_id=call_id,
                    )


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
