"""Cutting messages into prose sentences and clauses; pasted material set aside."""

from __future__ import annotations

import pytest

from convmem.memory.segment import (
    clauses,
    may_hold_program_output,
    printed_by_a_program,
    prose_lines,
    sentences,
)


def _clauses(text: str) -> list[str]:
    return [c.text for s in sentences(text) for c in clauses(s)]


@pytest.mark.parametrize(
    "pasted",
    [
        'Traceback (most recent call last):\n  File "app.py", line 12, in <module>\n    main()\n'
        "ValueError: bad value",
        "2024-03-01 10:22:01 INFO request done p95=340ms p99=1.2s rps=1000\n"
        "2024-03-01 10:22:02 ERROR timeout after 30s",
        "```\nDATABASE_URL=postgres://db/app\nWORKERS=4\n```",
        "$ npm test\nnpm ERR! code ELIFECYCLE",
        "| plan | price |\n|------|-------|\n| pro  | $35   |",
        "diff --git a/x.py b/x.py\n@@ -1,3 +1,3 @@\n-old\n+new",
        '{\n  "retries": 3,\n  "timeout": 30\n}',
        "    at handler (server.js:42:13)\n    at process (node:internal/x:1:1)",
        "> Could not resolve all files for configuration",
        "Discover         $2,880   19.49% APR   min $86",
        # lines that begin as a log's do, three or more in a row, whatever each says
        "#14 [builder 6/7] RUN npm run build\n#14 12.81 Possible solutions:\n"
        "#14 12.81 - Make sure optional dependencies are installed: npm i sharp",
        "[INFO] budget is 500\n[INFO] use the cache for sessions\n[WARN] keep the pool at 10",
        "2024-06-01 12:00:01 budget is 500\n2024-06-01 12:00:02 use the cache\n"
        "2024-06-01 12:00:03 keep the pool at 10",
        # a date and a level with no time between, a trace begun mid-line
        "2026-01-01 ERROR worker[0] Traceback (most recent call last):\n"
        '  File "app.py", line 3, in main\nValueError: bad value',
        "[2026-01-02] WARN retrying job 17",
        "DETAIL:  Key (id)=(1042) already exists.",
        # a chat log copied in
        "[10:01] priya.s: the sdk needs node 20\n[10:03] @kevin: ALWAYS set fail-fast: true",
        # MySQL's slow log, and statements that name lower-case tables
        "# Query_time: 12.3  Lock_time: 0.0 Rows_sent: 20  Rows_examined: 4821933\n"
        "SET timestamp=1715580115;\n"
        "SELECT oi.* FROM order_item oi JOIN orders o ON o.id = oi.order_id WHERE o.user_id = 1;",
        # a bank export in CSV
        "date,desc,amount\n2025-05-02,TRADER JOES,-84.12\n2025-05-03,SHELL,-52.00",
        # a program's columns (kubectl describe), a database's notices and exception
        "Name:             worker-batch-7d9f8c6b5-xk2lp\nNamespace:        staging\n"
        "Priority:         0\n"
        "Service Account:  worker\nNode:             ip-10-42-13-77/10.42.13.77\n"
        "Containers:\n  worker:\n    Limits:\n      memory:  256Mi\n"
        "Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
        "psycopg2.errors.DeadlockDetected: deadlock detected\n"
        "DETAIL:  Process 31877 waits for ShareLock on transaction 99120431.\n"
        "HINT:  See server log for query details.",
    ],
)
def test_pasted_material_is_not_prose(pasted: str) -> None:
    text = f"here is what I see:\n{pasted}\nany idea?"
    assert [s.text for s in sentences(text)] == ["here is what I see:", "any idea?"]


