"""Which known tools a clause names: everyday words are tools only in technical company."""

from __future__ import annotations

import pytest

from convmem.memory.subjects import named_choices, owner, read, subject_key, subject_words


@pytest.mark.parametrize(
    ("text", "names"),
    [
        # everyday words in chat name nothing
        ("I've got a few things with sentimental value", ()),
        ("Got it, thanks!", ()),
        ("Painting helps me express how I feel", ()),
        ("I love spring in Japan, the black pines are lovely", ()),
        ("I used to love spring", ()),
        # a verb-like name that does not count lends no company to another one
        ("I got to fetch the kids from school", ()),
        ("I got a puppy, he loves to fetch", ()),
        # the same words as tools
        ("use `got` instead of axios", ("got", "axios")),
        ("we run an express server on port 3000", ("express",)),
        ("We use Express for the API", ("express",)),
        ("switch the formatter to black", ("black",)),
        ("tabs or spaces?", ("tabs", "spaces")),
        ("deploy on render or vercel", ("render", "vercel")),
        ("I've got the tests passing with requests", ("requests",)),
        # names that are not everyday words count as they are
        ("let's move from redis to valkey", ("redis", "valkey")),
        # beside Chinese characters, with no space
        ("数据库用mysql", ("mysql",)),
        ("换成postgres吧", ("postgres",)),
    ],
)
def test_named_choices(text: str, names: tuple[str, ...]) -> None:
    assert named_choices(text) == names


@pytest.mark.parametrize(
    ("text", "target"),
    [
        # instructions withdraw what they name
        ("ok forget the budget thing, she'll use it for years anyway", "budget"),
        ("oh and forget what I said about the sidebar.", "sidebar"),
        ("Also ignore the 6 hour thing, we can swap drivers", "6"),
        ("and scratch the 45 min thing", "45 min"),
        # statements about forgetting withdraw nothing
        ("I'll never forget the day my daughter rode her bike alone", None),
        ("Don't forget to drink water on the hike!", None),
        ("Sometimes I get buried in coursework and forget to eat lunch", None),
        ("Painting really helps forget about the week for a bit", None),
        ("Guess it helps us forget the daily craziness and find inner peace", None),
        ("let us forget the parking budget", "parking budget"),
        ("I'm not gonna forget a single minute of that concert", None),
        ("It doesn't matter if they never wear it, the gift is the thought", None),
        # other words for withdrawing, and a plan called off
        ("scrap the dark mode idea, not worth it right now", "dark mode"),
        ("disregard the airport thing we're renting a car", "airport"),
        ("lake house is off, were staying home", "lake house"),
        ("博物馆不去了", "博物馆"),
        ("IE11那个不算 产品说不用管", "IE11"),
        ("刚才说的预算作废", "预算"),
        # what was said before, not a thing it names: the item just before (a scratch)
        ("之前说的那个不算", None),
        ("cancel that dentist appt, we're switching practices", "dentist appt"),
        ("the design sync is gone, they killed all recurring meetings", "design sync"),
        ("the feature flag for checkout, forget that", "feature flag for checkout"),
        ("ignore what i said about key rotation, turns out", "key rotation"),
        ("周六不用去了", "周六"),
        ("青霉素过敏是我瞎说的", "青霉素过敏"),
        ("gradient checkpointing那个取消吧", "gradient checkpointing"),
        ("晨跑那个计划算了 膝盖疼", "晨跑"),
        ("我算了下能挤出来", None),
        ("鱼油我已经停了", "鱼油"),
        ("聚餐的事当我没说", "聚餐"),
        ("Kafka 迁移先 drop 掉", "Kafka 迁移"),
        ("I cancelled the caterer, we'll cook", "caterer"),
        ("we removed the coverage gate entirely", "coverage gate"),
        # a rule about cancelling or removing withdraws nothing
        ("cancelled only from pending or paid.", None),
        ("removed items are archived for 30 days", None),
        # a long run before "got cancelled", or a part of something said, names no item
        ("its july 31 now the aug slot got cancelled", None),
        ("the first part, ignore that", None),
        # said first, naming the thing in a word or two ("for now" still withdraws it)
        ("scrap the roth for now, it can wait til the card is paid off", "roth"),
        ("also drop the gym line entirely, we both run outside now", "gym line"),
        ("lets ditch the storage unit", "storage unit"),
        ("drop the kids off at 8", None),
        ("drop the users table", None),
    ],
)
def test_only_an_instruction_withdraws(text: str, target: str | None) -> None:
    assert read(text).retract_target == target


