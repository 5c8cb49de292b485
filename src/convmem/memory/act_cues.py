"""The vocabulary of dialogue acts, English and Chinese, as data.

Each pattern names one cheap, readable sign of what a clause does (a question, a
request to the assistant, a standing rule, a commitment, a liking, an undecided
choice, a feeling, narration …). :mod:`convmem.memory.acts` turns their presence
into features; nothing here decides anything on its own.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE
CJK = re.compile(r"[\u3400-\u9fff]")


# --- English --------------------------------------------------------------------------------

ACK = re.compile(
    r"^(?:ok(?:ay)?|k|kk|sure|thanks?(?: you)?(?: so much| a lot)?|thx|ty|cheers|great|cool|nice"
    r"|perfect|awesome|amazing|got it|gotcha|sounds good|sounds great|looks good|lgtm|makes sense"
    r"|yes|yeah|yep|yup|no|nope|nah|right|exactly|correct|true|fair enough|i see|oh|ah|hmm+|um+"
    r"|lol|lmao|haha+|hi|hello|hey(?: there)?|good (?:morning|evening|night|afternoon)|bye"
    r"|see you|np|no worries|will do|done|yes please|please do|go ahead|let's do it|do it"
    r"|that works|works for me|that's it|that's all|that helps|this helps|love it|wow"
    r"|interesting|not bad|fine|alright|good|much better|better|same|agreed|indeed|welp"
    r"|ok that works|ok cool|ok thanks|great thanks|thanks again|you're the best)"
    r"(?:[\s,!.]+(?:thanks|thank you|man|dude|buddy|mate|again|so much))*[\s!.~]*$",
    _I,
)
FEELING = re.compile(
    r"^(?:ugh|argh|omg|ugh+|wow|yay|phew)\b"
    r"|\bi(?:'m| am) (?:so |really |kinda |a bit |super |pretty |very )*(?:stressed|worried|excited"
    r"|tired|happy|annoyed|nervous|frustrated|confused|lost|overwhelmed|sorry|glad|scared"
    r"|exhausted|curious|thrilled|relieved|anxious|bored|sick of|fed up|not sure how i feel)\b"
    r"|\b(?:this|that|it) (?:is|was|'s) (?:so |really |kinda )*(?:annoying|stressful|frustrating"
    r"|weird|crazy|insane|ridiculous|amazing|awesome|great|helpful|confusing)\b"
    r"|\bi (?:hate|love) (?:this|that|it)\b|\bdriving me (?:crazy|nuts)\b"
    r"|\bi want to make sure\b|\bi just want\b|\bi hope\b|\bfingers crossed\b|\bwish me luck\b"
    r"|\b(?:burned out|burnt out|swamped|exhausted|stressed out|fed up|a mess|a nightmare|chaos)\b"
    # a verdict on something: "the doordash is bad", "prices in june are mad", "the ending
    # is kinda weak"
    r"|\b(?:is|are|was|were|'s|looks?|sounds?|seems?)\s+(?:(?:so|really|kinda|kind of|pretty"
    r"|super|too|way too|a bit|just|honestly|lowkey|totally)\s+)*(?:bad|awful|terrible|horrible"
    r"|mad|insane|crazy|interesting|weird|amazing|awesome|annoying|boring|weak|rough|brutal"
    r"|wild|nuts|ridiculous|silly|ugly|gross|lame)\b",
    _I,
)
QUESTION_START = re.compile(
    # (after a filler: "now how do I tell my boss", "so what should we do")
    r"^(?:(?:now|so|ok|okay|and|but|also|well|then|hmm|alright)[\s,]+)*(?:what|what's|whats|how|how's|which|why|when|where|who|whom|whose|is|are|was|were|am|do|does"
    r"|did|can|could|would|will|should|shall|may|might|have|has|had|isn't|aren't|doesn't|don't"
    r"|didn't|won't|wouldn't|shouldn't|any (?:idea|ideas|thoughts|chance|way)|thoughts"
    r"|is there|are there|any|anything|idk (?:if|whether)|wonder(?:ing)? (?:if|whether)"
    r"|i wonder|not sure (?:if|whether) (?:you|it|this|that))\b"
    # "do 1 and 2", "do the second one": an instruction, not "do you…"
    r"(?!(?<=\bdo)\s+(?:\d|the (?:first|second|third|last)\b|option\b))"
    # "had to move it to 3001", "have to be done by friday": a need told, not asked
    r"(?!(?<=\bhave)\s+to\b)(?!(?<=\bhas)\s+to\b)(?!(?<=\bhad)\s+to\b)",
    _I,
)
REQUEST = re.compile(
    r"^(?:please\s+|pls\s+|plz\s+|kindly\s+)?(?:can|could|would|will) (?:you|u)\b"
    r"|^(?:please|pls|plz)\s+(?!always|never|don't|do not|only|keep|make sure|use|stick|avoid)"
    r"|\b(?:help me|i need you to|i'd like you to|i want you to|let me know|tell me|show me"
    r"|give me|walk me through|remind me|find me|get me|send me|draft|write me|make me|quote me"
    r"|recommend|suggest (?:a|an|some|me|something|any)|explain|summarize|double[- ]check|look into"
    r"|take a look|have a look|figure out|can we|could we|shall we)\b"
    r"|^(?:fix|write|add|create|implement|refactor|update|change|remove|delete|rename|run|check"
    r"|test|debug|look at|investigate|review|find|search|list|show|explain|compare|calculate"
    r"|convert|translate|generate|build|draft|plan|book|make|give|put together|research"
    r"|summarize|outline|estimate|help|try|go through|redo|rewrite|clean up|set up|install"
    r"|move|split|merge|revert|bump|upgrade|downgrade|commit|push|open|close|restart|deploy"
    r"|rerun|re-run|retry|print|log|paste|read|grep|profile|benchmark)\b",
    _I,
)
#: Verbs whose imperative sets a standing rule rather than asking for a task now.
STANDING_IMPERATIVE = re.compile(
    r"^(?:please\s+)?(?:always|never|don't|do not|dont|stop|avoid|only|keep|stick (?:to|with)|use"
    r"|prefer|make sure|ensure|remember|assume|treat|stay|limit|cap|default to|leave|respect"
    r"|follow|target|aim for|budget|reply|answer|respond|write (?:all|every|in)|name|put all"
    r"|no more|no|nothing|all|every|each|skip|ignore)\b",
    _I,
)
STANDING = re.compile(
    r"\b(?:always|never|from now on|going forward|moving forward|from here on|for now on|every time"
    r"|whenever|each time|in general|as a rule|at all times|by default|for all|all new|any new"
    r"|every new|ever again|anymore|from this point|for the rest of|throughout|across the board)\b",
    _I,
)
MODAL = re.compile(
    r"\b(?:must|mustn't|must not|has to|have to|had better|need to|needs to|needn't|required|"
    r"requirement|mandatory|is not allowed|are not allowed|aren't allowed|isn't allowed|not allowed"
    r"|can't|cannot|can not|shouldn't|should not|should|shall|may not|ought to|forbidden|prohibited"
    r"|no more than|at most|at least|no later than|no earlier than|under no circumstances"
    r"|is a must|a hard (?:limit|requirement|constraint)|non-negotiable|dealbreaker|deal-breaker"
    r"|has to be|have to be|needs to be|need to be|it's important that|make sure|ensure|only)\b",
    _I,
)
REQUIREMENT_NOUN = re.compile(
    r"\b(?:budget|limit|cap|deadline|max(?:imum)?|minimum|(?<![\d.]\s)(?<![\d.])min"
    r"|ceiling|threshold|quota|sla|slo"
    r"|requirement|constraint|rule)\b|预算|上限|下限|截止|最晚|最迟|限额|封顶"
    r"|要求(?=[是为]\s*[\d两一二三四五六七八九十])",
    _I,
)
COMMIT = re.compile(
    r"\b(?:let's go with|lets go with|let's use|lets use|let's do|let's pick|let's book|let's take"
    r"|let's stick with|let's keep|let's switch|let's move"
    r"|let's make it|let's say|go with|going with"
    # chat shorthand before an option: "going w the 17k one", "ok going w contractor 2",
    # "going w/ postgres" (not "going w my mom to the dentist", "go w the flow lol")
    r"|go(?:ing)? w(?=/?\s+(?:the\s+)?(?:[\w$.#-]+\s+){0,2}one\b"
    r"|/?\s+(?:(?:option|plan|#)\s*[\da-z]|[a-z]+\s+#?\d)\b\s*(?:[,.;!]|$))"
    r"|we(?:'ll| will| are going to|'re going to) (?:go with|use|take|do|pick|book|stick|keep"
    r"|switch|move|ship|deploy|launch|buy)"
    r"|i(?:'ll| will|'m going to| am going to) (?:go with|take|do|pick|book|buy|get|use|stick"
    r"|keep|accept|sign|try|order|choose|rent|switch|move)"
    r"|(?:i|we)(?:'ve| have)?(?: (?:more or less|pretty much|basically|finally|already|just"
    r"|mostly|kind of|kinda|sort of|tentatively))?"
    r" (?:decided|chose|chosen|picked|selected|booked|bought|ordered|"
    r"reserved|accepted|signed|settled on|went with|committed to|switched to|moved to|"
    r"agreed (?:on|to)|paid|purchased|registered|enrolled|applied|rented|leased|scheduled|"
    r"confirmed|locked in|finalized|opted for|landed on|ended up (?:with|going with|choosing))"
    r"|(?:the )?decision is|decided:|final answer|that's decided|it's settled"
    r"|(?:i'm|i am|we're|we are) set on|put (?:down )?(?:a |the )?deposit"
    # chat drops the subject: "bought the Brooks, $160", "called them and accepted" (not
    # "ordered by created_at", "registered users get 10 GB", "applied the migration")
    r"|^(?:(?:ok|so|well|and|just|finally|already|also|then)\s+)*(?:(?:bought|booked|ordered"
    r"|reserved|rented|leased|accepted|hired|adopted|purchased|paid for|chose|locked in)"
    r"\s+(?:the|a|an|my|our|his|her|their|this|that|one|two|three|both|\d|\$)"
    r"|signed (?:up|the lease|the contract|the offer)|applied (?:for|to)|went with"
    r"|settled on|got (?:the|a|an) [\w' -]{1,30}\bone)"
    r"|\b(?:and|then|so) accepted(?:\s+(?:it|the offer|the job))?\s*[.!]*$"
    r"|i(?:'m| am) (?:taking|going with|getting|booking|buying|doing|sticking with|keeping)"
    r"|we(?:'re| are) (?:taking|going with|getting|booking|buying|doing|sticking with|keeping"
    r"|switching to|moving to|using)\b(?=.*\b(?:instead|now|from now|going forward)\b)"
    # a plan told: "plan is to put redis in front of it", "we're gonna redo the cabinets"
    # (not "we're gonna need help", "we're gonna be late"; "i'm gonna go ice this" is
    # more often a passing remark than a plan)
    r"|(?<!\bif the )(?<!\bif our )(?<!\bif my )\bplan is to"
    r"|(?<!\bwhat )(?<!\bif )(?<!\bhow )(?<!\bwhen )\bwe(?:'re| are) gonna (?!(?:be|need|have"
    r"|want|hate|love|miss|lose|die|cry|say|ask|guess|go|get|do|end up)\b)\w+"
    r")\b",
    _I,
)
PREFER = re.compile(
    r"\b(?:i|we) (?:(?:really|kinda|kind of|much|would|'d|do|generally|usually|strongly|also)\s+)*"
    r"(?:prefer|rather|like|love|enjoy|hate|dislike|can't stand|don't like|do not like|don't love"
    r"|am not a fan of|'m not a fan of|'m a fan of|am a fan of|lean towards?|favor|favour)\b"
    r"|\b(?:i'm|i am|we're|we are) (?:(?:kind of|kinda|really|still)\s+)?leaning"
    r" (?:toward|towards|to)\b"
    r"|\b(?:my|our) (?:preference|favorite|favourite|go-to)\b|\bpreferably\b|\bideally\b"
    r"|\bwould be (?:nice|great|ideal|better)\b"
    r"|\bi'd (?:love|like) (?:it|if|a|an|the|to have|some)\b"
    r"|\bnot a (?:big )?fan of\b|\bi'm (?:more )?(?:a|an) \w+ (?:person|guy|girl|type)\b"
    r"|\b(?:rather not|if possible|if we can|nice to have|bonus if|bonus points)\b",
    _I,
)
OPEN = re.compile(
    r"\b(?:still|yet to|haven'?t|have not|hasn'?t|not yet|didn'?t) (?:decide|decided|deciding|pick"
    r"|picked|choose|chosen|settle|settled|figured out|made up (?:my|our) mind|sure)\b"
    r"|\b(?:torn between|deciding between|choosing between"
    r"|undecided|up in the air|tbd|to be decided"
    r"|on the fence|can't decide|cannot decide|can't make up|not sure (?:whether|if|which|between)"
    r"|unsure (?:whether|if|which)|weighing|debating (?:whether|between)|either\b.*\bor\b.*\byet)\b"
    r"|\b(?:need|have) to (?:decide|choose|pick|figure out) (?:whether|between|which|if)\b",
    _I,
)
#: "still not sure if we should sign 12 or 15 months", "idk if i should keep it at ally or
#: move it": the person's own choice, not made yet (whatever its modal says)
UNSURE_CHOICE = re.compile(
    r"^(?:(?:still|honestly|tbh|but|and|so|ok|okay|also|hmm)[\s,]+)*"
    r"(?:(?:i'?m|im|we'?re)\s+)?(?:still\s+)?"
    r"(?:not sure|unsure|idk|i don'?t know|i dont know|dunno|can'?t decide|cant decide)\s+"
    r"(?:if|whether)\s+(?:(?:i|we)\s+(?:should|want to|wanna|need to|ought to)|to)\b",
    _I,
)
HYPOTHETICAL = re.compile(
    r"^(?:if|unless|suppose|supposing|assuming|in case|what if|imagine|maybe|perhaps|possibly"
    r"|probably|i guess|i think maybe|not sure|i might|we might|might|could|would|it would"
    r"|it might|it could|hopefully|worst case|best case)\b"
    r"|\b(?:might|could|would) (?:be|have|need|want|try|work|help|go|end up)\b"
    r"|\bif (?:we|i|you|it|they) (?:had|were|could|did)\b",
    _I,
)
NARRATION = re.compile(
    r"\b(?:yesterday|last night|this morning|earlier today|just now|a minute ago|an hour ago"
    r"|the other day|last time|last week|earlier|just|used to)\b"
    r"|^(?:i|we) (?:tried|ran|ran into|ran it|ran the"
    r"|did|saw|got|noticed|found|checked|spent|looked"
    r"|restarted|reinstalled|deleted|removed|added|changed|updated|pushed|merged|opened|clicked"
    r"|went|came|called|talked|asked|told|heard|read|watched|had|was|were|missed|forgot|lost"
    r"|broke|fixed|managed|finished|started|wanted|thought|figured|realized|tested)\b"
    r"|^(?:it|this|that|the (?:build|test|tests|app|server|job|deploy|script|page|ci|pipeline))"
    r" (?:crashed|failed|broke|worked|hung|timed out|died|stopped|returned|threw|gave|printed"
    r"|showed|keeps|kept|still|now|just|seems|looks|doesn't|didn't|won't|isn't)\b",
    _I,
)
LASTING_FACT = re.compile(
    r"\b(?:i|we)(?:'m|'re| am| are) (?:on|using|running|based in|located in|in|at|from|a|an"
    r"|\d+|allergic|vegetarian|vegan|married|pregnant|retired|remote|self-employed|freelance"
    r"|flying|leaving|arriving|moving|staying|visiting|traveling|travelling|going)\b"
    r"|\b(?:i|we) (?:use|run|have|live|work|own|rent|earn|make|pay|host|deploy|ship|support"
    r"|target|store|keep|need|fly|leave|arrive|land|start|graduate|move|owe|get paid)\b"
    r"|\b(?:my|our|the|his|her|their|its|this|that)\b[\w\s/'.-]{0,40}?\b(?:is|are|was|were|has"
    r"|have|lives|runs|sits|costs|takes|uses|holds|contains|equals|comes to|starts|ends|opens"
    r"|closes|leaves|lands|arrives|departs|expires|renews|is due)\b"
    r"|\b(?:there (?:is|are)|it's|it is|that's|we've got|i've got|i have|we have)\b"
    # when something bare-named happens: "flight leaves at 7:40am", "checkout closes at 11"
    r"|^(?:[\w'-]+\s+){1,2}?(?:leaves|departs|lands|arrives|starts|ends|opens|closes|begins"
    r"|expires|is due)\s+(?:at|on|by|around)\b"
    # where something bare-named runs: "CI is on github actions", "prod runs on k8s"
    r"|^[\w.-]+(?:\s[\w.-]+)?\s(?:(?:is|are|runs?|lives|sits)\s(?:on|in|behind|with|under|via)"
    r"|uses?)\b"
    r"|\b(?:he|she|they)(?:'s|'re| is| are) (?:allergic|vegetarian|vegan|diabetic|pregnant|due"
    r"|lactose|celiac|retired|into|really into|very|\d+|from|based in)\b"
    r"|\b(?:he|she|they) (?:hates?|loves?|likes?|can't stand|doesn't eat|won't eat|doesn't drink"
    r"|only speaks|speaks|works|lives)\b",
    _I,
)
#: A value or option accepted: "TTL 60s is fine", "180ms is ok", "PyJWT 就行", "丝巾可以".
SETTLES = re.compile(
    r"\b(?:is|are|'s|sounds|seems|should be|would be|will be)\s+(?:fine|ok|okay|good|enough|right"
    r"|plenty|perfect|great)\b|\bshould (?:do|cover|work|be enough)\b|\bworks for (?:me|us)\b"
    r"|\b(?:then|it is|it's)\s*$|^(?:go|going) with\b|^(?:just|only)\s+\w+"
)
ZH_SETTLES = re.compile(
    r"(?:就行|就好|可以了?|行了?|够了|没问题|也行|挺好|不错)[吧啊呀的了。！!～~]*$|^就(?:用|选|定|要|按)"
)
#: Someone else's rule the person relays: "my wife says", "ops froze", "电商那边要我".
THIRD_PARTY = re.compile(
    r"\b(?:my|our|the)\s+(?:wife|husband|partner|boss|manager|lead|team|landlord|doctor|dietitian"
    r"|physio|school|hoa|client|customer|legal|security|ops|finance|cto|ceo|pm|dba|mom|dad|parents"
    r"|company|employer|insurer)\s+(?:says?|said|wants?|needs?|requires?|insists?|froze|told|asked)\b"
    r"|\b(?:legal|security|ops|finance|compliance|the client|the customer|they)\s+(?:wants?|needs?"
    r"|requires?|says?|froze|insists?)\b",
    _I,
)
ZH_THIRD_PARTY = re.compile(
    r"(?:老公|老婆|老板|领导|主管|医生|老师|学校|公司|客户|运维|安全|法务|财务|产品|房东|爸|妈|那边)"
    r"(?:说|要求|要我|让我|规定|不让|不给|只给|刚说)"
)
#: A commitment in other words: signed up, reserved, "I'll ask for", "报了", "挂了号", "先不做".
COMMIT_MORE = re.compile(
    r"\b(?:signed up|reserved|registered|enrolled|i'll ask for|i'll throw|i'll put|i'll set aside"
    r"|i'm putting|we're moving|we're getting|we're not (?:renewing|doing|going)|not renewing"
    r"|we'll skip|skip the|dropping|i'm dropping|we're dropping|i picked|picked up)\b",
    _I,
)
ZH_COMMIT_MORE = re.compile(
    r"(?:报了|挂了|订了|定在|准备|我去|先用|先上|先不(?:开|做|搞|上|管)|这期不做|不做了|放弃|交了定金|下单)"
)
#: How something felt, said after "must have been": a guess at another's experience.
_FEELING = (
    r"(?:so|really|very|quite|pretty|tough|hard|rough|fun|great|nice|lovely|amazing"
    r"|awesome|incredible|wonderful|scary|terrifying|sad|crazy|wild|intense|special"
    r"|stressful|emotional|overwhelming|exhausting|difficult|painful|beautiful|cool"
    r"|exciting|rewarding|frustrating|awful|terrible|nerve-wracking|nerve-racking"
    r"|magical|memorable|surreal|inspiring|fulfilling|hectic|busy|proud|relieved"
    r"|thrilled|devastated|heartbreaking|touching|meaningful|unforgettable|stunning"
    r"|gorgeous|delicious|peaceful)"
)
#: A guess or a feeling phrased with a modal, not an obligation: "must have lost the
#: index", "someone must have skipped step 4", "that must have been the vacuum", "it can't
#: be the lock then", "it must be a caching issue", "the bug must be in the parser", "you
#: must be sick of this", "I can't believe it ran twice", "can't wait to see it". Kept
#: narrow, since the same words make rules: "contractors must have signed the NDA", "it
#: must be a UUID", "it must be a string containing only digits", "there must be a test
#: for every fix" and "this can't wait until Monday" stay rules. Its words (all but the
#: subject, ``who`` or ``whose``) are taken out before the modal and "needs" cues and the
#: clause's words are read.
EPISTEMIC = re.compile(
    # no subject at all, or one that names no one in charge of anything
    r"^(?:(?:hm+|oh|ah|well|ok|so|yeah|lol|welp)[\s,]+)*must(?:'ve|\s+have)\s+(?:been\b"
    r"|(?:[a-z]+(?:ed|en)|lost|left|sent|built|hit|got|gotten|forgot|broke)\s+(?:the|a|an|it"
    r"|that|this|my|our|your|his|her|their|some|up|out|in)\b)"
    r"|\bmust've\b"
    r"|\b(?P<who>someone|somebody|something|it|that|this|i|we)\s+must\s+have\s+(?:been(?=\s+"
    rf"(?:the|a|an|some|\w+ing|{_FEELING})\b)|(?!been\b)[a-z]+ed\b|gone|got|gotten|hit|lost"
    r"|left|forgot|forgotten|broken|overwritten|shot|felt|looked|seemed|sounded)\b"
    # another person's past as the speaker pictures it: "they must have felt so proud"
    rf"|\b(?P<whom>they|you|he|she)\s+must(?:'ve|\s+have)\s+(?:been\s+{_FEELING}|felt|looked"
    r"|seemed|sounded|had\s+(?:a blast|a great time|a good time|so much fun|fun|such a))\b"
    # a subject and a state, or a culprit: "it must be a caching issue", "that can't be right"
    r"|\b(?P<whose>it|that|this|he|she|they|you)\s+(?:must|can't|cannot|can not|couldn't)\s+be"
    r"\s+(?:something|someone|why|because|caused|coming from|tired|sick|bored|busy|kidding"
    r"|joking|thinking|worried|proud|happy|glad|excited|relieved|exhausted|frustrating|annoying"
    r"|exhausting|right(?![\w-])|it\b|it's|(?:the|a|an)\s+(?:[\w-]+\s+){0,2}?(?:issue|problem"
    r"|bug|culprit|reason|cause|coincidence|typo|race|leak|glitch|fluke)\b"
    r"|(?:the|a|an)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:then|again|lol|haha)\b)"
    r"|\b(?:bug|problem|issue|culprit|cause|fault)\s+(?:must|can't|cannot)\s+be\s+(?:in|on|with"
    r"|from|somewhere|the|a|that|this)\b"
    r"|\bthere\s+must\s+be\s+(?:a|an|some)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:somewhere|going on)\b"
    r"|\bcan(?:'t|not|\s+not)\s+(?:believe|imagine|picture|thank|help but|get over|wait to\b"
    r"|wait\s*[!.]*$)"
    r"|\bcouldn't\s+have\b",
    _I,
)
#: A short instruction that names what to use: "use JSON", "ok go with pnpm", "stick with
#: vitest then" (the model learned the tool names it saw; an unseen one scored nothing).
USE_NAMED = re.compile(
    r"^(?:(?:ok(?:ay)?|so|then|just|fine|alright|no|nah|nope|i disagree)[\s,]+)*"
    r"(?:let'?s\s+)?(?:use|go with"
    r"|switch to|stick with|stay with|keep using)\s+(?!(?:it|this|that|them|these|those|one"
    r"|the same|something|anything|whatever|what|me|us|you|him|her|your|my|our|their|his"
    r"|caution|judg(?:e)?ment|imagination|common sense|head|brain|heart|gut)\b)"
    r"[\w.+#/-]+(?:\s+[\w.+#/-]+){0,2}"
    r"(?:\s+(?:then|instead|please|pls))?\s*[.!]*$",
    _I,
)
#: A decision said in so many words: "we decided to use Go 1.22", "我们决定用 Python 3.12
#: 写后端" (a version number had made the model read the second as a fact).
DECIDED = re.compile(
    # what to use, build or buy, not a nap or an ice cream ("I decided to treat myself")
    r"^(?:(?:ok|so|well|anyway)[\s,]+)*(?:we|i)(?:'ve| have)?\s+(?:finally\s+)?decided\s+"
    r"(?:on\b(?!\s+a\s+whim)|to\s+(?:use|go with|switch|move|migrate|keep|drop|stick with|build"
    r"|buy|book|rent|hire|sign|take the|pick|choose|adopt)\b)"
    # "Decided: Hetzner.", "final call - postgres"
    r"|^(?:decided|decision|final call|verdict)\s*[:：\-–—]\s*\w"
    r"|^(?:那)?(?:我们|我|咱们)?(?:最后|最终|已经)?决定(?:了)?[，,\s]*(?:用|选|去|买|要|做|改|换|上"
    r"|采用|走)",
    _I,
)
#: Another person's view, told: "my husband thinks it'll get dusty", "my wife thinks we
#: don't need the parking anymore". What they think is no rule or choice of the person's.
OTHERS_VIEW = re.compile(
    r"^(?:(?:hmm+|well|but|and|so|also|plus|though|oh)[\s,]+)*(?:my|our)\s+(?:[\w-]+\s+){1,3}?"
    r"(?:thinks|believes|feels|reckons|figures|suspects)\b",
    _I,
)
#: A requirement stated with "needs": "the hotel needs free parking", "it needs CarPlay".
NEEDS = re.compile(
    r"\b(?:needs|requires|must have|has to have)\s+(?!to\b|help\b|you\b|me\b|us\b)\w", _I
)
#: Words another person or a document says or thinks ("my boss says…", "the docs say…",
#: "我妈觉得…"): what follows is theirs, not the person's rule.
REPORTED = re.compile(
    r"\b(?:says?|said|thinks?|thought|believes?|feels?|claims?|insists?|reckons?)\b"
    r"|说|觉得|认为",
    _I,
)
#: A line of a log or an error message pasted alone: "Error: parameter --region is mandatory".
LOG_LINE = re.compile(r"^\W*(?:error|warning|warn|fatal|exception|info|debug)\b", _I)
#: A thing the person will not do without: "laundry in the building is a must",
#: "long distance is a dealbreaker", "parking is non-negotiable".
MUST_BE = re.compile(
    # a thing named, not "it's a must-have in my life"
    r"(?<!\bit)(?<!\bit )(?<!\bthis)(?<!\bthis )(?<!\bthat)(?<!\bthat )"
    r"\b(?:is|are|'s|'re)\s+(?:(?:a|an|the)\s+)?(?:(?:absolute|total|hard|real|big)\s+)?"
    r"(?:must(?:[- ]have)?|deal[- ]?breaker|non[- ]?negotiable|mandatory|required)\b"
    # not a tip or a cheer ("Barcelona is a must-visit city!", "a must learn for…")
    r"(?!-\w|\s+(?:read|see|visit|try|learn|watch|do|buy|listen|eat)\b)(?!.*[!?]\s*$)",
    _I,
)
#: What must keep working, said as a need: "we still need IE11 support", "we need to
#: support safari 15", "we need python 3.8 compatibility" (a platform, a version or a way
#: of use: not "we need tech support").
NEEDS_SUPPORT = re.compile(
    r"^(?:(?:so|and|also|ok|but|plus|oh|well)[\s,]+)*(?:we|we'd|we'll|i)\s+"
    r"(?:(?:also|still|really|definitely|absolutely|unfortunately)\s+)*"
    r"(?:need|have|must)\s+(?:to\s+(?:support|keep supporting)\s+|(?=[\w.+ -]{2,30}?\s(?:support"
    r"|compatibility|compat)\b))"
    # a platform, a version or a way of use (not "tech support", "more support")
    r"(?=[\w.+ -]{0,20}?(?:\d|\b(?:ie|safari|firefox|chrome|edge|ios|android|windows|macos"
    r"|linux|arm|python|node|java|rtl|offline|mobile|dark mode|i18n|screen readers?|a11y)\b))",
    _I,
)
#: A requirement stated as what we need: "we need a room that sleeps 4", "we'd also
#: need a rental car for one day" (only with a value, see ``acts.guide_rule``: "we need
#: a better error message here" is work asked for now).
WE_NEED = re.compile(
    r"^(?:(?:so|and|also|ok|okay|but|plus|oh|well|then|hotels?|flights?)[\s,:]+)*"
    r"(?:we|we'd|we'll|we would|we will)\s+"
    r"(?:(?:also|still|really|definitely|absolutely|only|just|probably|will)\s+)*"
    r"need\s+(?!(?:to|you|your|help|advice|ideas?|suggestions?|it|this|that|them|him|her|me"
    r"|us|more time|more people|people|folks|someone|somebody|sleep|rest)\b)"
    r"(?!.*!\s*$)(?:(?:a|an|some)\s+)?+"  # possessive: an article is never given back
    r"(?!(?:break|minute|moment|sec|second|nap|drink|vacation|holiday|hand|word|favou?r"
    r"|little help|bit of help|few ideas|new idea"
    # a piece of work asked for now ("we need a fix for the login bug", "a test for this")
    r"|(?:quick\s+|better\s+|proper\s+)?(?:new|fix|patch|hotfix|workaround|tests?|migration"
    r"|review|name|script|helper|ticket|pr|refactor|way|solution|function|method|check|look"
    r"|docs?|readme|changelog|commit|branch))\b)(?!.*\bfor (?:this|that|it)\b)\w",
    _I,
)
#: Chinese "X 用 Y": a named tool chosen for a role ("日志库用 loguru", "缓存先上 Redis").
ZH_NAMED_CHOICE = re.compile(
    r"^[\u3400-\u9fff]{1,10}\s*(?:就|先|还是|统一|都)?(?:用|上|选|换成|改用)\s*[A-Za-z][\w.+-]*"
)
#: A Chinese statement that is a subject and a value: "超时时间30秒", "预算3000元".
ZH_SUBJECT_VALUE = re.compile(
    r"^[\u3400-\u9fffA-Za-z_ ]{2,12}?\s*(?:是|为|要|在)?\s*[\d零一二两三四五六七八九十百千万]"
)
SECOND_PERSON_RULE = re.compile(
    r"^(?:you|u) (?:must|should|need to|have to|can't|cannot|shouldn't|mustn't|may not|always|never"
    r"|only)\b",
    _I,
)
SELF_SUBJECT = re.compile(r"^(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'd|we'll|my|our)\b", _I)

# --- Chinese ---------------------------------------------------------------------------------

ZH_ACK = re.compile(
    r"^(?:好的?|好吧|好嘞|好哒|好滴|行|行吧|可以|没问题|谢谢(?:你|您|啦|了)?|多谢|感谢|辛苦了|收到|明白了?"
    r"|懂了|知道了|了解|嗯+|哦+|噢+|哈+|嘿嘿|呵呵|对|对的|是的|是啊|没错|ok|OK|棒|太棒了|厉害|不错"
    r"|你好|您好|早上好|晚上好|拜拜|再见|好的谢谢|好的呀|就这样吧?|那就这样|ok的|嗯嗯好的|哇|太好了)"
    r"[啊呀呢吧哈哦啦嘛～~!！。.，,\s]*$"
)
ZH_FEELING = re.compile(
    r"(?:好累|好烦|烦死了|累死了|头疼|头大|崩溃|太难了|郁闷|开心|紧张|担心|焦虑|纠结死了|无语|服了|忙疯了|一团乱|乱成"
    r"|太贵了吧|好贵|吓死|我好|希望(?!你)|但愿|祝我)"
)
#: "A not A" at the end: 冷不冷, 去不去 (not 重疾买不买我再想想, an undecided choice).
_ZH_A_NOT_A = r"([\u3400-\u9fff])不\1[啊呀呢。？?\s]*$"
ZH_QUESTION = re.compile(
    r"(?:吗|么|嘛|呢)[？?。!！\s]*$|[？?]\s*$"
    r"|^(?:怎么|怎样|如何|为什么|为啥|哪|哪个|哪些|哪里|哪儿|什么|啥|多少|几|是否|是不是|有没有|能不能"
    r"|可不可以|要不要|会不会|该不该|需不需要|用不用|行不行|好不好|对不对)"
    r"|(?:怎么样|怎么办|如何|多少钱|多久|多长时间|几点|几个|哪个好|选哪个|是不是|有没有|能不能|可不可以"
    r"|会不会|要不要|行不行|对不对|好不好)"
    # asked in the middle or at the end: "13套是啥概念", "相纸哪个贵", "一天得吃多少盐。"
    r"|是(?:啥|什么)(?:概念|意思|水平|情况|区别|东西)?[啊呀呢。！!\s]*$"
    r"|(?<!没)(?<!没有)(?:啥|什么)(?:区别|概念|意思|水平)"
    r"|哪个(?:更|比较)?(?:贵|便宜|好|划算|合适|快|大|小)|多少[\u3400-\u9fff]{0,2}[啊呀呢。\s]*$"
    r"|(?:没事|对)吧[？?。\s]*$"
    # "能住什么酒店", "该选哪家": which one, asked at the end
    r"|(?:能|可以|该|去|住|吃|买|选|订)[\u3400-\u9fff]{0,3}(?:什么|啥|哪些|哪个|哪家|哪里|哪儿)"
    r"[\u3400-\u9fff]{0,4}[啊呀呢。？?\s]*$"
    # "能吃几次" asks; "我要请假几天" says "a few days"
    r"|(?:能|可以|该|得)[\u3400-\u9fff]{0,2}几(?:次|个|天|点|岁|号|年|月|块|分钟|小时|周)[啊呀呢。？?\s]*$"
    rf"|{_ZH_A_NOT_A}"
)
#: A Chinese clause that ends by asking: "…能买吗", "…冷不冷" (an English one that ends
#: with "?" is as often a statement run on into a question: "…due Sept 15 right?").
ZH_ENDS_ASKING = re.compile(
    rf"吗[?？。!！~～\s]*$|{_ZH_A_NOT_A}"
    # "缓存用redis还是用memcached呢": which of the two, asked
    r"|(?<![我们也就都是])还是[^，,。]{1,20}呢[?？。!！~～\s]*$"
)
ZH_REQUEST = re.compile(
    r"^(?:请|麻烦|劳驾)?(?:你|您)?(?:帮我|帮忙|给我|替我|请你|请帮|帮|能否|能不能|可以帮|可不可以|你能|你可以"
    r"|您能|您可以|推荐|介绍|查一下|查查|查下|看看|看一下|看下|搜一下|找一下|找个|找一|找家|想找|列一下"
    r"|写一|写个|改一下|改下|修一下|修复|解释|说一下|讲一下|分析|算一下|算算|比较|对比|总结|整理|翻译|生成|做一"
    r"|规划|安排一下|推荐一下|跑一下|测一下|测试一下|检查一下|排查|重构|实现|加一个|加个|删掉|删除|重启|部署一下)"
    r"|(?:帮我|帮忙|麻烦你|你帮|给我推荐|推荐一下|推荐个|推荐一个|能推荐|帮忙看看|帮我看看|帮我查|帮我找|帮我写"
    r"|帮我改|帮我算|帮我订|帮我规划|帮我列)"
)
ZH_STANDING = re.compile(
    r"(?:以后|之后都|从现在起|从现在开始|今后|往后|每次|一律|统一|永远|一直都要|始终|任何时候|所有的?|全部|默认"
    r"|都要|都得|都必须|都不要|都别|一概)"
)
ZH_MODAL = re.compile(
    r"(?:必须|务必|一定要|一定得|得要|需要|要求|只能|只要|只用|只接受|只考虑|不能|不可以|不准|不许|不得|禁止|严禁"
    r"|千万别|千万不要|不要|别|不用|无需|不超过|不能超过|不要超过|不得超过|不低于|不少于|至少|最多|以内|以下|以上"
    r"|之内|控制在|上限|下限|底线|红线|硬性|硬要求|前提是|保证|确保|记得|得|要(?!不要|么|是|不|求)|应该)"
)
ZH_COMMIT = re.compile(
    r"(?:决定|定了|就定|敲定|确定(?:了|用|选|去|要)|就用|就选|就去|就订|就买|就要|就这个|就这家|就它|就那个|就那家"
    r"|选了|选定|订了|订好了|已经订|预订了|买了|下单了|付了|交了|报了名|报名了|签了|接受了|答应了|租了|约了"
    r"|用这个|用那个|采用|改用|换成|换用|切到|迁到|我们用|咱们用|那就|那我们就|那就用|那就选|那就订|我要了"
    r"|拍板|就按|按这个|按你说的)"
)
ZH_PREFER = re.compile(
    r"(?:喜欢|偏好|偏爱|更想|比较想|倾向于?|最好|希望能|想要|爱吃|不爱|讨厌|不喜欢|不太喜欢|受不了|习惯用"
    r"|更习惯|尽量|优先|比较喜欢|能.{0,6}最好|的话更好|就更好了|也行|无所谓)"
)
ZH_OPEN = re.compile(
    r"(?:还没(?:有)?(?:决定|定|想好|确定|选|考虑好|商量好)|没想好|没商量好|没定|待定|纠结|犹豫|拿不定|不确定(?:要不要|是|用|选)"
    r"|还在考虑|在考虑|考虑中|二选一|要么.{1,20}要么|还是.{1,20}(?:没定|再说|再看))"
)
ZH_HYPOTHETICAL = re.compile(
    # (大概 and 估计 before a number say "about": "大概15桌" is a count, not a guess)
    r"^(?:如果|要是|假如|假设|万一|也许|可能|或许|说不定|(?:大概|估计)(?!\s*[\d两几一二三四五六七八九十])"
    # (or a few words in: "晚上要是还烧", but not the 要是 of "必须要是自动挡": "must be")
    r"|应该会|[^，,。]{1,6}?(?:(?<![须需得定都就还只也总必])要是|如果|假如|万一))"
)
ZH_NARRATION = re.compile(
    r"(?:昨天|前天|刚才|刚刚|刚|今天早上|上午|下午|晚上|之前|上次|上周|那天|早上)"
    r".{0,20}(?:了|过)|(?:昨天|前天|刚才|刚刚|刚)[^，,。]{0,20}完"
    r"|^(?:我|我们)(?:试了|跑了|看了|查了|找了|问了|去了|用了|改了|删了|装了|重启了|发现|遇到|碰到)"
)
ZH_FACT = re.compile(r"(?:是|在|有|用的是|跑在|部署在|住在|位于|叫|为|等于|花了|需要|占|要)")


# --- cue vocabularies (features by presence) -------------------------------------------------

EN_CUES = frozenset(
    """must should need needs have has had can't cannot cant don't dont never always only no not
    shouldn't won't will 'll would could might may maybe probably please let's lets want wants
    wanted prefer rather like love hate ideally hope decided booked bought ordered going gonna
    chose picked use using used keep stick switch make set pin leave skip drop avoid stop limit
    cap max min under over least most budget deadline by before after until is are was were be
    been got i i'm im i've i'd i'll we we're we've we'd we'll my our you your he she they it
    it's its this that there the if when unless because since so but and or still yet sure
    deciding between whether thinking think guess feel fine ok okay good great thanks yesterday
    today tomorrow now currently usually every each all any new anymore again instead actually
    also just right here what how why which who where do does did going to trying lol haha
    ugh wow hey hi sorry wait found tried ran saw looks seems works worked broke fails failed
    prod staging main tests test anything everything nothing something per a day week month
    year total about around like maybe ok agreed deal settled go with fine done works
    requirement requires required rule policy sla team says said wants their his her its
    me mine us them allergic vegetarian live living moving flying leaving arriving lands
    landing starts start due""".split()
)
ZH_CUES = tuple(
    """我们 咱们 我 你 您 他 她 它 要 必须 一定 不要 别 不能 不用 只能
    只 都 以后 每次 每 用 改成 改为 改 换 就 吧 吗 呢 了 过 是 有
    在 想 希望 喜欢 最好 尽量 订 买 选 定 决定 先 再 还是 或者 纠结
    没想好 如果 要是 可能 应该 帮 请 能不能 可以 推荐 看看 多少 怎么
    什么 哪 好的 谢谢 哈哈 太 不 没 预算 以内 以上 以下 不超过 至少
    最多 左右 大概 昨天 刚才 今天 现在 之前 号 点 元 块 统一 一律
    不考虑 不行 就行 就好 够了 对 错 其实 算了 感觉 觉得 好像 估计 听说
    说 已经 还没 正在 打算 准备 计划 约 报 交 付 租 住 去 来 吃 不吃
    过敏 有点 比较 特别 非常 挺 累 烦 担心 怕 需要""".split()
)
START_VERBS_RULE = frozenset(
    """use keep make set put stick avoid pin store split cut leave limit cap stay assume skip drop
    default reply answer respond name prefer treat follow target only never always don't dont
    no nothing all every each ensure remember respect run deploy""".split()
)
START_VERBS_TASK = frozenset(
    """fix write add create implement refactor update change remove delete rename check test debug
    look investigate review find search list show explain compare calculate convert translate
    generate build draft plan book give help try go tell send get recommend suggest summarize
    outline estimate rewrite clean install move merge revert bump upgrade commit push open close
    restart rerun retry print log paste read grep profile benchmark walk""".split()
)

#: "I want to make sure it's fair", "I hope it works": a worry, not a wish to remember.
WORRY = re.compile(r"^(?:i|we)\s+(?:just\s+)?(?:want to make sure|hope|wonder|worry)\b", _I)
#: "we've been fighting with this for two weeks": an ongoing situation, told.
ONGOING = re.compile(r"\b(?:i|we|i've|we've|they've)\s*(?:have\s+)?been\s+\w+ing\b", _I)


#: Words that name a setting ("超时时间", "连接数", "TTL"): a terse "超时时间30秒" sets it.
ZH_SETTING = re.compile(
    r"超时|时间|上限|下限|数量|个数|大小|端口|版本|并发|副本|连接|缓存|过期|有效期|重试|间隔|频率|阈值|内存|磁盘|批量"
    r"|学习率|利用率|步数|轮数|显存"
    r"|ttl|timeout|worker|pool|qps|rps|p\d\d|epoch|batch|lr|temperature|top_?[pk]|max[-_]",
    _I,
)

#: A requirement an option must meet, said as "it must have" ("要有阳台", "得有电梯").
#: (not "要有空的话…", if there is time, nor "要有人帮忙吗", a question)
ZH_MUST_HAVE = re.compile(
    r"^(?!.*的话)(?:一定|必须)?(?:要|得|需要)有(?!空|时间|人|点|些)[^吗呢么？?，,。]{1,12}[。！!]?$"
)
#: Another person's liking, told: "she likes gardening", "he hates clutter", "豆腐我室友
#: 不喜欢那个味道" (a fact about them, not the person's preference).
THEIR_LIKING = re.compile(
    r"^(?:(?:and|but|so|also|plus|oh)[\s,]+)*(?:he|she|they|my [a-z]+(?: [a-z]+)?"
    r"|(?!(?:We|I|You|It|This|That|These|Those|They|There)\b)[A-Z][a-z]+"
    r"|(?:his|her|their) [a-z]+)\s+(?:(?:really|also|kinda|still|just|absolutely|totally)\s+)*"
    r"(?:likes|loves|hates|prefers|enjoys|dislikes|adores|can't stand|doesn't like|does not like"
    r"|isn't a fan of|is not a fan of|is obsessed with)\b"
    # (not "我和他都喜欢…", "其他都不喜欢": the person is among them, or it is "the others")
    r"|^(?![^，,。]*我[和跟])[^，,。]{0,8}?(?<!其)"
    r"(?:他|她|他们|她们|室友|老公|老婆|孩子|儿子|女儿|我妈|我爸|爸爸|妈妈|朋友|同事|老板|男朋友|女朋友)"
    r"(?:也|都|还|最|特别|比较|很|就)?(?:不喜欢|喜欢|讨厌|爱吃|不爱|受不了|不吃)",
)
#: A diet, an allergy or an intolerance told of someone: "husband's lactose intolerant",
#: "my son is allergic to peanuts", "她不吃辣", "我对花生过敏".
DIET = re.compile(
    r"\b(?:i'm|i am|i|we're|we are|we|he's|he is|he|she's|she is|she|they're|they are|they"
    r"|[a-z]+'s|my [a-z]+(?: [a-z]+)?(?: is| are)?|kids?|son|daughter|husband|wife)\s+"
    r"(?:(?:is|are|also|still|very|severely|mildly|now|went)\s+)*"
    r"(?:lactose[- ]intolerant|gluten[- ]intolerant|allergic to|celiac|coeliac|vegan"
    r"|vegetarian|pescatarian|diabetic|keeps? kosher|eats? halal|(?:doesn't|don't|does not"
    r"|do not|can't|cannot|won't) eat)\b"
    # (said of oneself with no subject: "乳糖不耐受", "对花生过敏", "海鲜过敏", "allergic to
    # peanuts btw", "vegetarian here")
    r"|^(?:也|还|而且)?(?:乳糖不耐|对[^，,。]{1,6}过敏|[\u4e00-\u9fff]{1,4}过敏(?:$|[\s，,。]))"
    r"|^(?:(?:also|and|oh|btw|fyi)[\s,]+)?(?:allergic to\b|(?:lactose[- ]intolerant|vegetarian"
    r"|vegan|pescatarian|celiac|coeliac|diabetic)(?:\s+(?:here|btw|too|also|fyi|myself|now))*\W*$)"
    r"|(?:我|他|她|老公|老婆|孩子|儿子|女儿|妈|爸|我们|家里)(?![^，,。]*(?:今天|今晚|中午|这顿|晚饭了|午饭了))"
    r"[^，,。]{0,6}?(?:不吃(?![亏惊醋香力苦软硬])|不能吃|吃素|过敏|乳糖不耐)",
    _I,
)
#: Someone else's reassurance or verdict, told: "he says you don't need to worry about
#: salt", "she says 4 hours is overkill" (not a rule they set: "our DPO says no user data
#: to third-party processors").
REASSURES = re.compile(
    r"\b(?:(?:don't|doesn't|do not|does not) (?:need|have) to worry|no need to worry"
    r"|(?:is|are|'s) (?:overkill|plenty|not a big deal|no big deal))\b",
    _I,
)
#: A deadline to hand something in, in Chinese: "8月15号之前交", "周五前提交" (not told
#: as done: "8月15号之前交了").
ZH_DUE = re.compile(
    r"(?:[\d一二三四五六七八九十][号日点月]|周[一二三四五六日天末]|星期[一二三四五六日天]|月底|年底|年前"
    r"|下班|明天|后天|明早|今晚|今天|下周|下个月|这周)"
    r"\s*(?:之前|以前|前)\s*(?:要|得|必须)?(?:交|提交|完成|做完|搞定|发给?|上线|弄好|写完|改完|给到)"
    r"(?![了过的])[^，,。的了]{0,4}$"
)
#: A setting and its value, in English shorthand: "page size 50", "batch size 32",
#: "timeout 30s", "retries 3" (not "page 50", "room 204").
SETTING_VALUE = re.compile(
    r"^(?:(?:ok|so|and|also|then|pls|please)[\s,]+)*(?:the\s+)?(?:[\w-]+\s+)?"
    r"(?:(?:page|batch|chunk|cache|heap|buffer|step|queue)[\s_-]?size"
    r"|timeout|ttl|retries|retry (?:count|limit)|concurrency|threads|replicas|port"
    r"|epochs|learning rate|lr|max[_ ]tokens|top[_ ]?[kp]|rate limit|retention|line[ -]length"
    r"|weight decay|eps|epsilon|momentum|dropout|warmup(?: steps)?"
    r"|pool_size|max_overflow"
    r"|temperature(?=\s*[:=]?\s*[01]\.))"
    r"\s*(?:=|:|to|at)?\s*\d[\w.]*(?:(?<=e)[-+]\d+)?(?:\s?(?:ms|s|secs?|seconds?|mins?"
    r"|minutes?|h|hrs?|hours?"
    r"|days?|[kmg]b|[kmg]i|%))?"
    # (for what it holds: "statement timeout 30s for the api role")
    r"(?:\s+(?:for|on|in)\s+(?:the\s+)?[\w-]+(?:\s+[\w-]+)?)?[.!]?\s*$"
    # a count of what a run or a deployment is made of: "5 epochs", "3 replicas"
    r"|^(?:(?:ok|so|and|also|then)[\s,]+)*\d+\s+(?:epochs|replicas|workers|shards|partitions)"
    r"[.!]?\s*$"
    r"|^(?:(?:ok|so|and|also|then)[\s,]+)*(?:train|fine-?tune|run)(?: it)? for \d+ (?:more )?"
    r"(?:epochs|steps|iterations)[.!]?\s*$"
    # "batch of 500", "sleep 100ms between batches"
    r"|^(?:(?:ok|so|and|also|then|pls|please)[\s,]+)*(?:(?:batch|batches|chunks?|pages?)\s+of"
    r"\s+\d[\d,]*(?:\s+(?:rows|items|records|ids|messages))?"
    r"|(?:sleep|wait|delay|pause|backoff)\s+(?:of\s+)?\d[\w.]*(?:\s?(?:ms|s|secs?|seconds?"
    r"|mins?|minutes?))?\s+(?:between|after|before)\s+[\w\s-]{1,24}?)\s*$",
    _I,
)
#: A version moved to, which stands after the task is done: "bump everything to go 1.22",
#: "upgrade node to 20.11", "pin numpy to 1.26".
TO_VERSION = re.compile(
    r"\b(?:bump|upgrade|update|move|switch|pin|downgrade)\w*\b"
    r"(?!\s+(?:the\s+)?(?:release|changelog|tag|version|package version)\b)[^.;!?]{0,30}?\bto\s+"
    r"(?:[a-z][\w-]*\s+)?v?\d+(?:\.\d+)+\b",
    _I,
)
#: What the other person asks for, going on with their report: "我室友说她15号要上班 让改到
#: 16号", "我妈说18号日子不好 要改到10月26号", "让我一天最多吃一片" (their wish, not yet the
#: person's: "医生说不是3天 要住5天" is news, taken).
THEIR_ASK = re.compile(
    r"(?:让|叫|建议)(?!人)|(?:要|得|非要|说要)?[^，,。\s]{0,4}?(?:改到|改成|换成|换到|挪到|推到|延到)"
)
#: A want of how a thing must be, a thing and its qualifier: "I want the hotel close to
#: the airport", "I want everything homemade", "we need it done before July" (not "I
#: want a smoke", "i need a study plan for the NCLEX": a thing asked for).
WANTS_IT_SO = re.compile(
    r"^(?:(?:so|and|also|ok|okay|but|oh|well)[\s,]+)*(?:i|we)\s+"
    r"(?:(?:really|just|also|still|definitely|only|do)\s+)*"
    r"(?:want|need|'d like|would like|'d prefer|would prefer)\s+"
    # a thing of the conversation, then how it must be ("the hotel close to the airport",
    # "it in the sheet before 9am", "everything homemade")
    r"(?:(?:the|it|everything|all|our|them|this|that|both|each|every)\b"
    r"[^,.;:?!]{0,40}?\s(?:close to|near|walking distance|within|under|below|less than"
    r"|more than|at least|at most|no more than|no later than|by|before|done|ready|finished"
    r"|homemade|without|with no|on a|on the|in a|in the)\b"
    # any thing, held to a limit ("a room under $200", "a flat near the station")
    r"|(?:a|an)\b[^,.;:?!]{0,30}?\s(?:close to|near|walking distance|under|below"
    r"|less than|at least|at most|no more than)\b)"
    r"(?![^?]*\?)(?!.*\b(?:lol|lmao|haha|someday|one day|in the future)\b)",
    _I,
)
#: A Chinese requirement of where or what a thing must be: "酒店要靠近地铁站", "房子要朝南",
#: "带阳台是刚需", "中文分词要支持", "我们需要一个能住4个人的房间".
ZH_REQUIRES = re.compile(
    # not a plan ("我要带孩子去"), a report ("朋友说要带…") or a case ("…的话")
    r"^(?!.*(?:的话|说|觉得))(?![我你他她咱])[^，,。！!？?]{0,12}?(?:一定|必须)?要"
    r"(?:靠近|挨着|朝[东南西北]|支持|在[^，,。]{1,10}(?:附近|旁边|周边|边上)"
    # how it must be, compared: "屏幕要大一点", "房间要安静些"
    r"|(?<![又也就都快])(?:大|小|高|低|长|短|轻|新|便宜|安静|亮|宽|软|硬|近)一?(?:点|些)"
    r"(?![^，,。]*[吗呢?？了]))"
    r"|(?<!这个)(?<!那个)(?<![这那不没])是刚需[。！!]?$"
    r"|^(?:我们|咱们)(?:还|也|一定|必须)?(?:需要|得有)"
    r"(?=[^，,。！!？?吗呢]*(?:\d|[一两二三四五六七八九十][个间辆张套台人位]))"
)
#: A want of what a thing must be, said bare: "要独卫!!!", "要一级能效", "蛋糕要无麸质的",
#: "场地要室内的", "需要包早餐" (not a plan or a move, "要去机场", "明天要下雨的", "要走了",
#: a cheer, "要加油", nor a question, "需要多久").
ZH_WANTS = re.compile(
    r"^(?:一定|必须|还|也|最好)?(?:要|需要)(?![是不么去走来回下睡吃喝看做出过到上开加好多几什怎帮求有])"
    r"(?!命|崩|疯|死|哭|吐|饿|困|累|排队|时间|等|晚|迟|慢|降温|堵|生气|疼|发烧|加班|下雨)"
    r"[^，,。！!？?吗呢了的我你他她]{1,6}[。！!~～]*$"
    # what it is like, in so many words: 无麸质的, 白色的, 室内的, 靠窗的 (not 要降温的,
    # 要晚点的: what will happen)
    r"|^(?![我你他她咱这那])[^，,。！!？?的了要]{0,6}(?:一定|必须|得)?要"
    r"(?:(?:无|不含|纯|全|靠|带|朝|进口|国产|原装|正品|室内|室外|独立)[^，,。！!？?吗呢了]{0,6}"
    r"|[^，,。！!？?吗呢了]{1,4}(?:色|款|型|装|质|味|式|版|牌))的[。！!~～]*$"
)
#: An amount of a thing said to be enough, which caps it: "订两间房就够了", "房间两间就够了"
#: (not a step, "看一下就行", "试一次就行", "说一声就行"; a bare "两个就够了" goes with the
#: clause before it).
ZH_ENOUGH = re.compile(
    r"(?<=[\u4e00-\u9fff])[\d两一二三四五六七八九十](?![次声下遍眼趟回句])[^，,。！!？?\s]{0,4}"
    r"(?:就(?:够了|够啦|足够了|够|行了|行|可以了)|够了|够啦|足够了)"
    r"[。！!~～\s哈]*[\U0001F300-\U0001FAFF\u2600-\u27BF]*$"
)
#: An instruction that turns a setting on or off: "turn on bf16", "enable mixed precision",
#: "HPA on", "multi-AZ off for now" (a bare "X on" only for a name that looks like one).
SWITCH = re.compile(
    r"^(?:(?i:ok|okay|so|and|also|then|pls|please|just)[\s,]+)*(?:"
    # (not "turn off the lights": an errand)
    r"(?:(?i:turn|switch)\s+(?:on|off)\s+(?!the\b)|(?i:enable|disable)\s+(?:the\s+)?)"
    r"[\w.+-]+(?:\s+[\w.+-]+)??"
    # a name with a digit, a dash or an underscore, or an acronym (not "Spot on", "Day off")
    r"|(?=[\w.+-]*(?:\d|_|-|[A-Z]{2}))[\w.+-]+(?:\s+(?!(?:is|are|was|were|stays?)\b)[\w.+-]+)?"
    r"\s+(?:on|off))"
    r"(?:\s+(?i:too|as well|please|pls|for now|again))*[\s.!]*$",
)
#: A Chinese instruction that turns a named setting on or off: "开gradient checkpointing",
#: "关掉 autoscaling", "bf16 打开" (a setting's name is lower case: not 开PR, 关掉Docker).
ZH_SWITCH = re.compile(
    r"^(?:(?:那|再|也|先)?(?:开|打开|开启|启用|关|关掉|关闭|禁用)\s*[a-z][\w.+-]*(?:\s[a-z][\w.+-]*)?"
    r"|[a-z][\w.+-]*(?:\s[a-z][\w.+-]*)?\s*(?:也)?(?:打开|开启|启用|关掉|关闭|禁用))"
    r"\s*(?:吧|一下)?[。！!~～]?$"
)
#: A value set for a setting in Chinese ("利用率调到0.92吧", "batch size降到8"): where the
#: value lands ``set`` begins (read with its numbers, see ``acts.guide_rule``).
ZH_SETS_VALUE = re.compile(
    r"(?:改成|改为|改到|换成|调到|调成|调为|降到|升到|设成|设为|设置为|设到|定为|定成)\s*"
    r"(?P<set>[\d零一二两三四五六七八九十百千万半])"
)
#: … said as an instruction: a closing 吧 or 就行, or a setting's Latin name before it.
ZH_SETS_SAID = re.compile(r"(?:吧|就行|就好|就可以|试试|看看)[。！!~～\s]*$")
ZH_SETTING_NAME = re.compile(r"[A-Za-z_][\w.\-]*\s*$")
#: A Chinese must: a rule however the rest of the clause reads ("连接池大小必须是 50").
ZH_MUST = re.compile(r"必须|务必|不得(?!不)|不准|不许|禁止|一律|严禁")  # 不得不: "had to"
#: A bare no ("不，先不要。", "算了"): an answer, with nothing of its own to remember.
BARE_NO = re.compile(
    r"^(?:[\s，。！、,.!了吧啊呢]*(?:先不要|先别|不要|不用|不行|不是|算了|没有|别|不))+"
    r"[\s，。！、,.!了吧啊呢]*$"
)
#: A go-ahead with nothing of its own: "ok let's keep going", "go for it", "keep it up",
#: "let's move on to the next file". It moves the work on; it decides and limits nothing.
GO_AHEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|right|yes|yeah|yep|sure|cool|great|good|so|then|and)[\s,!.]+)*"
    r"(?:(?:let's|lets|let us|we'll|we will|i'll|i will|please)\s+)?(?:just\s+)?"
    r"(?:keep (?:going|at it|pushing|moving(?: forward)?|it up|each other going)"
    r"|go (?:on|ahead|for it)|carry on|continue|proceed|move on"
    r"|do (?:this|it|that|my best|our best)|get (?:going|started)"
    r"|(?:never|don't|do not|not) give up)"
    r"(?:[\s,]+(?:then|now|buddy|man|guys|together|with (?:it|this|that)"
    r"|to the next (?:one|step|file|part|thing|item)))*[\s!.~]*$",
    _I,
)
#: The Chinese go-ahead: "跑吧", "改吧", "那你改吧", "继续".
ZH_GO_AHEAD = re.compile(
    r"^(?:那就?|好的?|行|ok|嗯+|可以)?[，,\s]*(?:那)?(?:你)?(?:就)?"
    r"(?:跑|改|合|提|发|上|开始|继续|搞|弄|做|删|加|试试?)(?:一下|一版)?吧?[。!！~～]*$",
    _I,
)
#: Where the person is right now: "我现在在地铁上", "I'm on the train rn".
NOW_AT = re.compile(
    r"^我现在在(?:[\u3400-\u9fff]{1,3}上|外面|路上|开会|忙)[呢了啊哈呀。！!，,\s]*$"
    r"|^(?:i'm|im|i am) (?:(?:at|on|in) (?:the |a |my )?(?:train|bus|plane|subway|metro|tube"
    r"|car|road|airport|gym|dentist|doctor'?s?|meeting|phone|way home|way)|out|driving"
    r"|stuck in traffic)\b[^,.]{0,20}\b(?:right now|rn|atm)\s*[.!]*$",
    _I,
)
#: A choice settled in the idiom "X it is", at the end of a clause: "Biscuit it is",
#: "that's way over, mom's house it is", "blue/green it is then" (``search`` it).
#: The named thing is what was chosen ("here it is", "it is what it is" name nothing).
_NOT_A_CHOICE = (
    r"(?!(?:here|there|this|that|what\w*|who\w*|where\w*|how\w*|which|why|so|it|now|i|you|we|ok|okay"
    r"|they|he|she|know|knows|think|see|is|was|be)\b)"
)
SETTLED_CHOICE = re.compile(
    r"(?:^|[,;:!]\s*|\.\s+|\b(?:ok(?:ay)?|alright|right|fine|so|then|cool|great)[\s,!.]+)"
    rf"(?P<choice>{_NOT_A_CHOICE}[\w'/.+#-]+(?:\s+{_NOT_A_CHOICE}[\w'/.+#-]+){{0,4}})"
    r"\s+it is(?:\s+then)?[\s!.]*$",
    _I,
)

#: A change told, with its subject first: "standup moved to 10 starting next week", "the
#: demo got pushed to Friday", "周会挪到4点了" (a change the person makes is said with
#: "I" or as an instruction: "move the standup to 10").
CHANGE_TOLD = re.compile(
    r"^(?:(?:so|and|oh|also|fyi|btw|update)[\s,:]+)*(?!(?:i|we|you|let's|pls|please)\b)"
    r"(?:the\s+|our\s+|my\s+)?[\w-]+(?:\s+[\w-]+)?\s+(?:got\s+|was\s+|has been\s+|is\s+|just\s+)?"
    r"(?:moved|pushed(?:\s+back)?|bumped|rescheduled|shifted|postponed)\s+(?:to|back to|up to)\b"
    r"|^[^，,。！!？?我你咱]{1,8}(?:挪到|改到|推迟到|推到|提前到|延到|延期到)[^，,。！!？?]{1,10}了"
    r"[。！!~～]*$",
    _I,
)
#: A change asked as a question: "can we do 5 days instead?", "how about 8081 instead",
#: "could you make it 5 retries instead?", 能不能改成5天, 要不换成周六？, 改成两晚行吗 (the
#: person asks for it; "how do I do that instead?" names no value and changes nothing).
CHANGE_ASKED = re.compile(
    r"^(?:(?:so|ok|okay|hmm+|actually|also|and|but|wait)[\s,]+)*(?:(?:can|could|would|shall)"
    r"\s+(?:we|you)\s+(?:just\s+)?(?:do|make|go|use|switch|try|change|move|push|have|get|book"
    r"|take|set|bump|drop|cap|keep|pick|order|stay|start|leave|put|plan|aim|budget|cut|raise"
    r"|lower|increase|reduce)\b|(?:how|what)\s+about\b)[^?]*\binstead\b"
    r"(?![^?]*\b(?:if|when|on days|on weekends|sometimes|once in a while)\b)"
    # "can we make it 5 days?", "could you change it to 8081?" (a value, said at once)
    r"|^(?:(?:so|ok|okay|hmm+|actually|also|and|but|wait)[\s,]+)*(?:can|could)\s+(?:we|you|u)"
    r"\s+(?:just\s+)?(?:make\s+(?:it|that)|(?:change|switch|move|bump|set)\s+(?:it|that|this"
    r"|the\s+\w+)\s+to)\s+[$€£¥]?\d(?![^?]*\b(?:if|when)\b)"
    r"|(?:能不能|能否|可不可以|可以|要不|要不然|那要不)(?:就|还是)?[^，,。！!？?]{0,8}?"
    r"(?:改成|换成|改为|改到|挪到|换到)"
    r"|(?:改成|换成|改到|挪到|换到|改)[^，,。！!？?]{1,12}(?:行吗|好吗|可以吗|行不行|好不好"
    r"|可不可以)|(?:改成|换成|改到|换到)[^，,。！!？?]{1,12}吧[？?]",
    _I,
)
#: A verdict on a value: "100 is too strict", "$300 is way too much", "that's too far" ("my
#: apartment is way too small" is a fact about it).
TOO_MUCH = re.compile(
    r"^(?:(?:but|and|so|hmm+|ugh|honestly)[\s,]+)*(?:[\d$€£¥][\w$€£¥.,%:-]*(?:\s+[a-z]+)?|that|this"
    r"|it)(?:\s+(?:is|are|was)|'s)\s+"
    r"(?:(?:way|much|a bit|far|just|kinda|still|a little)\s+)?too\s+(?:strict|loose|low|high|much"
    r"|little|big|small|long|short|slow|fast|expensive|pricey|cheap|far|late|early|tight"
    r"|aggressive|conservative|many|few)\b[\s.!]*$",
    _I,
)
#: A choice of the moment, told: "I decided to take a nap after lunch", "I just decided to
#: treat myself to ice cream", "I decided on a whim to dye my hair".
WHIM = re.compile(
    r"\bdecided\s+(?:on a whim\b|to\s+(?:take a nap|nap\b|sleep in\b|go to bed|dye my"
    r"|stay in(?=[\s.!]*$|\s+(?:tonight|today|and))|treat (?:myself|ourselves) to (?:some |an? )?"
    r"(?:ice cream|dessert|coffee|cake|a massage|pizza|takeout|a drink|snacks?)))",
    _I,
)
#: What another person said, opening the clause: "she said she can put up to $300 toward
#: the movers", "my landlord told me it's $50 more from June".
OTHERS_SAID = re.compile(
    r"^(?:(?:and|but|so|also|oh|well)[\s,]+)*(?:(?:she|he|they)\s+|(?:my|our)\s+(?:[\w-]+\s+){1,3}?)"
    r"(?:says?|said|told me|mentioned)\b",
    _I,
)
#: Another person's verdict on a value: "设计那边说卡片圆角 8px 太小了", "DBA 说 50 太多了"
#: (not the person's own: "我觉得64太大了")
ZH_OTHERS_VERDICT = re.compile(
    r"(?<!我)(?:说|觉得|认为)[^，,。！!？?]{0,16}\d[\w%]{0,6}\s*"
    r"(?:太[多少长短久贵晚早大小快慢远近高低紧]|不够)"
)
#: A search asked of the assistant, said with 吧: "给推荐一家吧", "请给我推荐一家餐馆用餐吧",
#: "帮我找个安静点的吧" (asking, not choosing; "那就订这家吧" chooses).
ZH_SEARCH_ASKED = re.compile(
    r"^(?![^，,。]*[就这那])[^，,。]{0,8}?(?:推荐|介绍|找)(?:一下|一?[家个间处款种])"
    r"[^，,。]{0,12}吧[。！!~～\s]*$"
)
#: Another person's share of a cost ("she can put up to $300 toward the movers",
#: "chip in $5k", 她说房租她可以出两千); not "put in" alone ("he said we must put in the
#: request by Friday"), which :mod:`convmem.memory.links` adds where money is said.
SHARE_OF_COST = re.compile(
    r"\btowards?\b|\bchip(?:ping)? in\b|\bpitch(?:ing)? in\b|\bcontribut\w*"
    r"|(?:可以|能|愿意|会|帮)出(?:[\d一二两三四五六七八九十百千万]|钱|一部分)|承担|赞助|补贴",
    _I,
)
#: How something is done, in the present passive: "logs are rotated and then signed",
#: "the payload is serialized and signed" (no one's choice; "it's decided" is one).
PASSIVE_STEP = re.compile(
    r"^(?:(?:the|our|all|new|registered|each|every)\s+)?(?!(?:i|we|i'm|we're|it|it's)\b)"
    r"[a-z][\w.-]*(?:\s+[a-z][\w.-]*)?\s+(?:is|are|gets?)\s+"
    r"(?:(?:then|now|always|also|automatically|first)\s+)?"
    r"(?!(?:decided|settled|agreed|booked|reserved|registered|paid|ordered|signed|purchased"
    r"|bought|scheduled|approved|chosen|confirmed|fixed|set|done|then|when|even|often|open"
    r"|seven|eleven|ten)\b)[a-z]{2,}(?:ed|en)\b(?![^.!?]*\b(?:we|i)\b)",
    _I,
)
#: A moment asked for: "1 sec", "one sec", "gimme a minute".
WAIT_A_MOMENT = re.compile(
    r"^(?:(?:ok|okay|hold on|wait)[\s,]+)?(?:one|1|a|just a|gimme a|give me a|wait a)\s*"
    r"(?:sec|second|min|minute|moment|mo)s?\b[\s.!…]*$",
    _I,
)
#: The choice left to the assistant: "use your judgment", "your call", "up to you".
DELEGATES = re.compile(
    r"^(?:(?:ok|okay|just|so|then|eh|idk)[\s,]+)*(?:use your (?:own |best )?(?:judg(?:e)?ment"
    r"|discretion)|(?:it's |that's )?(?:your call|up to you)|whatever you (?:think|prefer|like))"
    r"[\s.!…]*$",
    _I,
)
#: More of something asked for now: "we need more replicas for the scale-up", "we need a
#: better error message here" (with a count it is a requirement: "we need at least 2
#: bedrooms").
WE_NEED_MORE = re.compile(
    r"^(?:(?:so|and|also|ok|okay|but|plus)[\s,]+)*(?:we|i)\s+(?:(?:really|still|also|definitely"
    r"|probably|will)\s+)?need\s+(?:more|some more|a few more|a better|better|another|extra)"
    r"\s+[\w-]+(?:\s+[\w-]+)?\s+for\s+(?:the|this|that|our|my)\b(?![^.!?]*\b(?:always|every"
    r"|from now on)\b)",
    _I,
)
#: "needs" in a relative clause: "anyone who needs it", "whoever needs them" (no
#: requirement of a thing; "Prod needs them too" is one).
NEEDS_NOTHING_NAMED = re.compile(r"\b(?:who|whoever|anyone|everyone)\s+needs\b", _I)
#: A limit given as the value it was: "the budget was 3000" (not "the budget was raised to
#: $5000", "the requirement was that all APIs be versioned").
#: A reason hung off a request, about what it names: "check how the SDK handles it, we'll
#: call it later anyway" (not "we'll use Postgres anyway" nor "I'll buy it anyway").
ANYWAY = re.compile(
    r"^(?:(?:and|so|but)\s+)?(?:we|i)(?:'ll|\s+will|'re going to|\s+are going to)\s+\w+\s+"
    r"(?:it|them|that|this|those|these)\s+(?:[\w-]+\s+)?(?:later|soon|eventually)\s+anyway[.!]*$",
    _I,
)
#: How it was, told: "it used to crash at 24", "we used to be on 3.9".
USED_TO = re.compile(r"^(?:(?:and|but|so)\s+)?(?:it|this|that|they|we|i|he|she)\s+used to\b", _I)
PAST_VALUE = re.compile(
    r"\b(?:was|were|used to be)\s+(?:(?:around|about|like|only|just)\s+)?[\d$€£¥]|原来(?:是)?\d",
    _I,
)
#: A standing instruction without a number, which the model reads by its numbers: "now
#: always use this format for commit messages", "just keep responses in English", "never
#: call the prod API from tests", "reply in Chinese from now on".
STANDING_INSTRUCTION = re.compile(
    r"^(?:(?:now|just|and|so|also|ok|okay|please|pls|but|from now on)[\s,]+)*"
    r"(?:(?:always|never|please)\s+)*(?:(?:always|never)\s+(?:use|write|run|answer|reply"
    r"|respond|add|put|keep|include|format|commit|push|call|check|ask|follow|name|return|log"
    r"|wrap|start|end|touch|edit|delete|skip|mock|test)"
    r"|keep\s+(?:(?:the\s+)?(?:responses|answers|replies|messages|comments|commits|prs|docs"
    r"|explanations|code)|it|them|everything)\s+(?:in|under|short|brief|concise|simple|to)"
    r"|(?:answer|reply|respond|write)\s+in\s+(?:english|chinese|japanese|spanish|french|german"
    r"|korean|plain text|markdown)\b.*\b(?:from now on|always|going forward)"
    # "it's a hard requirement that all endpoints are authenticated"
    r"|it(?:'s|\s+is)\s+(?:a\s+)?(?:hard\s+)?(?:requirement|must|mandatory|non-negotiable)"
    r"\s+that"
    r")\b",
    _I,
)
#: "this must be fast", "it has to stay backwards compatible": a rule about the thing at
#: hand (read only where the modal binds: "it must be a caching issue" is a guess).
THIS_MUST = re.compile(
    r"^(?:(?:and|so|also|but|just|ok|okay)[\s,]+)*(?:this|it|that)\s+(?:must|has to|needs to)"
    r"\s+(?:be|stay|remain|run|work)\b",
    _I,
)
#: A lasting change in a person's life, told: "Ben just turned 12", "I got promoted to shift
#: lead", "I took up walking after dinner", "健身半年了",
#: "最近迷上烘焙了", "我不太能吃辣", an age said alone ("they're both 15") and a lasting
#: trait of diet or health ("she's celiac").
LIFE_FACT = re.compile(
    r"^(?:(?:oh|and|so|also|well|btw|anyway|update)[\s,:]+)*(?:[\w'-]+\s+){0,2}?"
    r"(?:(?:just\s+)?turned\s+\d+\b|got\s+(?:promoted|engaged|married|divorced|hired|laid off"
    r"|accepted|into)\b|took\s+up\b|started\s+(?:learning|taking|playing|going to|working"
    r"(?:\s+at|\s+as)?)\b)"
    r"|^(?:[\w'-]+\s+){0,2}?(?:i'm|i am|he's|he is|she's|she is|they're both|they are both)"
    r"\s+(?:just\s+|now\s+|only\s+)?\d{1,3}(?:\s+(?:now|years old))?\s*[.!]?$"
    # a lasting trait said alone: "she's celiac", "my dad is diabetic", "we're both vegan"
    r"|^(?:[\w'-]+\s+){0,2}?(?:i'm|i am|he's|he is|she's|she is|they're|they are|we're|we are"
    r"|(?:my|our|his|her|their)\s+[\w-]+(?:'s)?\s+(?:is|are))\s+(?:both\s+|all\s+|also\s+|now\s+"
    r"|actually\s+|strictly\s+)*(?:celiac|coeliac|vegan|vegetarian|pescatarian|diabetic|pregnant"
    r"|lactose[ -]intolerant|gluten[ -]intolerant|allergic to [\w -]{2,20}|kosher|halal|deaf"
    r"|colou?rblind|left-handed|sober|teetotal)\s*[.!]?$"
    r"|^[^，,。！!？?]{0,6}(?:[一两二三四五六七八九十半\d]+(?:个)?(?:年|月)了|迷上[^，,。！!？?]{1,8}了"
    r"|不太能吃[^，,。！!？?]{1,4}$)",
    _I,
)