@pytest.mark.parametrize(
    "lines",
    [
        ["[ ] book a hotel under $200 a night", "[ ] rent a car for 3 days", "[x] flights booked"],
        ["#1 keep it under $1,500", "#2 no more than 2 hours of driving", "#3 pet friendly"],
        ["[张三] 预算最多5000", "[李四] 不要住青旅", "[王五] 6月5号出发"],
        [
            "2024-10-01 09:00 fly to Xi'an",
            "2024-10-01 14:00 hotel, under $120 a night",
            "2024-10-02 10:00 terracotta army",
        ],
        # two spaces after a full stop, and a list's heading, are the person's typing
        ["Done.  Now the next one.", "I moved it.  It works.", "Ok.  Ship it."],
        ["Steps:", "book the flights", "then the hotel"],
        ["Budget:  $500 max", "Dates:  june 3-10", "People:  4 adults"],
    ],
)
def test_lists_people_type_that_begin_alike_stay_prose(lines: list[str]) -> None:
    assert len(prose_lines("\n".join(lines))) == 3


def test_an_instruction_that_begins_like_sql_stays_prose() -> None:
    said = [
        "10:30 standup: we decided to ship friday",
        "[8:00] breakfast: no eggs, I'm allergic",
        "SET the timeout to 30 seconds please",
        "WITH the new cache, p95 must stay under 200ms",
    ]
    assert [s.text for s in sentences("\n".join(said))] == said


def test_config_like_lines_alone_stay_prose() -> None:
    assert [s.text for s in prose_lines("Budget: 3000\nthanks")] == ["Budget: 3000", "thanks"]


@pytest.mark.parametrize(
    ("lines", "prose"),
    [
        (["Budget: 3000", "Team: 4", "thanks"], ["Budget: 3000", "Team: 4", "thanks"]),
        (["Budget: 3000", "Team: 4", "Region: eu", "thanks"], ["thanks"]),  # a run of three
        (["ok", "Budget: 3000", "```", "x = 1", "```", "thanks"], ["ok", "thanks"]),  # beside
        (["a: 1", "thanks", "b: 2", "c: 3", "ok"], ["a: 1", "thanks", "b: 2", "c: 3", "ok"]),
        ([f"k{i}: {i}" for i in range(3000)] + ["so which one?"], ["so which one?"]),
    ],
)
def test_config_like_lines_are_pasted_in_a_run_of_three_or_beside_pasted_lines(
    lines: list[str], prose: list[str]
) -> None:
    assert [s.text for s in prose_lines("\n".join(lines))] == prose


def test_offsets_point_into_the_message() -> None:
    text = "ok so. Keep p95 under 200 ms, and the timeout is 30 s.\n- use pnpm\n好的，预算3000元。"
    for s in sentences(text):
        assert text[s.start : s.end] == s.text
        for c in clauses(s):
            assert text[c.start : c.end] == c.text


def test_sentences_keep_decimals_versions_and_abbreviations() -> None:
    assert [s.text for s in sentences("We're on Python 3.12 now, e.g. for the API. Thanks")] == [
        "We're on Python 3.12 now, e.g. for the API.",
        "Thanks",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "one-time purchases are ok. we're on WooCommerce 8.9",
            ["one-time purchases are ok.", "we're on WooCommerce 8.9"],
        ),
        ("is that bad?? he's a 60 lb golden", ["is that bad??", "he's a 60 lb golden"]),
        ("hmm... maybe not", ["hmm...", "maybe not"]),
        (
            "fine make it 35% Should I open a SEP IRA?",
            ["fine make it 35%", "Should I open a SEP IRA?"],
        ),
        # an abbreviation or an initial does not end the sentence
        ("we compared redis vs. memcached", ["we compared redis vs. memcached"]),
        ("it stays at 3 p.m. tomorrow", ["it stays at 3 p.m. tomorrow"]),
        ("ask Sam K. about it", ["ask Sam K. about it"]),
        # a unit written short after its number ends it; "min." before a number does not
        (
            "finish in under 10 min. ruff line-length is 100",
            ["finish in under 10 min.", "ruff line-length is 100"],
        ),
        ("we need min. 5 people", ["we need min. 5 people"]),
        # what goes on with the value after its unit stays with it
        ("deploy window is 2 hrs. max", ["deploy window is 2 hrs. max"]),
        ("cooldown 5 min. per user, not global", ["cooldown 5 min. per user, not global"]),
        (
            "friday march 14 to sunday the 16th. total budget is $1,200",
            ["friday march 14 to sunday the 16th.", "total budget is $1,200"],
        ),
    ],
)
def test_chat_text_goes_on_in_lower_case(text: str, expected: list[str]) -> None:
    assert [s.text for s in sentences(text)] == expected