@pytest.mark.parametrize(
    ("text", "rejected"),
    [
        ("her nap is at 1, not 12:30", ("12:30",)),
        ("use MinIO rather than localstack", ("localstack",)),
        ("switch to structlog instead of loguru", ("loguru",)),
        ("we moved the standup from 9:30 to 10", ("9:30",)),
        # a thousands separator is part of the value ("1" would name any item with a 1)
        ("oh and daycare is 1,450 not 1,350, i misread the bill", ("1,350",)),
        ("rent went from 1,450 to 1,500", ("1,450",)),
        ("not 3, 4 or 5", ("3",)),
        ("sorry i said 6k down earlier, it's 7,000", ("6k",)),
        # everyday words after "not", "from" or "over" are no value being replaced
        ("It reminds me that we're not alone in this.", ()),
        ("We practise everything, from salsa to hip-hop.", ()),
        ("people from all over the world play it online", ()),
        ("instead of giving up, I signed up for a tutor", ()),
        # the value, then the one it replaces
        ("对了婚期是5月20号 不是18号", ("18号",)),
        ("这个不是问题", ()),
    ],
)
def test_rejected_values_are_values(text: str, rejected: tuple[str, ...]) -> None:
    assert read(text).rejected == rejected


@pytest.mark.parametrize(
    ("text", "correction"),
    [
        ("we're 13 now", True),
        ("the exam moved to May 24", True),
        ("Nine years now, and I still love the pottery wheel.", False),
        ("I've had the cats for 3 years now", False),
        # "right now", "for now", "what to do now" say when, not that a value changed
        ("Right now I make $78k at a place I like", False),
        ("the timeout is 30s for now", False),
        ("that brings our share to $2,060 idk what to do now", False),
        ("it's EUR, GBP and USD now", True),
    ],
)
def test_how_long_something_lasted_is_no_correction(text: str, correction: bool) -> None:
    assert read(text).correction is correction


@pytest.mark.parametrize(
    ("text", "key"),
    [
        # when a value holds is not what it is about, nor how near it is
        ("训练集现在9500条", "训练集"),
        ("订单表现在大概1.2亿行", "订单表"),
        ("我们一共5个人", "我们"),
        ("高峰期 QPS 大概3000", "高峰期 qps"),
        ("并发可以加到 30", "并发"),
        ("currently 192 lb", ""),
        # a setting's identifier or a limit named as a noun, before its value
        ("max-model-len 先给 16384", "max-model-len"),
        ("检索 top_k 3", "top_k"),
        ("make the cap 250k", "cap"),
        ("cap it at 500k rows", "cap"),
        ("max 8", "max"),
        ("limit stays 2Gi", "limit"),
        ("确定是35个人", ""),
        ("房租从下个月起涨到4800了", "房租"),
        ("minSdk 直接提到24。", "minsdk"),
        ("我们 minSdk 是21", "minsdk"),
        # a verb of change, or a word naming only a kind of value, is no subject
        ("改成8月24号", ""),
        ("时间也往后挪到7点半吧", ""),
        # "budget" is a noun after a word, a verb at the start
        ("everyone chipped in so the cabin budget went up to $1,500", ""),
        # who says it is not what it is about
        ("我老婆觉得预算4000就够了", "预算"),
        ("运维那边说日志至少要留30天", "日志"),
        ("my manager said the deadline is the 20th", "deadline"),
        # a setting written as code
        ("actually MAX_WORKERS=8 works better", "max_worker"),
        ("retries: 5", "retry"),
        ("error: connection refused", ""),
        ("according to ops the retention must be 30 days", "retention"),
        ("the cabin budget is $1,200", "cabin budget"),
        # what holds a count, and a name written right before its value
        ("prod has 4 nodes", "prod"),
        ("ttl 30分钟", "ttl"),
        ("concurrency 4.", "concurrency"),
        ("make it 16", ""),
        ("we have 3 kids", ""),
        ("python 3.11", "language"),
        # what someone else moved, not the word after it
        ("they pushed the launch back to friday", "launch"),
        ("ops moved the standup up to 9:15", "standup"),
        ("the closing got pushed to oct 14", "closing"),
        # an adverb or an opener before the value leads no subject
        ("lr 应该是2e-5", "lr"),
        ("对了是21号入住", ""),
        ("大概15桌", ""),
        # a verb and its particle are one thing, however written
        ("check in is at 3pm", "checkin"),
        ("check-out is at 11am", "checkout"),
        # a speaker named in Latin letters is not the subject either
        ("cofounder说预算是5000", "预算"),
    ],
)
def test_the_subject_of_a_changed_value(text: str, key: str) -> None:
    assert subject_key(text) == key


