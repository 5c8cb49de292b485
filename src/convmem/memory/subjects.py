"""What a clause is about, and what it says about earlier clauses.

Corrections, disputes and retractions compare two statements *about the same
thing*. This module reads, from one clause:

* its **subject key**: the head of the noun phrase the value belongs to ("the p95
  budget is 200 ms" → ``p95 budget``; "use Redis for the cache" → ``cache``;
  "预算3000元" → ``预算``), or, for a named choice with no explicit subject, the
  kind of thing the name is ("Memcached" → ``cache``, "MinIO" → ``object storage``);
* the **value** it states (the numbers, or the named choice);
* the **old value it rejects**, when it names one ("rather than Redis", "not 8:30",
  "不是 loguru", "把 500 改成 300");
* whether it is a **correction** ("actually", "make it", "scratch that", "改成",
  "改用", "算了"), a **retraction** ("forget the parking thing", "预算那个不用管了"),
  or neither.

The subject key is stored as the item's ``topic`` and indexed, so finding the
earlier items a clause could correct is a bounded lookup, whatever the session's
length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from convmem.core.cue_match import CueText
from convmem.core.numbers import Value, find_numbers
from convmem.core.units import IE_NOUNS
from convmem.memory.segment import MISSPOKE, SLIPPED

_I = re.IGNORECASE
_CJK = re.compile(r"[\u3400-\u9fff]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")

#: Interchangeable things a person chooses between: name -> what it is.
ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "database": (
        "postgres", "postgresql", "pg", "mysql", "mariadb", "sqlite", "mongodb", "mongo",
        "dynamodb", "cassandra", "cockroachdb", "tidb", "oracle", "sql server", "supabase",
        "clickhouse", "duckdb",
    ),
    "cache": ("redis", "memcached", "valkey", "keydb", "dragonfly", "varnish"),
    "queue": ("kafka", "rabbitmq", "sqs", "nats", "pulsar", "activemq", "celery", "bullmq"),
    "object storage": ("s3", "minio", "gcs", "r2", "oss", "cos", "azure blob", "backblaze", "b2"),
    "logging": ("loguru", "structlog", "logging", "winston", "pino", "log4j", "logback", "zap",
                "logrus", "bunyan", "slog"),
    "package manager": ("npm", "pnpm", "yarn", "bun", "pip", "poetry", "uv", "pipenv", "conda"),
    "test framework": ("pytest", "unittest", "jest", "vitest", "mocha", "jasmine", "nose",
                       "junit", "testng", "rspec", "playwright", "cypress", "selenium"),
    "web framework": ("django", "flask", "fastapi", "express", "nestjs", "koa", "rails",
                      "spring", "gin", "echo", "fiber", "laravel", "sanic", "starlette"),
    "frontend framework": ("react", "vue", "angular", "svelte", "solid", "preact", "nextjs",
                           "next.js", "nuxt", "remix", "astro"),
    "orm": ("sqlalchemy", "prisma", "typeorm", "sequelize", "drizzle", "gorm", "peewee",
            "tortoise", "django orm", "hibernate", "mybatis"),
    "ci": ("github actions", "gitlab ci", "jenkins", "circleci", "travis", "buildkite",
           "drone"),
    "cloud": ("aws", "gcp", "azure", "aliyun", "alibaba cloud", "tencent cloud", "digitalocean",
              "hetzner", "fly.io", "vercel", "netlify", "heroku", "cloudflare", "render"),
    "orchestration": (
        "kubernetes", "k8s", "nomad", "ecs", "docker swarm", "swarm", "docker compose",
    ),
    "search engine": ("elasticsearch", "opensearch", "meilisearch", "typesense", "solr", "algolia"),
    "indentation": ("tabs", "spaces"),
    "formatter": ("black", "ruff", "prettier", "autopep8", "yapf", "gofmt", "rustfmt", "biome"),
    "type checker": ("mypy", "pyright", "pytype", "pyre"),
    "http client": ("requests", "httpx", "aiohttp", "axios", "fetch", "urllib3", "got"),
    "language": ("python", "golang", "rust", "java", "typescript", "javascript", "kotlin",
                 "ruby", "php", "c#", "swift", "scala", "elixir"),
    "monitoring": ("prometheus", "grafana", "datadog", "new relic", "sentry", "signoz"),
    "auth": ("jwt", "oauth", "session cookies", "sessions", "auth0", "keycloak", "cognito"),
    "date format": ("iso 8601", "unix timestamps", "epoch"),
}  # fmt: skip
_CATEGORY = {name: cat for cat, names in ALTERNATIVES.items() for name in names}
_NAME = re.compile(
    r"(?<![.\-]|[^\W\u3400-\u9fff])("
    + "|".join(re.escape(n) for n in sorted(_CATEGORY, key=len, reverse=True))
    + r")(?![\-]|[^\W\u3400-\u9fff])",
    _I,
)

#: Words that name no subject (read by links too, for what a withdrawal names).
STOP = frozenset(
    """a an the my our your their his her its this that these those it we i you they he she me us
    them is are was were be been being am will would shall should must can could may might do
    does did have has had to of in on at for with by from as into about over under below above
    and or but so if then than also just only still even very really quite too some any all
    each every no not please let's lets let keep make set use put go get take need needs want
    wants like prefer always never don't do not dont stay stays remain remains at most least
    more less max min maximum minimum up down around within between per be actually ok okay so
    new current default whole total overall main same other another own one thing things stuff
    it's that's there here now today tomorrow instead rather sure right well yes yeah hmm
    change changed switch switched move moved bump raise lower set cap limit
    currently presently roughly approximately usually typically normally basically probably
    already""".split()
)
_SUBJECT_BEFORE_VERB = re.compile(
    r"^(?:(?:the|my|our|your|their|his|her|its|this|that|a|an)\s+)?"
    # (a subject runs on through no "so", "but", "because": "everyone chipped in so the
    # cabin budget went up" is not about everyone)
    r"(?P<np>[\w./+#-]+(?:\s+(?!(?:so|but|because)\b)[\w./+#-]+){0,6}?)\s+"
    r"(?:is|are|was|were|will be|should be|must be|needs to be|has to be|have to be|must stay"
    r"|should stay|stays|remains|must|should|needs to|need to|has to|have to|can't|cannot"
    r"|mustn't|shouldn't|may not|can|goes|sits|lives|runs|costs|takes|=|:"
    # what holds a count ("prod has 4 nodes")
    r"|(?:has|have|had)(?=\s+(?:about\s+|around\s+|only\s+|like\s+|over\s+)?\d)"
    # a value changed ("standup moved to 10", "launch got pushed back to March 10")
    # (intransitive: in "my dietitian bumped me to 2,000" the dietitian is not what changed)
    r"|(?:got |was |were |has been |have been )?(?:moved|pushed|shifted|bumped|changed|dropped"
    r"|raised|lowered|cut|extended|stretched|increased|decreased|upped|rescheduled|went up"
    r"|went down)"
    r"(?=\s+(?:back\s+|out\s+|up\s+|down\s+)?(?:to|till|until)\b))\b",
    _I,
)
#: A setting written as code: "MAX_WORKERS=4", "retries: 5", "set TIMEOUT = 30".
_SUBJECT_ASSIGNED = re.compile(
    r"^(?:(?:set|export|actually|so|ok)\s+)*(?P<np>[A-Za-z_][\w.-]*)"
    r"(?:\s*=\s*[\w$\"'.-]|:\s*[\d$\"'])"  # "note: the timeout…" is no setting of note
)
_SUBJECT_AFTER_VERB = re.compile(
    r"\b(?:keep|set|make|cap|limit|put|bump|raise|lower|change|switch|move|increase|decrease"
    # "budget" is a verb at the start or after a subject ("let's budget 3 hours"), a
    # noun after anything else ("the cabin budget went up")
    r"|reduce|drop|cut|trim|push|pin|lock|fix|hold|leave"
    # done by someone else: "landlord pushed move in back to may 8"
    r"|pushed|moved|bumped|shifted|raised|lowered|changed|switched|dropped"
    r"|(?:(?<![\w'] )|(?<=let's )|(?<=lets )|(?<=we )|(?<=i )|(?<=to ))budget"
    # (not when a change of it follows: "budget bumped to 28k" is about the budget)
    r"(?!\s+(?:got\s+|was\s+|has been\s+)?(?:bumped|moved|pushed|raised|lowered|changed|dropped"
    r"|stretched|increased|decreased|upped|cut|went|is|was)\b))\s+"
    r"(?:(?:the|my|our|your|their|its|this|that)\s+)?"
    # (intransitive, the value next: "the closing got pushed to oct 14" is not about oct)
    r"(?!(?:to|at|until|till|til|back|up|down|out)\b)"
    r"(?P<np>[\w./+#-]+(?:\s+[\w./+#-]+){0,3}?)\s+(?:(?:back|up|down|out)\s+)?"
    r"(?:to|at|under|below|above|over|around|within|from|as|=|\d)",
    _I,
)
_FOR_PURPOSE = re.compile(
    r"\b(?:for|as)\s+(?:(?:the|our|my|all|every|any)\s+)?(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2})",
    _I,
)
#: Chinese verbs and copulas after the subject of a statement, longest first.
_ZH_VERBS = re.compile(
    r"必须|务必|一定要|不能|不要|不得|不准|不超过|不低于|至少|最多|控制在|改成|改为|换成|设成|设为|设置为|定在|用的是"
    r"|需要|上限|下限|不是|就是|是|为|要|得|用|(?<![现正实存])在"
    r"|调到|调成|改到|挪到|提到|降到|涨到|放宽到|收紧到|提高到|降低到|推迟到|提前到|延到|加到|减到"
)
#: Who says or thinks what follows, in English ("my manager said", "according to ops").
_EN_SPEAKER = re.compile(
    r"^(?:[\w'-]+\s+){0,4}?(?:thinks?|says?|said|claims?|insists?|told (?:me|us))\s+(?:that\s+)?"
    r"|^according to (?:[\w'-]+\s+){0,3}?(?=the\b|our\b|my\b)",
    _I,
)
#: Who says or thinks what follows ("我老婆觉得", "运维说"): the claim's subject comes after.
_ZH_SPEAKER = re.compile(
    r"^(?:[A-Za-z][A-Za-z-]{0,15}\s*|[^，,。；;]{0,8}?)(?:觉得|认为|表示|说|通知|同意|告诉我)(?!错|好|定|了)"
    # where it is written: "成绩单上是7.0", "合同上写的是3月"
    r"|^[^，,。；;\s]{0,5}?[单表书网同档面统群][上里](?:写的|写着|显示的?)?(?=是)"
    r"|^[^，,。；;\s]{1,6}?[上里](?:写的|写着|显示的?)(?=是)"
)
_ZH_SUBJECT_STRIP = re.compile(r"^(?:把|将|给|让|就|都|还|也|再|先|然后|另外|还有)|(?:的)$")

#: "rather than X", "instead of X", "not X"; in English an old value must look like one
#: (see ``_replaced``).
_REJECTED_EN = (
    re.compile(
        r"\b(?:(?P<strong>rather than|instead of|in place of|replacing|replace)|not|no longer"
        r"|and not|but not|over)\s+(?:the\s+|a\s+|an\s+)?"
        r"(?P<old>[\w.:/$%+-]+(?:,\d{3}(?!\d))*(?:\s+[\w.:%]+)?)",
        _I,
    ),
    re.compile(
        r"\b(?:from|was)\s+(?P<old>[\w.:$%+-]+(?:,\d{3}(?!\d))*(?:\s?[\w%]+)?)\s+(?:to|now)\b", _I
    ),
    # "sorry i said 6k down earlier, it's 7,000": the value said before, named
    re.compile(
        r"\bi (?:said|wrote|typed|put)\s+(?P<old>[\w.:$%+-]+(?:,\d{3}(?!\d))*)(?:\s+[a-z]+)?"
        r"\s+(?:earlier|before|above)\b",
        _I,
    ),
)
#: "不去日本了 改去韩国": a plan dropped, then the one instead (put right, not withdrawn);
#: what was dropped keeps its verb ("去日本" is no "我老婆是日本人").
_DROPPED_THEN = re.compile(
    r"不(?P<old>(?:去|用|要|买|选|住|坐|订|考虑|报|学)\s*[^\s，,。！!？?]{1,10}?)\s*了[\s，,]*"
    r"(?:改|换)(?:成|去|用|为|买|住|坐|订|报|学)"
)
#: "不是X而是", "把X改成", "从X改成", "不用X".
#: Why a value goes, said right after it: 太多了, 太晚了, 不够.
TOO_MUCH_ZH = r"(?:太[多少长久贵晚早大小快慢远近高低]了?|不够|不合适|来不及)"
_REJECTED_ZH = (
    re.compile(r"不是\s*(?P<old>[^，,。而是]{1,20}?)\s*[，,]?\s*(?:而是|是|改|换)"),
    # "婚期是5月20号 不是18号": the value, then the one it replaces
    # (a remark on the slip may follow: "lr 应该是2e-5 不是3e-5 我看错配置了", "… 不是 28800
    # 之前那个是测试库的")
    re.compile(
        r"(?<=\S)[\s，,]+不是\s*(?P<old>[^\s，,。!！]{1,12}?)\s*"
        r"(?:[。!！]|\s+[^，,。]*错[^，,。]*|\s+(?:之前|刚才|原来|上面)[^，,。]*)?$"
    ),
    re.compile(
        r"(?:把|将|从)\s*(?P<old>[^，,。]{1,20}?)\s*(?:改成|改为|换成|换为|改到|调到|调成|降到|提到|升到)"
    ),
    re.compile(
        r"(?:而不是|不用|不要用|别用|弃用|放弃)\s*(?P<old>[A-Za-z0-9_.\-]+|[\u3400-\u9fff]{1,8})"
    ),
    _DROPPED_THEN,
    # "只要最近3天的 7天太多了": after the value meant, the old one and why it goes
    re.compile(
        r"(?<=\S)[\s，,]+(?P<old>[\d.]+\s?[\u3400-\u9fffA-Za-z]{1,3}?|[零一二两三四五六七八九十百千万]{1,4}"
        r"[\u3400-\u9fff]{1,2}?)\s*" + TOO_MUCH_ZH
    ),
)


def starts_a_span(v: Value, numbers: list[Value], text: str) -> bool:
    """A date or clock time that a second one of its kind follows as the end of the
    span they make ("from 2pm to 4pm"), with no word of moving before ("moved from")."""
    if v.type not in ("date", "time") or _MOVED.search(text, 0, v.start):
        return False
    return any(
        n.type == v.type and n.start >= v.end and _SPAN_JOIN.fullmatch(text, v.end, n.start)
        for n in numbers
    )


_SPAN_JOIN = re.compile(r"\s*(?:to|until|till|through|thru|-|–|到|至)\s*", re.I)
_MOVED = re.compile(
    r"\b(?:mov|chang|push|pull|shift|reschedul|bump|switch|postpon|delay)\w*|改|挪|推|调", re.I
)


def _spans_from(text: str, m: re.Match[str]) -> bool:
    """Whether "from X to Y" gives a span of days or hours, not a change from X."""
    values = find_numbers(text)
    start = next((v for v in values if v.start == m.start("old")), None)
    return start is not None and starts_a_span(start, values, text)


def _value_like(old: str) -> bool:
    """An old value worth looking for: a number, a name ("Redis", "April", "GitBook"),
    or a tool convmem knows ("spaces")."""
    return any(c.isdigit() or (c.isupper() and c != "I") for c in old) or bool(_NAME.search(old))


def _replaced(m: re.Match[str], old: str) -> bool:
    """Is ``old`` a value an English clause replaces? After "rather than" or "instead
    of", a thing unless it is a deed ("instead of giving up"); after "not", "over" or
    "from" ("we're not alone", "from contemporary to hip-hop"), only a value."""
    if m.groupdict().get("strong"):
        return _value_like(old) or not old.split()[0].lower().endswith("ing")
    return _value_like(old)


_CORRECTION = re.compile(
    r"^(?:actually|correction|scratch that|wait|sorry|oops|my bad|not quite|hold on|update)\b"
    r"|^(?:nah|no|nope|ok|okay|hmm|ugh|oh)[\s,]+(?:scratch|forget) that\b"
    r"|\b(?:make it|make that|change (?:it|that|this) to|change to|switch to|switching to"
    r"|instead of|rather than|should be \S+ instead|use \S+ instead|instead|i meant|i mean"
    r"|changed my mind|change of plans?|on second thought"
    r"|meant to say|not \S+ but|correction:|typo|i (?:had|got) (?:it|that|this) wrong|"
    + MISSPOKE
    + r")\b"
    r"|改成|改为|改去|换成|换用|改用|更正|纠正|不是.{1,30}?而是|^不是[^，,。\s]{1,20}[\s，,]+是|应该是|改一下|说错了|不对[\s，,]*是\s*(?:[A-Za-z0-9.+\-]+|[零一二两三四五六七八九十百千万]+)[。！!]?$|"
    + SLIPPED
    + "|我是说|算了|最后定了|最终定了|调成|调到|改到"
    # a change of what was said: "we're 13 now", "the exam moved to May 24", "现在是"
    # ("seven years now" is how long something has lasted, not a new value)
    # ("right now", "for now", "what to do now" say when, not that something changed)
    r"|\b(?:(?<!years )(?<!months )(?<!weeks )(?<!days )(?<!while )(?<!right )(?<!for )"
    r"(?<!do )(?<!what )(?<!by )(?<!until )(?<!till )now"
    r"|moved to|moved it to|pushed to|bumped (?:me |it |us )?(?:up |down )?to"
    r"|goes to|went up to|went down to|more like|changed to|updated to|raised to|lowered to"
    r"|cut to|dropped to"
    r"|(?:drop|cut|push|move) (?:it|that|this|them) (?:up |down |back )?to"
    # "she's actually 15.5 lbs", "the pool should actually be 50", "it's 45 actually": a
    # value stated again, put right
    r"|(?:is|are|was|were|it's|she's|he's|we're|they're|should|must|needs? to|ha(?:s|ve) to)"
    r" actually|actually[.!]*$"
    r"|instead|anymore|no longer)\b|现在(?:改|变)|变成|挪到|涨到|降到|提到|推迟到|提前到|延到",
    _I,
)
#: A new value set in place of one said in an earlier message: "预算放宽到一天600", "we
#: raised the cap to 5". Within one message it is a second value ("目标3个月减到65kg"
#: beside "现在75kg"; "企业版客户放宽到每分钟300次" beside the general limit).
_CHANGE = re.compile(
    r"\b(?:relax(?:ed)?|tighten(?:ed)?|increase[ds]?|decrease[ds]?|reduce[ds]?|raise[ds]?|lower(?:ed)?"
    r"|bump(?:ed)?|set|change[ds]?|move[ds]?|moving|push(?:ed|es)?|shift(?:ed|s)?|extend(?:ed|s)?"
    r"|stretch(?:ed|es)?"
    r"|cut|drop(?:ped|s)?|trim(?:med|s)?|upped|resched(?:uled?|ules)?|revis(?:e[ds]?|ing)"
    r"|switch(?:e[ds]|ing)?)"
    r"(?: (?:the |our |my )?[\w-]+(?: [\w-]+)?)?(?: back| up| out)? to\b"
    # a limit that now reaches further: "the budget goes to 2,900", "can go up to $3k"
    r"|\b(?:goes|can go)(?: up)? to (?=[$€£¥]?\d)"
    # a limit gone back: "max rent is back to $2,000" (not "my rent is back to $2,100")
    r"|\b(?:max|min|cap|limit|budget|ceiling|floor)\b[^,.;!?]{0,30}?"
    r"\b(?:is|are|'s|goes|went|came|comes) back (?:down |up )?to (?=[$€£¥]?\d)"
    # a value set anew: "make the cap 250k", "make max 12" ("make it 12" corrects); said
    # as an instruction, not asked ("should we make the cap 250k?", "make max 12?")
    r"|^(?:(?:ok|okay|so|then|and|also|just|pls|please|let'?s|lets)[\s,.]+)*make (?:the |our |my )?"
    r"(?!it\b|that\b|sure\b)[\w-]+(?: [\w-]+)? (?=[$€£¥]?\d)(?![^?？]*[?？])"
    # from a day on ("allowed 600/min as of today", "it's 1600 starting march"), a count
    # reached, what it came to ("ended up", "机票最后出的是13号的", "最后放了六千"; not 最后一天)
    r"|\b(?:as of (?:today|now|this \w+|next \w+|\w+day)|starting (?:today|tomorrow|this \w+"
    r"|next \w+|\w+day|jan\w*|feb\w*|mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|sep\w*|oct\w*"
    r"|nov\w*|dec\w*)|from now on|(?:we're|we are|now) at(?= \d)|ended up|in the end)\b"
    r"|(?:最后|最终)(?!一)[\u4e00-\u9fff]{1,2}?(?:了|的是)"
    # "预算可以到四千": a limit that reaches further (not "…可以到四千的话", "要是…就好了",
    # "老公说预算可以到四千")
    r"|^[^，,。说觉要如]{0,8}?(?:可以|能)(?:放宽|加|涨)?到\s*[\d两一二三四五六七八九十]"
    r"(?![^，,。]*(?:的话|就好了|吗|[?？]))"
    r"|放宽到|收紧到|提高到|降低到|加到|减到|增加到|减少到|挪到|推到|推迟到|延到|延后到|延长到|提前到"
    r"|调到|调整到|涨到|降到|改到"
    # 改 and the value at once: "行 改16号吧", "改40g", "改二十四桌吧" (not 改一下, 改天)
    r"|(?<![修更篡])改\s*(?!一下|一改|一版|一遍|一点)[\d两一二三四五六七八九十]"
    # a value settled on, often after another's word: "就 1600 吧", "fine, 600 it is"
    # (not "我就10分钟", only ten minutes; "那就8寸吧" most often picks an option)
    # (after a few words of topic or assent: "预算 就1600吧", "行，就1600吧", "那 就1600吧")
    # ("那就8寸吧" picks an option)
    # (not for one day: "今天，就3公里吧", "累了，就6杯吧")
    r"|^\W*(?:(?!今天|今晚|明天|周末|这周|本周|这次|这回|周[一二三四五六日天末]|星期|累了)"
    r"[^\s，,。！!？?]{1,4}[\s，,]+)?就\s*[\d两一二三四五六七八九十][^，,。？?]{0,5}吧\W*$"
    # a count or a sum chosen again, with what it counts: "桌数就定二十四桌吧", "人多了 那就
    # 三间房吧", "那就五千吧" (after its reason or an assent; "档次就定1288的了" picks one)
    r"|^\W*(?:(?!今天|今晚|明天|这次|这回|累了)[^\s，,。！!？?]{1,6}[\s，,]+)?(?:那就|那)\s*(?:定|订|要)?"
    r"\s*[\d两一二三四五六七八九十]"
    r"[^，,。？?\s]{0,5}(?:吧|好了)[。！!~～\s哈]*$"
    r"|^\W*[\u4e00-\u9fff]{1,4}就定\s*[\d两一二三四五六七八九十][^，,。？?的]{0,5}吧[。！!~～\s哈]*$"
    r"|^\W*(?:(?:ok|okay|fine|so|then|alright)[\s,]+)*[$€£¥]?\d[\d,.]*k?\s+it is\b"
    # a value chosen again: "let's go with 24 tables", "ok let's do 5000 then, somewhere
    # nicer", "we'll go with 24 tables then" (not "let's do 3 sets of 10": a count of two
    # things; "let's say 30" is most often a guess)
    r"|(?:^\W*|[,;]\s*|\.\s+)(?:(?:eh|ok|okay|fine|so|then|alright|hmm+|right)[\s,]+)*"
    r"(?:let'?s (?:just )?(?:do|go with|go for)|we'?ll go with)"
    r" [$€£¥]?\d[\d,.]*k?(?:\s+[a-z]+)?(?:\s+(?:then|instead))?\s*(?:[,.!]|$)(?![^,.!]*\d)"
    # a choice or a value gone back to ("日志级别还是用info吧", "lint 超时还是3分钟吧")
    r"|(?<!用)(?<!选)还是(?:用|选|改回|换回|回到|(?:给|设成?|设为|调成?|开)?\s*[\d两]"
    r"(?![^，,。]*(?:那家|那个|的那)))"
    r"(?![^，,。]*(?:还是|吗|呢|？|\?))"
    # the number settled on at last: "确定是35个人", "最后定了26桌"; or for now: "先定
    # 300ms 吧", "暂定8个人" (not "release 定在周四", nor the choice of "档次就定1288的")
    r"|(?:确定|最后|最终)(?:是|定了|定的)\s*[\d两一二三四五六七八九十](?![^，,。]*[吗?？])"
    r"|(?:先|暂时|暂)定(?:成|为|在)?\s*[\d两一二三四五六七八九十](?![^，,。]*[吗?？])"
    # "现在8张了", "训练集现在9500条": the value something has now
    # (not the time it is now: "现在6点了，出发吧")
    # "现在是5个人" too (beside a limit in the same message, "现在是3秒多" is how far
    # off things are now); not "现在内存占用3.5G" (a reading of what has a limit) nor
    # "老婆现在月薪1万5" (another person's)
    r"|现在(?:已经|有|只有|才|是)?\s*[\d两](?![\d.]*\s*[点:：])"
    r"|现在(?![^，,。\s]*[点:：])[^，,。\s]{1,8}了$",
    _I,
)
_SCRATCH = re.compile(
    r"\b(?:scratch that|never ?mind|nvm|forget (?:that|it|what i said)|ignore (?:that|what i said)"
    r"|disregard (?:that|my last))\b|算了|当我没说|不对"
    r"|(?:刚才|之前|前面|上面)说的(?:那个|那些)?不算"
    # a slip, then the word meant: "打错了 是王玮" (not "我记错了 520好记", a remark)
    r"|^(?:我|刚才|刚刚)*(?:说错了|" + SLIPPED + r")[\s，,]*是",
    _I,
)
#: "off" said of a plan (not a day off or a switch: "Sarah's off tomorrow", "the light's
#: off in the hall").
_CALLED_OFF = (
    r"off(?!\s+(?:work|tomorrow|today|tonight|duty|sick|in|at|on|for|until|till|this|next"
    r"|again|sometimes|usually)\b)"
)
#: What a retraction withdraws. Compiled on first use (some 14 ms, and most
#: processes never see a retraction): see :func:`_retract_pattern`.
#: A word of what is withdrawn, or the point of a decimal in it ("forget the 0.9 target").
_TARGET = r"(?:[\w\s'-]|(?<=\d)\.(?=\d))"
_RETRACT_SOURCE = (
    r"\b(?:(?:forget|scratch|scrap|drop|skip|disregard)"
    r" (?:about )?(?:what i said about )?(?:the )?"
    rf"(?P<a>{_TARGET}{{2,40}}?)(?: thing| part| requirement| idea| rule| bit| goal| target)\b"
    r"(?!\s+(?:today|tonight|this (?:time|once|morning|evening|week)))"
    # "dropping the redis idea", at the start of what is said (not "I keep skipping the
    # bridge part when I practice")
    r"|^\W*(?:(?:ok|so|actually|also|and|but|yeah|nah)[\s,]+)*(?:(?:i'm|we're|i am|we are)\s+)?"
    rf"(?:dropping|scrapping|scratching) (?:the )?(?P<a2>{_TARGET}{{2,40}}?)"
    r"(?: thing| part| requirement| idea| rule| bit| plan)\b"
    # "scrap the roth for now", "drop the gym line entirely": said first, the thing named
    # in a word or two and nothing after it (not "drop the kids off at 8", nor a table)
    r"|^\W*(?:(?:ok|so|actually|also|and|but|yeah|nah|oh)[\s,]+)*(?:(?:let's|lets)\s+)?"
    r"(?:scrap|drop|ditch|nix) the (?!(?:\w+\s)?(?:tables?|columns?|index|indexes|database|db"
    r"|schema|views?|constraint|connections?|packets?|ball)\b)(?P<sd>[\w'$-]+(?:\s[\w'$-]+)?)"
    r"(?=\s*(?:[,.!;]|$)|\s+(?:for now|entirely|completely|altogether|too|as well)\b)"
    rf"|forget (?:about )?(?:what i said about )?(?:the )?(?P<h>{_TARGET}{{2,40}})"
    # "lets not worry about the co-supervisor's 2k thing"
    r"|\b(?:(?:let's|lets|let us) not|no need to) worry about (?:the )?"
    rf"(?P<wa>{_TARGET}{{2,40}}?)(?: thing| part| requirement| idea| rule| bit| limit| cap)\b"
    r"|\b(?:don't|dont|do not) worry about (?:the )?"
    rf"(?P<wb>{_TARGET}{{2,40}}?)(?: thing| part| requirement| idea| rule| bit| limit| cap)?"
    r" any ?more\b"
    # a limit or a plan given up: "so the 450 cap is out the window"
    r"|(?:\b(?:ok|so|and|but|yeah|well|guess|the)\s+)*"
    r"(?P<ow>(?:[\w'$-]+\s){0,3}?(?:cap|limit|budget|max|minimum|plan|deadline|rule|requirement"
    r"|idea))\s+(?:is|are|'s)\s+out the window"
    # "we dropped the idea of doing the 4oz minis", "gave up on the pool"
    r"|\b(?:i|we)\s+(?:(?:dropped|scrapped|ditched|abandoned) the idea of|gave up on)"
    r" (?:doing |having |getting |adding |making )?(?:the |a |an )?(?P<di>[\w\s'-]{2,30}?)"
    r"(?=\s*(?:[,.!;]|$))"
    r"|(?:never ?mind|nvm) (?:about |on )?(?:the )?(?P<i>[\w\s'-]{2,30})"
    rf"|(?:ignore|disregard) what i said about (?:the )?(?P<w>{_TARGET}{{2,40}}?)"
    r"(?=\s*(?:[,.!;]|$))"
    r"|(?:ignore|disregard) (?:what i said about |the )?(?P<b>[\w\s-]{2,40}?)"
    r"(?: thing| part| requirement)?"
    # a plan called off: "lake house is off", "the dinner is cancelled"
    r"|^\W*(?:(?:ok|so|actually|also|oh|and|but|nah|welp)[\s,]+)*(?:the )?"
    r"(?P<p>(?:[\w'-]+\s){0,3}?[\w'-]+)"
    r"(?: (?:is|are|'s) (?:gone|dead|scrapped)"  # (not "he's gone": the contraction is a person)
    r"|(?: is| are|\s?'s) (?:" + _CALLED_OFF + r"|cancell?ed|called off|shelved)"
    r"| got (?:cancell?ed|shelved)"
    # "dentist cancelled, nvm that": the plan's name, then cancelled and no object (not
    # "dentist not cancelled", "flight cancelled, rebooked for may 4": a change)
    r"|(?<!n't)(?<!\bnot)(?<!\bnever) cancell?ed(?=\s*(?:[.!;]|$)"
    r"|\s*,\s*(?:nvm|never ?mind|forget|so|oh well|sadly|unfortunately|ugh)\b))(?! to\b)"
    # "cancel that dentist appt, we're switching practices"
    # ("I cancelled the U-Haul", "cancelled the caterer"; not "cancelled only from paid")
    r"|(?:\b(?:cancel (?:that |the |my |our )?|(?:(?:i|we|i've|we've)\s+(?:just\s+|already\s+)?)"
    r"cancell?ed (?:that |the |my |our )?)|^\W*cancell?ed (?:that |the |my |our ))"
    r"(?P<t>[\w\s'-]{2,30}?)"
    r"(?=\s*(?:[,.!;]|$|\bwe\b|\bi\b|\bbecause\b|\bsince\b|\bfor now\b))"
    # "we removed the coverage gate entirely yesterday"
    r"|(?:\b(?:i|we|i've|we've)\s+(?:just\s+|already\s+)?|^\W*)(?:removed|ditched|got rid of)"
    r" (?:that |the |my |our )(?P<x>[\w\s'-]{2,30}?)"
    r"(?=\s*(?:[,.!;]|$|\b(?:entirely|completely|altogether|yesterday|today|because|since)\b))"
    r"|(?:the )?(?P<c>[\w\s.-]{2,30}?)(?: thing| requirement| rule| part)?"
    r"(?: (?:doesn't|doesnt|does not|no longer) matters?(?: anymore)?"
    # "the Go 1.21 thing no longer applies" (not "doesn't apply to sale items": a scope)
    r"| (?:no longer appl(?:y|ies)|(?:doesn't|does not) apply any ?more)(?=\s*(?:[,.!;]|$)))"
    r"|(?:the )?(?P<j>[\w\s-]{2,30}?) (?:is|are) no longer (?:a requirement|needed|required"
    r"|necessary|a priority|a thing)"
    r"|drop the (?P<d>[\w\s-]{2,30}?) (?:requirement|thing|part|idea|rule|limit|cap|check"
    r"|gate|goal|target)\b"
    r"|no need for (?:the )?(?P<e>[\w\s-]{2,30})"
    # the whole clause, about a thing named with "the": "we don't need the 200 ms limit
    # anymore" (not "if we don't need the parking anymore", "… anymore, so I'll sell it")
    r"|^\W*(?:(?:ok|so|actually|also|oh)[\s,]+)*(?:we|i) (?:don't|do not|no longer) need"
    r" (?:the|that|this) (?!to\b)(?P<n>[\w\s-]{2,30}?)(?: limit| rule| requirement| thing)?"
    r" (?:anymore|any more)(?=[\s.!]*$)"
    # (not "scratch that on the refresh, make it 30 days": a correction of the refresh)
    r"|scratch (?!that\b)(?:the )?(?P<l>[\w\s'-]{2,30})"
    # the thing first: "also the no fish thing, ignore that"
    r"|(?:^\W*(?:(?:ok|so|actually|also|oh|and|but)[\s,]+)*(?:the\s+)?|\bthe\s+)"
    r"(?P<o>[\w\s'-]{2,30}?) (?:thing|requirement|idea|rule),?"
    r" (?:ignore|forget|scratch|drop) (?:that|it))\b"
    # "the feature flag for checkout, forget that" (no "thing" after what it names)
    # (not a part of what was said: "the first part, ignore that")
    r"|^\W*(?:(?:ok|so|actually|also|oh|and|but)[\s,]+)*(?:the\s+)?"
    r"(?!(?:first|second|third|last|other|next|previous|that|this)\b)"
    r"(?P<u>[\w\s'-]{2,30}?)(?<!\bpart)(?<!\bbit)(?<!\bone),\s*"
    r"(?:forget|ignore|scratch|drop|disregard) (?:that|it)\b"
    r"|(?<![A-Za-z0-9_.-])"
    r"(?P<f>(?:[A-Za-z0-9][A-Za-z0-9_.-]*+\s?){1,3}?|[\u3400-\u9fffA-Za-z0-9 ]{1,16}?)(?:那个|这个"
    r"|的事|那事|的要求|那条|那章|那部分)?(?:计划|安排|想法|打算)?(?:先|就|也)?\s?(?:不用管了|不用?考虑了|不需要了"
    r"|不要了|不用了|不管了|别管了|就算了|取消了?|可以不管|先放一放|不[做搞去买订办上装报约租加]了"
    r"|不用[去做搞买订办上来加装改]了|当我没说过?|(?:drop|cancel|砍|取消)\s?掉"
    r"|(?<=先)不考虑(?=$|[\s，,。!！~]))"
    # "电梯那条就不卡了": after what it names, anything no longer done
    # ("孩子的事不少了", "时间那个不早了" say how things are; 砍了 and 吹了 after what
    # they name: "ablation 那章砍了", "按摩椅那事吹了", not "价格砍了一半")
    r"|(?P<z>[\u3400-\u9fffA-Za-z0-9 ]{1,12}?)(?:那个|这个|那条|那事|的事|的要求|那章|那部分)"
    r"(?:先|就|也)?(?:不(?![少早错好对行多])[\u4e00-\u9fff]了|砍了|砍掉了|吹了|黄了)"
    # "不吃晚饭那个计划算了" (not "我算了下", I worked it out)
    r"|(?P<s>[\u3400-\u9fffA-Za-z0-9 ]{1,12}?)(?:那个|这个|的事)(?:计划|安排|想法|打算)?"
    r"(?:先|就|也)?算了(?!下|一下|一遍)"
    # "褪黑素我已经停了": a habit stopped
    # ("地铁停了", "外面雨停了": something stopped, not the person)
    r"|(?P<y>[\u3400-\u9fffA-Za-z0-9]{2,8}?)我(?:已经)?(?:停了|停掉了|戒了)"
    # "青霉素过敏是我瞎说的": what was said, untrue
    r"|(?P<r>[\u3400-\u9fffA-Za-z0-9 ]{1,12}?)是我(?:瞎|乱|随便)说的"
    # "删掉" alone is a task ("把这个函数删掉"); after 那条 it withdraws what was said
    r"|(?P<k>(?:[A-Za-z0-9][A-Za-z0-9_.-]*+\s?){1,3}?|[\u3400-\u9fffA-Za-z0-9 ]{1,12}?)"
    r"(?:那个|这个|那条|这条|的要求|的规则)(?:先)?"
    r"(?:删掉|去掉|删了|作废|不算了?|别管了|不用管了?)"
    # "刚才说的预算作废": what was said, void
    r"|(?:刚才|之前|前面)说的(?P<q>[\u3400-\u9fffA-Za-z0-9 ]{1,12}?)(?:作废|不算了?)"
    r"|(?:别管|不用管|不用考虑|取消|先不搞|先别搞|先不做|先不要)"
    r"(?P<g>[\u3400-\u9fffA-Za-z0-9]{1,10}?)(?:了|啦|(?=$|[\s，,。!！~]))"
    r"|^先别(?P<h2>[\u3400-\u9fff]{1,4})"
    # "不去日本了 改去韩国": the place or thing, after the verb no longer done
    r"|(?:^|[\s，,])(?:先|就|也)?不(?:去|买|订|租|报|选)(?P<n2>[\u3400-\u9fffA-Za-z0-9]{1,8}?)了"
    r"(?=[\s，,]*(?:改|换|还是))"
    # "酒店不用非得在地铁站附近了": what no longer has to be so
    r"|不(?:用|必)(?:非得|一定|非要)(?:要)?(?P<v2>[\u3400-\u9fffA-Za-z0-9 ]{2,12}?)了"
    # "停车的事忘掉吧": 忘掉 after what it names ("我忘了" alone is forgetting)
    r"|(?P<m>[\u3400-\u9fffA-Za-z0-9 ]{1,12}?)(?:那个|这个|的事|那条|这条)就?忘掉"
)
#: Words one of which every retraction above holds: the costly search runs only then.
_RETRACT_WORDS = re.compile(
    r"forget|scratch|scrap|drop|skip|never|nvm|ignore|disregard|matter|appl|no need|no longer"
    r"|ditch|nix"
    r"|worry about"
    r"|gave up|abandoned|ditched|out the window"
    r"|need [^.!?\n]{0,60}any ?more|\b(?:off|cancell?ed|cancel|gone|dead|scrapped|shelved)\b"
    r"|不用|不需要|不要了|不管了|就算了|取消|可以不管|先放一放|不做了|不搞了|别管|先不|先别"
    r"|删掉|去掉|作废|忘掉|不算|不[\u4e00-\u9fff]了|不[去买订租报选][^，,。]{1,8}了[\s，,]*(?:改|换|还是)|不用[去做搞买订办上来加装改]了|[瞎乱]说的"
    r"|removed|ditched|got rid of|当我没说|算了|不考虑|停了|戒了|掉|砍了|吹了|黄了",
    _I,
)


@lru_cache(maxsize=1)
def _retract_pattern() -> re.Pattern[str]:
    return re.compile(_RETRACT_SOURCE, _I)


#: What before "forget …" / "never mind" / "ignore …" makes it a statement, not an
#: instruction: "I'll never forget the day", "don't forget to rest", "easy to forget that",
#: "it helps us forget the daily craziness".
_NOT_TOLD = re.compile(
    r"(?:\b(?:i|you|we|they|he|she|it|never|not|ever|always|to|will|would|can|could|might"
    r"|may|cannot|gonna|wanna|don't|dont|didn't|won't|can't|i'll|we'll|you'll|i'd|i'm|help"
    r"|helps|helped|makes?|made|(?:helps?|helped|makes?|made)\s+(?:us|me|them|him|her))|n't)"
    r"[\s,]*$",
    _I,
)
#: "forget to rest": forgetting as a deed, not a withdrawal.
_FORGET_DEED = re.compile(r"forget to\b", _I)


def _told(text: str, start: int) -> bool:
    """Is the cue at ``start`` said as an instruction (nothing before it in the clause
    makes it a statement about forgetting)?"""
    return not (
        _NOT_TOLD.search(text, max(0, start - 24), start) or _FORGET_DEED.match(text, start)
    )


_SAID_BEFORE = re.compile(r"(?:刚才|之前|前面|上面|我)?(?:说|讲|提)的")


def _names_something(target: str) -> bool:
    """A retraction target that names a thing or a value ("the budget", "the 6 hour"),
    not "it", "that" or "之前说的" (what was said before: see ``_SCRATCH``)."""
    if _SAID_BEFORE.fullmatch(target.strip()):
        return False
    return bool(_CJK.search(target)) or any(
        (len(w) >= 3 and w not in STOP) or any(c.isdigit() for c in w)
        for w in re.findall(r"[\w'-]+", target.lower())
    )


def category(name: str) -> str | None:
    """What a named choice is (``redis`` -> ``cache``), if convmem knows it."""
    return _CATEGORY.get(name.lower())


#: Names that are also everyday words ("I've got", "express delivery", "in spring"):
#: they name a tool only in technical company (see :func:`named_choices`).
EVERYDAY_NAMES = frozenset(
    """got fetch express solid echo render spring black spaces tabs sessions requests logging
    rails epoch poetry swift rust ruby gin zap swarm drone remix oracle fiber bun nose celery
    pulsar mocha jasmine tortoise drizzle dragonfly astro sanic travis""".split()
)
#: Company that makes an everyday word a tool: code marks, or a word about software.
_TECH_COMPANY = re.compile(
    r"`|\b(?:uses?(?!\s+to\b)|using|switch(?:ed|ing)?|migrat\w*|install\w*|librar(?:y|ies)|lib|package"
    r"|framework|client|server|config\w*|version|import\w*|depend\w*|plugin|api|backend"
    r"|frontend|stack|formatter|linter|format\w*|deploy\w*|instead|versus|vs|indent\w*"
    r"|http|endpoint|code|tests?|module|sdk|cli|app|repo|project|service)\b"
    r"|用|换成|改成|框架|库|依赖|部署|配置|缩进|代码",
    _I,
)
#: Everyday words that are verbs far more often than tools ("I've got", "to express
#: myself"): they count only as code, or named as a tool right there.
_STRICT_NAMES = ("got", "express")
_AS_TOOL = {
    name: re.compile(
        rf"`{name}(?:\.js)?`|\b{name}\.js\b|\b{name}\s+(?:library|package|client|module"
        rf"|server|app|framework|middleware|router)\b|\bnpm\s+(?:i|install|add)\s+{name}\b",
        _I,
    )
    for name in _STRICT_NAMES
}


@lru_cache(maxsize=4096)
def named_choices(text: str) -> tuple[str, ...]:
    """Names of known alternatives in the text, lower-cased, in order (cached: links
    ask it of the same earlier items for every new clause).

    A name that is also an everyday word counts only beside another known name (or one
    of the same kind: "tabs or spaces") or a word about software (:data:`EVERYDAY_NAMES`),
    and "got" or "express" only as code, named as a tool, or capitalised inside a
    technical sentence: in real chat "I've got" and "to express myself" are far more
    common than the libraries."""
    found = [(text[a:b].lower(), (start, a)) for start, a, b in CueText(text).spans(_NAME, 1)]
    if not any(n in EVERYDAY_NAMES for n, _ in found):
        return tuple(n for n, _ in found)
    company = bool(_TECH_COMPANY.search(text))

    def strict(name: str, at: tuple[int, int]) -> bool:
        """A verb-like name ("got") as a tool: code, named so, or a capital in company."""
        start, first = at
        before = text[:start].rstrip()
        proper = text[first].isupper() and before != "" and before[-1] not in ".!?:\"'“‘"
        return bool(_AS_TOOL[name].search(text)) or (proper and company)

    # verb-like names decide alone; the others may lean on each other below
    kept = [(n, m) for n, m in found if n not in _AS_TOOL or strict(n, m)]
    # "tabs or spaces": two names of one kind of thing are a choice between them
    kinds = [_CATEGORY.get(n) for n in {n for n, _ in kept}]
    technical = (
        company or any(n not in EVERYDAY_NAMES for n, _ in kept) or len(kinds) != len(set(kinds))
    )
    return tuple(n for n, _ in kept if n not in EVERYDAY_NAMES or n in _AS_TOOL or technical)


#: A verb and its particle name one thing: "check in" is not "check out".
#: (written as one word, as "checkin" and "check-in" often are)
_PHRASAL = re.compile(r"\b(check|log|sign|clock|pick|drop|set|start|warm|cool|wake|kick|move)"
                      r"(?:\s+|-)(in|out|up|off|on)\b")  # fmt: skip


def _content_words(np: str) -> list[str]:
    words = []
    for w in re.findall(r"[\w./+#-]+", _PHRASAL.sub(r"\1\2", np.lower())):
        w = w.strip(".-")
        if not w or w in STOP or w.isdigit() or len(w) < 2:
            continue
        words.append(_singular(w))
    return words[:4]


#: Plurals in -ies whose singular ends in -ie ("cookies"), or that have none ("series").
_IE_PLURALS = frozenset(f"{n}s" for n in IE_NOUNS) | {"series", "species"}


def _singular(w: str) -> str:
    """A plural as its singular, roughly: "retries" is "retry", "limits" is "limit"."""
    if not w.endswith("s") or len(w) <= 4 or w.endswith("ss"):
        return w
    if w.endswith("ies") and w not in _IE_PLURALS:
        return w[:-3] + "y"
    return w[:-1]


def subject_key(text: str, numbers: list[Value] | None = None) -> str:
    """The key of what the clause is about; empty when it cannot tell."""
    body = text.strip()
    if _CJK.search(body):
        key = _zh_subject(body)
        if key:
            return key
    body = _EN_SPEAKER.sub("", body, count=1)  # "my manager said the deadline is…"
    cue = CueText(body)
    for pattern in (_SUBJECT_ASSIGNED, _SUBJECT_AFTER_VERB, _SUBJECT_BEFORE_VERB):
        np = cue.find(pattern, "np")
        if np is not None:
            words = _content_words(body[np[0] : np[1]])
            if words:
                return " ".join(words)
    lead = _NAMED_VALUE.match(body)
    if lead and lead["np"].lower() not in _NOT_A_NAME:
        return _singular(lead["np"].lower())  # chat shorthand: "ttl 30分钟", "concurrency 4"
    setting = _SETTING_BEFORE_VALUE.search(body)
    if setting:
        # "max-model-len 先给 16384", "检索 top_k 3", "make the cap 250k", "max 8"
        return setting["name"].lower()
    names = named_choices(body)
    if names:
        np = cue.find(_FOR_PURPOSE, "np")
        if np is not None:
            words = [w for w in _content_words(body[np[0] : np[1]]) if category(w) is None]
            if words:
                return " ".join(words)
        cat = category(names[0])
        if cat:
            return cat
    return _versioned(body)


#: What a value is set for, before it: a setting's identifier ("max-model-len",
#: "top_k", "maxPoolSize") or a limit named as a noun ("the cap", "max"), with at most a
#: few words between them and the value.
_SETTING_BEFORE_VALUE = re.compile(
    r"(?<![\w.-])(?P<name>[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*"
    r"|(?:(?<=the )|(?<=make )|(?<=set )|(?<=keep ))(?:cap|limit|max|min|maximum|minimum)"
    r"|^(?:max|min|cap|limit|maximum|minimum)"
    r"|^cap(?= (?:it|them|that) ))"
    r"(?![\w.-])(?=[^\d\n]{0,12}?\d)(?![^\d\n]*?\d+(?:\.\d+)*[-.]\w)"
)
#: A name and its value, nothing between: "ttl 30分钟", "concurrency 4", "maxUnavailable 1".
_NAMED_VALUE = re.compile(r"^(?P<np>[A-Za-z][\w.-]{1,30})\s*(?=\d)(?!\d+(?:\.\d+)*[a-z]?\s*$)")
_NOT_A_NAME = STOP | frozenset(
    """make set keep use go bump raise give take need want only about around like maybe max
    min under over at to with for in on by is are be was were v version python node
    jan january feb february mar march apr april may jun june jul july aug august sep sept
    september oct october nov november dec december""".split()
)  # (a month before its day is the value, not what it is of: "june 13 now")
_BEFORE_VERSION = re.compile(r"\b([A-Za-z][A-Za-z+#-]*)\s+$")


def _versioned(text: str) -> str:
    """What a version number is the version of: "we're on node 18" is about node."""
    for value in find_numbers(text):
        if value.type == "version":
            m = _BEFORE_VERSION.search(text, max(0, value.start - 64), value.start)
            word = m[1].lower() if m else ""
            if word and word not in STOP and word not in _GENERIC:
                return word
    return ""


def content_words(text: str) -> set[str]:
    """Words (and CJK bigrams) of a text that say what it is about."""
    return set(_content_words_of(text))


@lru_cache(maxsize=4096)
def _content_words_of(text: str) -> frozenset[str]:
    # (cached: links ask it of the same earlier items for every new clause)
    out = set(_content_words_all(text))
    for run in _CJK_RUN.findall(text):
        # the words of choosing go whole: 定 alone is also the first half of 定投
        stripped = _ZH_CHOOSING.sub(" ", run)
        stripped = _ZH_PARTICLES.sub(" ", stripped)
        for part in stripped.split():
            out.update(part[i : i + 2] for i in range(len(part) - 1))
    return frozenset(out)


_ZH_CHOOSING = re.compile(r"决定|确定|定了|定下|纠结|还是|或者|没想好|想好|商量好|考虑好?|选好")
_ZH_PARTICLES = re.compile(r"[我你他她它们的了是在要就还先用吧呢吗啊也都和或没]")


def _content_words_all(np: str) -> list[str]:
    words = []
    for w in re.findall(r"[a-z][\w.+#-]*", np.lower()):
        w = w.strip(".-")
        if len(w) < 3 or w in STOP or w in _GENERIC:
            continue
        words.append(_singular(w))
    return words


_GENERIC = frozenset(
    """between decide deciding decided torn still haven't yet whether either choose choosing
    going think thinking leaning toward towards option options which what then okay""".split()
)


_ZH_NOT_SUBJECT = re.compile(
    r"^(?:决定|打算|准备|觉得|感觉|希望|想要|想|喜欢|偏好|还是|就|先|再|都|也|还|已经|直接|统一|一律|以后|今后"
    r"|对了|大概|大约|差不多|估计|目前|其实|实际上|一共|总共|本来|平时|确定|最后|最终"
    # a correction's verb names no subject ("改成8月24号" is about the date before it)
    r"|改成|改为|改到|换成|调成|调到|挪到|提到|降到|涨到|推迟到|提前到|延到|放宽到|变成)+"
)


#: An adverb between the subject and its verb ("minSdk 直接提到24").
_ZH_NOT_SUBJECT_END = re.compile(
    r"(?:直接|先|再|就|还是|也|都|已经|现在|最好|往后|往前|稍微|应该|应当|大概|大约|差不多|估计|目前"
    r"|其实|实际上|一共|总共|本来|平时|打算|准备|可以|能|还"
    r"|不对|说错了|写错了|搞错了|记错了|弄错了"  # "学习率不对 是1e-4": about 学习率
    r"|(?:从)?(?:下个?月|下周|明年|今年|明天|下次|今天)起?)+$"
)
#: Words that name only the kind of a value ("时间也往后挪到7点半": the time of the
#: booking before it), not what the value is of: no subject.
_ZH_VALUE_KIND = frozenset({"时间", "日期", "时候", "时间点", "端口", "端口号"})


def _zh_subject(body: str) -> str:
    """The head of the noun phrase before the first verb: "摘要的预算是3000" -> 预算."""
    body = _ZH_SPEAKER.sub("", body, count=1)  # 我老婆觉得4000就够了: not about 老婆
    for m in _ZH_VERBS.finditer(body):
        head = body[: m.start()].strip()
        head = _ZH_SUBJECT_STRIP.sub("", head)
        head = head.split("的")[-1].strip()
        head = re.sub(
            r"^(?:我们|咱们|我|你|这个|那个|这次|整体|总|每个|每[晚天日周月年人次]|每)+", "", head
        )
        # a value after the noun goes ("预算3000"), an identifier's digits stay ("p95")
        head = re.sub(r"(?<![A-Za-z_\d])[\d\s.,，:：]+$", "", head).rstrip(" .,，:：")
        head = _bare_head(head)
        if len(head) > 12:
            # "OOM了 batch size降到16", "显存不够 batch size降到16": what comes before the
            # setting's name is a clause of its own
            latin = _LATIN_TAIL.search(head.split("了")[-1])
            head = latin.group() if latin else head
        if head in _ZH_VALUE_KIND:
            return ""
        if len(head) >= 2 and len(head) <= 12:
            return head.lower()
        if m.start() > 12:
            break
    # 预算3000元, 订单表现在大概1.2亿行, 高峰期 QPS 大概3000
    lead = re.match(r"^([\u3400-\u9fff][\u3400-\u9fff A-Za-z]{1,11}?)\s*\d", body)
    if lead is None or _ZH_VERBS.search(lead.group(1)):
        return ""  # "每月存的提到7000": the words before a verb name no subject here
    head = _bare_head(lead.group(1))
    return head.lower() if 2 <= len(head) <= 12 else ""


_LATIN_TAIL = re.compile(
    r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9_.-]*(?: [A-Za-z][A-Za-z0-9_.-]*){0,2}$"
)


def _bare_head(head: str) -> str:
    """A Chinese subject without the words around it that are not part of it."""
    return _ZH_NOT_SUBJECT_END.sub("", _ZH_NOT_SUBJECT.sub("", head)).strip()


#: Whose thing a clause is about, when it names someone else's: "我妹妹的航班", "my sister's
#: flight", "his flight".
_OWNER = re.compile(
    r"(?:^|(?<=[\s，,。]))(?:我们?|咱们?)?(?P<zh>妹妹|姐姐|哥哥|弟弟|老公|老婆|妈妈?|爸爸?|儿子|女儿"
    r"|同事|朋友|男朋友|女朋友|室友|老板|他们?|她们?)的"
    r"|\b(?:(?:my|our)\s+(?P<en>[a-z]+)'s|(?P<pron>his|her|their))\s+[a-z]",
    _I,
)


def owner(text: str) -> str:
    """Whose thing the clause names if not the speaker's own ("" for the speaker's)."""
    m = _OWNER.search(text)
    if m is None:
        return ""
    return (m["zh"] or m["en"] or m["pron"]).lower()


def subject_words(key: str) -> set[str]:
    """The parts of a key two clauses can share (words, or CJK bigrams)."""
    out: set[str] = set()
    for token in key.split():
        if _CJK.search(token):
            run = "".join(_CJK.findall(token))
            out.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
        else:
            out.add(token)
            # a setting's identifier holds the words people call it by: "accumulation 改成
            # 16" changes gradient_accumulation_steps, "batch size" the batch_size
            if "_" in token:
                out.update(part for part in token.split("_") if len(part) >= 4)
    return out


#: Who may speak against the person: family, the people of their work, school and home.
_PERSON = (
    r"(?:wife|husband|partner|boyfriend|girlfriend|fianc[eé]e?|mom|mum|mother|dad|father|parents"
    r"|sister|brother|son|daughter|kid|kids|friend|roommate|flatmate|neighbou?r|landlord|doctor"
    r"|doc|dentist|vet|nurse|physio|therapist|trainer|coach|teacher|professor|prof|tutor|advisor"
    r"|adviser|accountant|mechanic|plumber|contractor|reviewer|colleague|coworker|boss|manager"
    r"|lead|cto|ceo|pm|client|customer|dba|cousin|aunt|uncle|grandma|grandpa|in-laws?)"
)
#: Someone else's claim: "my husband thinks dinner's at 3", "someone on the team says…".
THIRD_PARTY = re.compile(
    r"\b(?:my|our|the|his|her)\s+(?:\w+\s+){1,2}?(?:thinks?|says?|said|claims?|insists?|swears?"
    r"|is sure|is convinced|told me)\b"
    # a person against it: "my physio disagrees", "my wife really doesn't want Shinjuku"
    # (not "my knee doesn't like stairs", "my laptop doesn't want to boot")
    r"|\b(?:my|our|the|his|her)\s+(?:\w+\s+)?" + _PERSON + r"\s+(?:\w+\s+)?(?:disagrees?"
    r"|objects?|pushed back|keeps saying|(?:doesn't|does not|didn't) (?:want|like|agree|think))\b"
    r"|\b(?:my|our|the|his|her)\s+" + _PERSON + r"(?:'s|’s|\s+is)\s+(?:saying|claiming"
    r"|insisting)\b"
    r"|\b(?:someone|somebody|they|he|she)(?:\s+on the \w+)?(?:\s+(?:still|also|just|now|really))?"
    r"\s+(?:thinks?|says?|said|claims?)\b"
    r"|\b(?:he|she|they)(?:'s|'re|\s+is|\s+are)\s+(?:claiming|insisting|saying)\b"
    # "landlord is now claiming", "the vet's still saying"
    r"|\b" + _PERSON + r"(?:'s|\s+is)\s+(?:now|still)\s+(?:claiming|insisting|saying)\b"
    # a person named: "dana from product thinks", "the dba says" ("it says" is a text)
    r"|\b(?!(?:it|this|that|which|what|who)\b)[a-z]+(?:\s+from\s+\w+)?\s+(?:thinks|insists|claims"
    r"|swears|is claiming)\b"
    r"|\b(?!(?:it|this|that|which|what|who)\b)[a-z]+\s+from\s+\w+\s+(?:says|said)\b"
    # a name typed in lower case, opening the clause: "btw priya says the SLO is…"
    r"|^(?:(?:btw|but|and|so|also|oh|well|ok|okay|fyi|hmm+)[\s,]+)*(?!(?:it|this|that|which|what"
    r"|who|everyone|everybody|nobody|google|wikipedia|error|he|she|they|someone|somebody|mine"
    r"|yours|one|lease|ticket|contract|receipt|invoice|label|sign|email|letter|doc|docs|page"
    r"|site|website|app|map|menu|manual|bill|form|note|screen|log|message|text|chart|schedule"
    r"|calendar|box|bottle|package|tv|clock|gps|recipe|policy|report|script|test|readme"
    r"|output|forecast|weather|paper|book|article)\b)[a-z]{3,}\s+says\b"
    r"|\baccording to\b"
    # who by their trade, with no "my" or "the": "contractor 1 says", "globex recruiter says"
    r"|\b(?:recruiter|realtor|agent|broker|supplier|vendor|seller|contractor|landlord|interviewer"
    r"|teammate|colleague|coworker|trainer|coach|roofer|plumber|electrician|mechanic)"
    r"(?:\s+\d+)?\s+(?:says|said|thinks|claims|insists|quoted)\b"
    # a person by name: "Maria says", "Tom said that" (not "Google says", "It says", nor
    # a transcript's "Priya said, …")
    r"|\b(?-i:(?!(?:It|This|That|What|Which|Who|Then|And|But|Also|Just|Google|Wikipedia"
    r"|Everyone|Everybody|Nobody)\b)"
    r"[A-Z][a-z]{2,})\s+(?:says|said that)\b"
    # what another wrote: "client just emailed saying…", "landlord texted that…" (not
    # what the person wrote: "I emailed them saying…")
    r"|\b(?!(?:i|we|i've|we've|just|have|had|already)\b)[\w']+\s+(?:just\s+)?"
    r"(?:emailed|texted|messaged|wrote|replied)(?:\s+(?:me|us|back))*,?\s+(?:saying|that|to say)\b"
    r"|(?<![跟和给对向找])(?:老公|老婆|同事|老板|领导|他|她|他们|有人|运维|产品|妈|爸|女朋友|男朋友"
    r"|朋友|那边|师傅"
    r"|房东|客户|老师|教练|合伙人|中介|销售|物业|闺蜜|邻居)(?:刚|又|也|还|一直|非|硬)?"
    r"(?:说|觉得|认为|不同意|坚持|反对)"
    # who, then when or how, then says: "房东今天打电话 说", "新来的 DBA 坚持说" (not "我跟
    # 房东说了", 说明, 说实话, 说好)
    r"|(?<![跟和给对向找])(?:房东|医生|室友|同事|老板|领导|客服|师兄|师姐|导师|组长|经理|主管"
    r"|架构师|设计师|(?<![A-Za-z])(?:dba|hr|leader)(?![A-Za-z]))[^，,。！!？?我]{0,8}?(?:坚持说|非说|硬说|一口咬定|说)"
    r"(?!明|实话|好|了)"
    r"|(?:师兄|师姐|导师|人事|婆婆|公公|岳母|丈母娘|室友|医生|护士|助教|组长|leader)(?:说|觉得|认为)"
    # a person by a familiar name: 小李说, 老张觉得 (not 老实说, honestly)
    r"|(?<![\u4e00-\u9fff])[小老阿](?![实是时])[\u4e00-\u9fff](?:刚|又|也|还)?(?:说|觉得|认为)"
    r"|(?<![A-Za-z])(?:pm|boss|cto|ceo|cofounder|co-founder|founder|manager|lead|client|qa|ops"
    r"|dba|hr|leader|mentor|tl)\s*(?:说|觉得|认为)",
    _I,
)


@dataclass(frozen=True)
class Reading:
    """What one clause says about earlier ones."""

    subject: str
    correction: bool
    scratch: bool
    rejected: tuple[str, ...]
    retract_target: str | None
    names: tuple[str, ...]
    hearsay: bool = False
    #: a change of a value said earlier (see ``_CHANGE``), with no correction cue
    change: bool = False


#: A count changed by so many: "再加两个人", "少两个人", "add 2 more people", "3 fewer
#: guests" (not 至少两个人 or 最多两个人, limits). ``sign`` says which way.
RELATIVE = re.compile(
    r"(?P<sign>(?<![参增])加上?|(?<![至最不多很好许差])多|添|(?<![至最不多很好许])少|减|去掉)了?\s*"
    r"(?=[\d一二两三四五六七八九十]+\s*[个位]?\s*[人位间桌晚天个])"
    r"|\d+\s+(?P<en>more|extra|additional|fewer|less)\s+"
    r"(?=(?:people|ppl|guests?|persons?|kids|adults|rooms?|nights?|days?|tables?)\b)"
    r"|\b(?:one|two|three|four|five|six)\s+(?P<en2>more|extra|additional|fewer|less)\s+"
    r"(?=(?:people|ppl|guests?|persons?|kids|adults|rooms?|nights?|days?|tables?)\b)",
    _I,
)


#: What makes a count changed by so many a case, not a change: "如果再多一个人的话".
_ONLY_IF = re.compile(r"如果|要是|假如|万一|的话|\b(?:if|would|could|might|in case)\b", _I)


def relative_sign(text: str) -> int:
    """+1 or -1 when the clause changes a count by so many (see ``RELATIVE``), else 0."""
    m = RELATIVE.search(text)
    if m is None or _ONLY_IF.search(text):
        return 0
    word = (m["sign"] or m["en"] or m["en2"] or "").lower()
    return -1 if word in ("少", "减", "去掉", "fewer", "less") else 1


def says_about_earlier(text: str, opener: str = "") -> bool:
    """Whether a clause holds a correction, change or retraction cue: without one, its
    :func:`read` has none of ``correction``, ``change`` and ``retract_target`` set."""
    cue = CueText(f"{opener} {text}".strip())
    return (
        cue.search(_CORRECTION)
        or cue.search(_CHANGE)
        or cue.search(_RETRACT_WORDS)
        or relative_sign(text) != 0
    )


def read(text: str, opener: str = "") -> Reading:
    """Subject, correction cues, rejected old values and a retraction target of a clause."""
    whole = f"{opener} {text}".strip()
    rejected: list[str] = []
    for patterns, english in ((_REJECTED_EN, True), (_REJECTED_ZH, False)):
        for m in (m for pattern in patterns for m in pattern.finditer(text)):
            old = m.group("old").strip(" ,，.。")
            old = re.sub(r"^(?:the|a|an)\s+", "", old, flags=_I)
            span = english and m.re is _REJECTED_EN[1] and _spans_from(text, m)
            if old and old.lower() not in STOP and (not english or _replaced(m, old)) and not span:
                rejected.append(old)
    cue = CueText(whole)
    retract = None
    instead = _DROPPED_THEN.search(text) is not None  # "不去日本了 改去韩国" puts it right
    if cue.search(_RETRACT_WORDS) and not instead:
        for found in _retract_pattern().finditer(whole):
            target = next((g for g in found.groups() if g), None)
            if target and _told(whole, found.start()) and _names_something(target):
                retract = target.strip()
                break
    scratch = cue.search(_SCRATCH) and any(
        _told(whole, m.start()) for m in _SCRATCH.finditer(whole)
    )
    names = tuple(named_choices(text))
    return Reading(
        subject=subject_key(text),
        correction=instead or cue.search(_CORRECTION),
        scratch=scratch,
        rejected=tuple(dict.fromkeys(rejected)),
        retract_target=retract,
        names=names,
        hearsay=cue.search(THIRD_PARTY),
        change=cue.search(_CHANGE) or relative_sign(text) != 0,
    )


def mentions(text: str, value: str) -> bool:
    """Does ``text`` name ``value`` (a word, a name or a number as written)?"""
    value = value.strip()
    if not value:
        return False
    if _CJK.search(value):
        # 付费接口 names 别用付费的接口: a 的 between the words changes nothing
        return value in text or value.replace("的", "") in text.replace("的", "")
    olds = find_numbers(value)
    if olds:
        have = find_numbers(text)
        return any(_same_number(o, h) for o in olds for h in have) or _written(value, text)
    return _written(value, text)


def _written(value: str, text: str) -> bool:
    """``value`` stands in ``text`` as a word of its own: not inside a longer Latin word
    or number ("redis" in "缓存用redis", not in "redisson")."""
    return re.search(rf"(?<![A-Za-z0-9_.]){re.escape(value)}(?![A-Za-z0-9_])", text, _I) is not None


def _same_number(a: Value, b: Value) -> bool:
    if a.type != b.type and "number" not in (a.type, b.type):
        return False
    return a.value == b.value and (a.unit is None or b.unit is None or a.unit == b.unit)