def test_units_end_sentences() -> None:
    assert _clauses("the timeout is 30 s. Can you check?") == [
        "the timeout is 30 s.",
        "Can you check?",
    ]


def test_clause_level_pieces() -> None:
    assert _clauses("Keep p95 under 200 ms at 1k rps, and the timeout is 30 s.") == [
        "Keep p95 under 200 ms at 1k rps",
        "the timeout is 30 s.",
    ]
    assert _clauses("$92k base, 10% bonus target, 3 weeks PTO") == [
        "$92k base",
        "10% bonus target",
        "3 weeks PTO",
    ]
    # a corrected value stays with what it corrects
    assert _clauses("Actually, make it 2000 tokens, not 3000.") == [
        "make it 2000 tokens, not 3000."
    ]
    # a conditional rule is one clause
    assert _clauses("if the tests fail, don't deploy") == ["if the tests fail, don't deploy"]
    # two requirements joined by "and", the second a bound and its value
    assert _clauses("it needs to be pet friendly and under $150 a night") == [
        "it needs to be pet friendly",
        "under $150 a night",
    ]
    assert _clauses("must be gluten free and no more than 20 bucks per person") == [
        "must be gluten free",
        "no more than 20 bucks per person",
    ]
    assert _clauses("looking for a hotel near the beach for 3 nights, must have parking") == [
        "looking for a hotel near the beach for 3 nights",
        "must have parking",
    ]
    assert _clauses("a 3 bedroom near the school, must have a yard") == [
        "a 3 bedroom near the school, must have a yard"
    ]
    assert _clauses("if it's a weekday and under $100 a night, just book it") == [
        "if it's a weekday and under $100 a night, just book it"
    ]
    assert _clauses("anything between 50 and under 80 is fine") == [
        "anything between 50 and under 80 is fine"
    ]


def test_questions_and_reasons_split_off() -> None:
    assert _clauses("I already booked the 8:30 flight, is that too late?") == [
        "I already booked the 8:30 flight",
        "is that too late?",
    ]
    assert _clauses("let's do loguru, the team already knows it") == [
        "let's do loguru",
        "the team already knows it",
    ]
    # a request after what the person tells
    assert _clauses("we move into the new flat on the 3rd, tips for packing a kitchen?") == [
        "we move into the new flat on the 3rd",
        "tips for packing a kitchen?",
    ]
    assert _clauses("the demo is on friday at 2pm, help me draft the agenda") == [
        "the demo is on friday at 2pm",
        "help me draft the agenda",
    ]


def test_a_result_after_so_is_a_clause_of_its_own() -> None:
    assert _clauses("she's celiac so the place has to handle gluten free properly") == [
        "she's celiac",
        "the place has to handle gluten free properly",
    ]
    assert _clauses("he hates clutter so nothing that just sits on a shelf") == [
        "he hates clutter",
        "nothing that just sits on a shelf",
    ]
    # a purpose stays with what it is for
    assert _clauses("I'd prefer somewhere quieter so my mother can hear") == [
        "I'd prefer somewhere quieter so my mother can hear"
    ]
    assert _clauses("it's so the cat can get out") == ["it's so the cat can get out"]
    # without a comma in Chinese too, but not 之所以 or 所以说
    assert _clauses("我有一只猫所以房东得允许养宠物") == ["我有一只猫", "所以房东得允许养宠物"]
    assert _clauses("我想去但是没时间") == ["我想去", "但是没时间"]
    assert _clauses("之所以选它是因为便宜") == ["之所以选它是因为便宜"]


def test_a_slip_owned_up_to_after_a_clause_makes_it_a_correction() -> None:
    (clause,) = [c for s in sentences("家长会周五晚上七点，刚才说错了") for c in clauses(s)]
    assert clause.text == "家长会周五晚上七点" and clause.corrects
    (clause,) = [c for s in sentences("我记错了，服务器上装的是mysql 8.0") for c in clauses(s)]
    assert clause.text == "服务器上装的是mysql 8.0" and clause.corrects