def test_a_value_trimmed_to_another_is_a_change() -> None:
    assert read("let's trim groceries to 650").change
    assert not read("trim the hedges on saturday").change


def test_an_identifier_holds_the_words_people_call_it_by() -> None:
    assert subject_words("gradient_accumulation_steps") == {
        "gradient_accumulation_steps",
        "gradient",
        "accumulation",
        "steps",
    }
    # its short parts are too common to name it ("max" of max_overflow and max_connections)
    assert subject_words("max_overflow") == {"max_overflow", "overflow"}


@pytest.mark.parametrize(
    ("text", "who"),
    [
        ("我的航班是12号", ""),
        ("我妹妹的航班是14号", "妹妹"),
        ("my sister's flight is on the 14th", "sister"),
        ("his flight lands at 6", "his"),
        ("my flight lands at 6", ""),
    ],
)
def test_whose_thing_a_clause_names(text: str, who: str) -> None:
    assert owner(text) == who


def test_a_slip_then_the_word_meant_scratches_the_item_before() -> None:
    assert read("是王玮", "打错了").scratch
    assert not read("520好记", "我记错了").scratch


@pytest.mark.parametrize(
    ("text", "hearsay"),
    [
        ("dana from product thinks march 3 is unrealistic", True),
        ("the dba says brin is the right call", True),
        ("he's claiming he only owes 1400", True),
        ("师兄觉得64太大了", True),
        ("我们组长看了下说 2048 太短了", True),
        ("my trainer disagrees with the plan", True),  # (not through a "she says" after it)
        ("my husband really doesn't want the red one", True),
        ("the landlord's saying I owe $300 of it", True),
        ("我老婆不同意", True),
        ("修车师傅说刹车片没问题", True),
        ("小李说要改成飞机", True),
        ("client just emailed saying we agreed on 5 rounds", True),
        ("Maria says we're 21 people now", True),
        ("I think march 3 works", False),
        ("it says 5 on the label", False),
        ("老实说我不想去", False),
        ("I just emailed saying the meeting is at 11am", False),
        ('Priya said, "that film is wonderful"', False),  # a transcript's speaker
        ("Google says 5", False),
        # a name typed in lower case, someone from a team; a document is no person
        ("btw priya says the SLO is 300ms", True),
        ("jane from devops says we have to use the self-hosted runners", True),
        ("lease says july 31 actually", False),
        ("ticket says 7:40am not 7:10", False),
    ],
)
def test_another_persons_word(text: str, hearsay: bool) -> None:
    assert read(text).hearsay is hearsay
