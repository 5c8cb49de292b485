"""Small talk: a clause that only praises, cheers on or pictures another's feeling.

People who chat say "It's so peaceful there", "Keep going and never give up!", "you
must feel so proud" or 加油 all the time. None of it is a rule, a choice or a lasting
fact, and kept as one it fills every later block (LoCoMo's replayed chats had made 4,224
items, most of them this). :func:`small_talk` answers for one clause; the patterns are
narrow on purpose, since the same words make real rules ("The hotel must be peaceful",
"Keep me posted on every failed deploy", 继续保持用中文回复).
"""

from __future__ import annotations

import re

_I = re.IGNORECASE

#: Words of praise or sympathy that make a clause a verdict ("so peaceful", "a blast").
_APPRAISAL = (
    r"(?:great|amazing|awesome|cool|nice|lovely|beautiful|gorgeous|stunning|cute|adorable|sweet"
    r"|fun|incredible|wonderful|fantastic|fabulous|brilliant|excellent|superb|inspiring"
    r"|inspirational|rewarding|fulfilling|satisfying|peaceful|tranquil|serene|relaxing|calming"
    r"|soothing|cozy|special|priceless|precious|admirable|impressive|tough|rough|difficult"
    r"|challenging|scary|sad|heartbreaking|touching|heartwarming|magical|memorable"
    r"|unforgettable|surreal|exciting|thrilling|liberating|empowering|meaningful|epic|unreal"
    r"|vivid|breathtaking|delicious|yummy|tasty|hilarious|awful|terrible|horrible|unbelievable"
    r"|mind-blowing|refreshing|uplifting|encouraging|motivating|therapeutic|bliss|blissful"
    r"|(?:much |greatly |really |so )?appreciated"
    r"|worth it|the best|the worst|a bummer|a shame|a pity|a blast|a relief|a treat"
    r"|a dream come true|a joy|a pleasure|an honou?r|a privilege|an inspiration|a lifesaver"
    r"|a game changer"
    r"|(?:a|an|such a|such an)\s+(?:great|amazing|awesome|cool|nice|lovely|beautiful|fun"
    r"|incredible|wonderful|fantastic|special|tough|rough|hard|scary|sad|touching|magical"
    r"|memorable|unforgettable|surreal|exciting|meaningful|epic|rewarding|inspiring"
    r"|relaxing|peaceful|powerful|emotional|stressful)\b)"
)
#: Words after a verdict or a cheer that make it more than one: a number, a rule, a
#: contrast, an instruction or a choice ("That's great and please always use type hints",
#: "It's cool, go with Redis then", "Keep going and use pnpm everywhere").
_MORE_THAN_A_VERDICT = (
    r"(?![^.!?]*(?:\d|\b(?:must|never(?!\s+(?:give up|stop|lose))|only|need|needs|has to"
    r"|have to|should|shouldn't|don't(?!\s+(?:give up|lose|stop|be|forget to (?:have|enjoy|take)))"
    r"|do not|can't|cannot|but(?=\s+\w)|except|unless|budget|deadline|required|requirement"
    r"|always|please|pls|use|using|go with|going with|bought|booked|ordered|picked|chose|decided"
    r"|let's|now|just keep|keep (?:it|the|them|responses|answers|using)|make sure|avoid"
    r"|remember)\b))"
)
#: A clause that only says how something was or felt: "It's so peaceful there", "Those
#: colours are unreal", "it's a great way to relax", "It must be so tranquil there". A
#: feeling or an opinion, told (the labelling guide keeps nothing of it). Not a wish ("It
#: would be nice if the CLI printed JSON" is a liking) nor a requirement ("The hotel must
#: be peaceful").
VERDICT = re.compile(
    r"^(?:(?:oh|wow|aw+|yeah|yes|haha+|lol|omg|man|honestly|and|but|so|plus|also|well|ah|ooh"
    r"|whoa|gosh|god|dude)[\s,!.]+)*"
    r"(?:(?:it|that|this|those|these|they|(?:all\s+)?(?:that|this|those|these)\s+[\w'-]+"
    r"(?:\s+[\w'-]+)?"
    # "The Eiffel Tower is so cool!" (but "the build is awful on Windows" may be a fact)
    r"|the\s+[\w'-]+(?:\s+[\w'-]+)?(?=\s+(?:is|are|was|were)\s+(?:so|such|really|super|sooo+"
    r"|absolutely|truly|incredibly)\s)"
    # an activity or a kindness: "Watching it with my family was amazing", "Your support
    # is really appreciated" (not "something", "morning", "staying near the beach")
    r"|(?!(?:some|any|every|no)thing\b|morning\b|evening\b|building\b|staying\b|setting\b"
    r"|meeting\b|string\b|wedding\b|ceiling\b|spring\b)[a-z]+ing\b(?:\s+[\w'-]+){0,5}?"
    r"|(?:your|their|his|her)\s+(?:support|help|kindness|advice|encouragement|words"
    r"|friendship|message|note))"
    r"(?:'s(?:\s+been)?|'re|'ve been|\s+(?:is|are|was|were|has been|have been|sounds?|looks?"
    r"|feels?|seems?|must have been|must (?:be|feel|look)(?=\s+(?:so|such|really|super|sooo+)\s)))"
    # no subject: "Must have been magical.", "must be tough living in the city"
    r"|must(?:\s+have)?\s+(?:be|been|feel))"
    r"\s+(?:(?:so|really|such|very|pretty|super|totally|absolutely|truly|just|quite|incredibly"
    r"|always|definitely|seriously|genuinely|honestly|like|most|more|still|all|kind of|kinda"
    r"|sooo+|soo)\s+)*" + _APPRAISAL + r"(?![\w-])" + _MORE_THAN_A_VERDICT,
    _I,
)
#: Words that make "keep pushing", "keep chasing" a cheer rather than an instruction
#: ("keep chasing those dreams", not "keep pushing fixes to staging").
_ASPIRATION = (
    r"(?=[^.!?]*\b(?:dreams?|passions?|goals?|love|kindness|positivity|joy|happiness"
    r"|a difference|your best|yourselves|yourself|each other|one another|hope|forward"
    r"|community|the good work|great things|inspiring)\b)"
)
#: A cheer or a good wish to the other person, or a promise to keep at it: "Keep going and
#: never give up!", "keep up the good work", "don't forget to take some pictures!", "Let's
#: keep chasing our dreams", "I'll keep you posted", "Have a great day!". Nothing of it is
#: a rule or a choice; a phrase that could be an instruction ("keep me posted on every
#: failed deploy", "keep trying the request", "take care not to break the API") is a cheer
#: only when nothing follows it.
CHEER = re.compile(
    r"^(?:(?:oh|wow|aw+|yeah|yes|and|so|also|well|ok(?:ay)?|haha+|lol|hey|anyway|just|but)"
    r"[\s,!.]+)*"
    r"(?:(?:let's|lets|let us|we'll|we will|i'll|i will|i'm gonna|i am going to|gonna|you should"
    r"|you have to|you've got to|you gotta|we gotta|we have to|we should|just)\s+)?"
    r"(?:(?:keep\s+(?:it up|going|at it|fighting|dreaming|shining|rocking|smiling|believing"
    r"|learning|growing|trying|pushing(?:\s+(?:on|forward|ahead))?|doing what you(?:'re| are) doing"
    r"|moving(?:\s+forward|\s+on)?|up the (?:good|great|amazing|awesome|fantastic) work"
    r"|the faith|your (?:head|chin) up|(?:me|us|you) (?:posted|updated|in the loop))"
    r"|never\s+(?:give up|stop (?:dreaming|believing|trying|learning)|lose (?:hope|sight))"
    r"|don't\s+(?:give up|lose (?:hope|faith|sight)|stop (?:believing|dreaming|trying)"
    r"|be (?:daunted|discouraged|too hard on yourself|a stranger)"
    r"|forget to (?:have fun|enjoy (?:it|yourself|yourselves|the \w+)|take (?:some |lots of "
    r"|a few )?(?:nice |great )?(?:pics|pictures|photos)|get (?:some|enough) (?:rest|sleep)"
    r"|rest|breathe|smile|treat yourself))"
    r"|stay\s+(?:positive|strong|safe|patient|motivated|in the moment|true to yourself|awesome"
    r"|tuned|healthy|warm|hydrated|inspired|hopeful)"
    r"|long time no (?:talk|see|chat)|make it happen|do this|take it easy"
    r"|(?:try|do) (?:my|our) (?:very )?best|give it (?:my|our) (?:all|best(?: shot)?)"
    r"|(?:we|i)\s+(?:can|will|'ll)\s+(?:do (?:it|this)|get through (?:this|it)|work it out"
    r"|make it)|i'm gonna make it|we got this|(?:i'm\s+)?(?:keeping\s+)?(?:my\s+)?fingers crossed"
    r"|(?:(?:we|i|you)(?:'ll|\s+will|\s+can)?\s+)?(?:always\s+)?be there for (?:you|each other"
    r"|one another|me)"
    r"|(?:always\s+)?(?:be\s+)?here for (?:you|each other)"
    r"|don't let (?:anything|anyone|anybody|it|that|them|fear|doubt|others)\s+(?:stop|get|hold"
    r"|bring|keep)\s+you(?:\s+down)?"
    r"|hang in there|take care|go for it|believe in yourself|push through"
    r"|you(?:'ve| have)? got this|good luck|best of luck|all the best|break a leg"
    r"|have (?:fun|a blast|(?:a |an )?(?:great|good|nice|fun|wonderful|amazing|awesome|safe"
    r"|lovely|fantastic)\s+(?:day|time|trip|weekend|night|one|evening|morning|week|vacation"
    r"|holiday|flight|show|game|birthday))"
    r"|enjoy (?:it|yourself|yourselves|the (?:rest|ride|moment|view|trip|show|day|weekend"
    r"|journey|process))"
    r"|remember to (?:stay (?:positive|strong|safe|patient|calm)|take care of yourself"
    r"|be kind to yourself|breathe|have fun|enjoy it|rest)"
    r"|you(?:'re| are) (?:doing (?:great|amazing|awesome|so well|a great job|an amazing job)"
    r"|gonna (?:do great|crush it|be fine|love it)))"
    # nothing after it but a word to the other person, another cheer or "how it goes"
    r"(?=[\s!.,~…]*$|[\s,!.]+(?:and|buddy|man|dude|guys|friend|mate|then|too|again|now"
    r"|with it|on how|about how|on your|about your|for your|for you|on the|on my|on our|on all"
    r"|about the|about my|about our|[a-z][a-z]+[!.]*$)\b)"
    # an aim held up: "keep pushing for your goals", "let's keep spreading kindness"
    r"|keep\s+(?:pushing|chasing|pursuing|following|spreading|inspiring|motivating"
    r"|supporting|encouraging|helping|working hard|trying|learning|growing|staying|improving"
    r"|doing what you|rocking|making)" + _ASPIRATION + r")" + _MORE_THAN_A_VERDICT,
    _I,
)
#: A guess at what another person feels: "You must feel a great sense of unity", "I can
#: imagine how proud you must feel", "I bet it feels awesome", "you must be so relieved"
#: ("you must be very careful with rm -rf" is a rule).
GUESSED_FEELING = re.compile(
    r"\b(?:you|they|he|she)\s+must\s+(?:feel|be feeling|be (?:(?:so|really|very|super|pretty"
    r"|incredibly|quite)\s+)?(?:proud|relieved|excited|happy|glad|thrilled|stoked|exhausted"
    r"|devastated|heartbroken|tired|nervous|over the moon|on cloud nine))\b"
    r"|^(?:(?:oh|wow|aw+|yeah|and|so|well)[\s,!.]+)*i\s+(?:can|could)\s+(?:only\s+)?imagine\b"
    r"|^(?:(?:oh|wow|aw+|yeah|and|so|well)[\s,!.]+)*i\s+bet\s+(?:it|that|you|they|he|she)\b"
    # after another remark: "'bout the accident! Must have been traumatizing for you guys."
    r"|(?:^|[.!?]\s+)must(?:'ve|\s+have)\s+been\s+(?:(?:so|really|very|pretty|super|such)\s+)*"
    r"(?:traumati[sz]ing|scary|terrifying|hard|tough|rough|awful|painful|stressful|amazing"
    r"|awesome|incredible|wonderful|fun|exciting|special|magical|inspiring|rewarding)\b",
    _I,
)
#: The same in Chinese, as a clause of its own: a cheer ("加油！", "你一定可以的",
#: "继续保持哦") or a guess at a feeling ("一定很有成就感吧", "你肯定很开心吧"); not
#: "加油站要在路线上", "继续保持用中文回复", "你可以的话先mock掉".
ZH_SMALL_TALK = re.compile(
    r"^(?:加油(?!站)|冲鸭|继续保持|保重|(?:你(?:一定|肯定)?|一定|肯定)(?:可以的(?!话)|行的|能行|没问题的)"
    r"|相信你(?:一定)?(?:可以|能行|没问题))[！!~～。.，,哦呀啊吧哈呢的]*$"
    r"|^(?:[你他她]们?)?(?:肯定|一定|应该)(?:很|超|特别|挺|非常|好|超级)[^，,。；;！!？?]{0,8}吧"
    r"[。！!~～]*$"
)


#: A tip: "Barcelona is a must-visit city!", "the ramen there is a must-try" (not "search
#: is a must-have for launch", a requirement).
TIP = re.compile(
    r"\b(?:is|are|'s)\s+(?:an?\s+)?(?:absolute\s+|total\s+|real\s+)?must-(?:visit|see|try|eat"
    r"|go)\b" + _MORE_THAN_A_VERDICT,
    _I,
)


def small_talk(text: str) -> bool:
    """Whether a clause (its text as said) only praises, cheers on or guesses a feeling."""
    return bool(
        VERDICT.match(text)
        or CHEER.match(text)
        or GUESSED_FEELING.search(text)
        or ZH_SMALL_TALK.search(text)
        or TIP.search(text)
    )