def test_openers_are_trimmed_and_kept() -> None:
    (clause,) = [
        c for s in sentences("Actually, use Memcached rather than Redis.") for c in clauses(s)
    ]
    assert clause.text == "use Memcached rather than Redis." and clause.corrects
    (clause,) = [c for s in sentences("算了，还是用 Redis") for c in clauses(s)]
    assert clause.text == "还是用 Redis" and clause.corrects


def test_chinese_run_ons_and_commas() -> None:
    assert _clauses("预算3000元，人均不超过100，要有停车位。") == [
        "预算3000元",
        "人均不超过100",
        "要有停车位。",
    ]
    assert _clauses("第一次去新疆 好激动") == ["第一次去新疆", "好激动"]
    # a run that only says the choice before it is open stays with it
    assert _clauses("去成都还是重庆 没定 你帮我看看") == ["去成都还是重庆 没定", "你帮我看看"]
    assert _clauses("先住酒店 还没想好要不要租房") == ["先住酒店", "还没想好要不要租房"]
    # … and said before the options, it stays with them
    assert _clauses("还有个事没想好 年终奖是提前还房贷还是买理财") == [
        "还有个事没想好 年终奖是提前还房贷还是买理财"
    ]
    assert _clauses("我还没想好 你先帮我查下天气") == ["我还没想好", "你先帮我查下天气"]
    # a condition leads into what follows; "不是…而是…" is one correction
    assert _clauses("在1万QPS下，p95必须低于200毫秒。") == ["在1万QPS下，p95必须低于200毫秒。"]
    assert _clauses("不是 loguru，而是 structlog") == ["不是 loguru，而是 structlog"]
    # a thousands separator is not a comma
    assert _clauses("UCL学费每年£38,000") == ["UCL学费每年£38,000"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a space between Chinese and a number or a Latin word ends what is said in full
        ("那就西安吧 10月2号出发 5号回", ["那就西安吧", "10月2号出发", "5号回"]),
        # a version said as what a thing uses ends what is said; a count before a list
        # of what it counts does not
        (
            "python 只能用 3.8 客户服务器上的系统 python 不让动",
            ["python 只能用 3.8", "客户服务器上的系统 python 不让动"],
        ),
        ("流水线就三步 lint test build", ["流水线就三步 lint test build"]),
        (
            "每天凌晨两点把订单表同步到clickhouse 一次批量5000条",
            ["每天凌晨两点把订单表同步到clickhouse", "一次批量5000条"],
        ),
        (
            "学习率2e-4 跑3个epoch 帮我写个train.py 用transformers+peft",
            ["学习率2e-4", "跑3个epoch", "帮我写个train.py", "用transformers+peft"],
        ),
        ("显存24G，batch_size 16 max_length 512", ["显存24G", "batch_size 16", "max_length 512"]),
        (
            "面积不能低于四十平 A那套明天下午三点去看",
            ["面积不能低于四十平", "A那套明天下午三点去看"],
        ),
        # … but not inside a value, nor where one side leads into or goes on from the other
        ("ttl 30 分钟就行", ["ttl 30 分钟就行"]),
        ("预算 3000 左右", ["预算 3000 左右"]),
        ("MinIO 和 Ceph 我们还没定", ["MinIO 和 Ceph 我们还没定"]),
        ("还在纠结租 A10 还是 L4", ["还在纠结租 A10 还是 L4"]),
        ("那先租两台 L4 吧", ["那先租两台 L4 吧"]),
        ("两个 yml 我对比过是一样的", ["两个 yml 我对比过是一样的"]),
        ("9000 被占了", ["9000 被占了"]),
        ("0.78 有点低", ["0.78 有点低"]),
        ("机器是 4 核 8G 的", ["机器是 4 核 8G 的"]),
        ("我们是3个实例跑在 k8s 上", ["我们是3个实例跑在 k8s 上"]),
        ("上周刚从 3.9 升上来", ["上周刚从 3.9 升上来"]),
        ("2024-06-01 起开始限流", ["2024-06-01 起开始限流"]),
        ("temperature 改成0 试试", ["temperature 改成0 试试"]),
        ("用 python 3.11 的 slim", ["用 python 3.11 的 slim"]),
        ("接口这边 p99 要压到500毫秒以下", ["接口这边 p99 要压到500毫秒以下"]),
        ("算了 80那个不用管了", ["80那个不用管了"]),
        # what follows says something of the value or the thing before it, or no more
        ("端口 9000 已经被占了", ["端口 9000 已经被占了"]),
        ("我觉得 3000 有点贵", ["我觉得 3000 有点贵"]),
        ("我们决定用redis 做缓存", ["我们决定用redis 做缓存"]),
        ("服务部署在AWS 上面", ["服务部署在AWS 上面"]),
        ("两份 PDF 我都看了", ["两份 PDF 我都看了"]),
        # a correction's cue after a value starts what puts it right
        ("利率是3.85 不对 是3.95", ["利率是3.85", "是3.95"]),
    ],
)
def test_a_space_beside_a_number_or_latin_word_in_chinese(text: str, expected: list[str]) -> None:
    assert _clauses(text) == expected


def test_list_items_are_sentences() -> None:
    assert _clauses("- use pnpm not npm\n- all new endpoints need auth\n1. run the tests") == [
        "use pnpm not npm",
        "all new endpoints need auth",
        "run the tests",
    ]


def test_any_text_is_safe() -> None:
    for text in ("", "\n\n\n", "。" * 500, "a, " * 2000, "```" * 50, "\ud800 hi. there"):
        for s in sentences(text):
            clauses(s)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a decimal point at the start is no list mark; "1.第一条" still is
        ("0.5 it is then", ["0.5 it is then"]),
        # two instructions, a rule after "so", a preference after "ideally", and a clause
        # whose contraction lost its apostrophe are clauses of their own
        (
            "ok set pool_size to 10, leave max_overflow alone.",
            ["set pool_size to 10", "leave max_overflow alone."],
        ),
        (
            "we're pinned to 2.0.25 so dont use anything newer",
            ["we're pinned to 2.0.25", "dont use anything newer"],
        ),
        (
            "under $1,600 a month, ideally walkable to the blue line",
            ["under $1,600 a month", "ideally walkable to the blue line"],
        ),
        (
            "switch to jimp then, i dont want to fight native deps",
            ["switch to jimp then", "i dont want to fight native deps"],
        ),
        # a choice taken, or settled as "X then", is a clause before the reason beside it
        (
            "going with the bigger company after all, they quoted $1,150 this time",
            ["going with the bigger company after all", "they quoted $1,150 this time"],
        ),
        (
            "logan square then, wicker park is pricier on weekends",
            ["logan square then", "wicker park is pricier on weekends"],
        ),
        # … but not an instruction and what limits it
        (
            "store dates as strings, for anything that's a calendar day",
            ["store dates as strings, for anything that's a calendar day"],
        ),
        ("1.第一条 不要用 mock", ["第一条", "不要用 mock"]),
        # "between A and B" stays whole; two clauses joined by "and" still split
        (
            "torn between the back room at the bakery and my mom's house",
            ["torn between the back room at the bakery and my mom's house"],
        ),
        (
            "the release is due friday and the team is out on monday",
            ["the release is due friday", "the team is out on monday"],
        ),
        # the options and "not decided yet" are one piece
        ("钢琴或者舞蹈，还没想好。", ["钢琴或者舞蹈，还没想好。"]),
        ("大理还是版纳 我跟我老公还没商量好", ["大理还是版纳 我跟我老公还没商量好"]),
        ("钢琴或者舞蹈，都挺贵的", ["钢琴或者舞蹈", "都挺贵的"]),
        # "yet" without a comma is the adverb, not "but"
        (
            "we havent decided yet between nginx and traefik",
            ["we havent decided yet between nginx and traefik"],
        ),
        # "不是X 是Y" is one correction, as "不是X，而是Y" is
        ("不是周三 是周四晚上", ["不是周三 是周四晚上"]),
        # (the slip owned up to after it is the correction's remark, not a clause)
        ("婚期是5月20号 不是18号 我记错了", ["婚期是5月20号 不是18号"]),
        # a lower-case "ok" opens what is said next, unless it is said of something
        (
            "my fiancé REALLY wants the band ok we're going with the band",
            ["my fiancé REALLY wants the band", "we're going with the band"],
        ),
        ("is it ok we use pnpm", ["is it ok we use pnpm"]),
        # a Chinese full stop ends the sentence before a lower-case word too
        ("那就用 pgvector。pg 版本是16", ["那就用 pgvector。", "pg 版本是16"]),
        # a request run on in lower case starts its own clause
        (
            "the demo got moved, it's friday 2pm now can you redo the plan",
            ["the demo got moved", "it's friday 2pm now", "can you redo the plan"],
        ),
        ("i think you can you know", ["i think you can you know"]),
    ],
)
def test_a_choice_stays_with_its_options(text: str, expected: list[str]) -> None:
    assert _clauses(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "a while" is a span of time, not "while" that starts a clause
        (
            "the tests are flaky because the db takes a while to come up",
            ["the tests are flaky", "the db takes a while to come up"],
        ),
        # a trace named in prose, and a prompt's label, are no paste
        (
            "I keep getting Traceback (most recent call last) errors, so the timeout must stay"
            " at 30 seconds",
            [
                "I keep getting Traceback (most recent call last) errors",
                "the timeout must stay at 30 seconds",
            ],
        ),
        ("HINT: the budget is $500 max", ["HINT: the budget is $500 max"]),
        # a verdict typed after a space stays with the value it is on
        (
            "DBA 刚在群里说 50 太多了 每个服务最多给 20",
            ["DBA 刚在群里说 50 太多了", "每个服务最多给 20"],
        ),
        # a value and the one it replaces, with or without a space after 不是; what was
        # said before and the right value
        ("更正一下 灰度是 5% 不是 10%", ["更正一下", "灰度是 5% 不是 10%"]),
        ("sorry i said 6k down earlier, it's 7,000", ["i said 6k down earlier, it's 7,000"]),
        # a clause that says what "anything" is goes with it
        (
            "I'd prefer to avoid anything he has to take more than twice a day",
            ["I'd prefer to avoid anything he has to take more than twice a day"],
        ),
    ],
)
def test_words_that_only_look_like_a_new_clause(text: str, expected: list[str]) -> None:
    assert _clauses(text) == expected


def test_a_list_typed_with_commas_is_prose() -> None:
    """Three lines with the same count of commas are a CSV only when they hold bare
    numbers or dates, or start with a header of bare names."""
    text = "预算3000,最多5天,必须有早餐\n不要红眼航班,不要转机,靠窗\n酒店要近地铁,不要民宿,含早"
    assert len(sentences(text)) == 3


_MACHINE_SHAPES = [
    "```",
    "  ~~~python",
    "2026-01-01 10:00:01 ERROR worker[3] redis timeout",
    "[12:00:01] starting",
    "Traceback (most recent call last):",
    '  File "app.py", line 3, in <module>',
    "    at com.example.Main.run(Main.java:12)",
    "WARNING: disk almost full",
    "redis.exceptions.TimeoutError: Timeout reading from socket",
    "       ^^^^",
]


@pytest.mark.parametrize("line", _MACHINE_SHAPES)
def test_a_line_a_program_printed_is_seen_anywhere_in_a_message(line: str) -> None:
    # the block's quote skips splitting a message into lines when the one search finds
    # nothing: it must find every line the per-line test would call a program's
    assert printed_by_a_program([line])
    said = f"we moved the job to the new box.\n\n{line}\nthe timeout stays 200ms."
    assert may_hold_program_output(said)
    assert may_hold_program_output(line)


@pytest.mark.parametrize(
    "said",
    [
        "we moved the job to the new box.\nthe timeout stays 200ms, retries at most 2.",
        "Budget: 3000\n| option 1 | rent $2000 |\n- keep the errors page as is",
        "预算三千左右\n最多五天\n必须有早餐",
    ],
)
def test_prose_and_the_persons_own_lists_hold_no_program_output(said: str) -> None:
    assert not may_hold_program_output(said)
    assert not any(printed_by_a_program([line]) for line in said.splitlines())
