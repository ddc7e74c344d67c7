"""Zero-LLM fact extraction by pattern, and a memory-poisoning check.

``extract_facts`` turns first-person statements into short normalised facts::

    "I live in Paris and I love jazz."  (role="user")
        Fact("User lives in Paris", "profile", subject="location", predicate="lives_in")
        Fact("User likes jazz", "preference", subject="preference:jazz", predicate="likes")

``subject`` is the supersession key: a later fact with the same subject replaces the earlier one
("I moved to Berlin" supersedes "I live in Paris"; "I hate jazz" supersedes "I love jazz").
Facts that can pile up (possessions, events, plans, friends) have ``subject=None``.

Who a statement is about depends on the role: ``"user"``/``"human"`` -> "User" (Chinese: "用户"),
a named speaker such as ``"Caroline"`` -> "Caroline" (subjects get a ``caroline:`` prefix, so two
speakers sharing a scope never supersede each other), ``"assistant"`` -> only "Assistant said/
recommended ..." facts: an assistant's "I love jazz" or "you live in Paris" is never made a fact
about the user. ``"system"``/``"tool"`` turns give no facts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["CATEGORIES", "Fact", "extract_facts", "looks_like_instruction"]

CATEGORIES: tuple[str, ...] = ("assistant", "event", "plan", "possession", "preference", "profile", "relationship")


@dataclass(frozen=True)
class Fact:
    """One fact stated in a message.

    Usage::

        [fact] = extract_facts("My name is Caroline.")
        fact.text, fact.subject  # ('User's name is Caroline', 'name')
    """

    text: str
    category: str
    subject: str | None
    predicate: str


# --- shared pieces --------------------------------------------------------------------------

_ADV = r"(?:(?:really|also|just|absolutely|truly|still|totally|actually|definitely|genuinely|kind of|sort of" \
    r"|recently|finally|currently|now|always|usually|personally|especially|do|did|have|had)\s+)*"
_IM = r"(?:i'm|i am|im)"
_END = (
    r"(?=\s+(?:and (?:i|i'm|then|we|my|now|it|it's|that|also|am)|but|because|since|so that|so|which|when|while"
    r"|although|though|if|as well|right now|these days|lately|at the moment)\b|\s*[.,;!?\n(]|\s+-\s|\s*$)"
)
_OBJ = r"(?P<obj>[^.,;!?\n]{1,80}?)"
_SKIP_OBJECTS = frozenset(
    """it that this them those these him her you one so too much something anything everything
    nothing stuff things a lot lots""".split()
)
_TRAILING_FILLER = re.compile(
    r"\s+(?:a lot|so much|very much|too|as well|a bit|anymore|any more|though|lol|haha|now|again)$", re.IGNORECASE
)
_PROPER = re.compile(r"^(?:the\s+)?[A-Z][\w'’.-]*(?:(?:\s+|,\s*)(?:of\s+|de\s+)?[A-Z][\w'’.-]*)*")


def _clean(obj: str) -> str:
    obj = " ".join(obj.split()).strip(" \"'“”‘’")
    previous = None
    while previous != obj:
        previous = obj
        obj = _TRAILING_FILLER.sub("", obj)
    return obj


def _proper(obj: str) -> str:
    """Trim to the leading proper noun ("Berlin and started a job" -> "Berlin") when there is one."""
    m = _PROPER.match(obj)
    return m.group().rstrip(", ") if m else obj


def _key(obj: str) -> str:
    return " ".join(re.sub(r"^(?:the|a|an|my|their)\s+", "", obj.casefold()).split())


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    category: str
    predicate: str
    template: str  # {s} = speaker, {o} = object, {x} = the "x" group
    subject: Callable[[str, re.Match[str]], str | None]
    proper: bool = False  # trim the object to a proper noun when it starts with one


def _fixed(name: str) -> Callable[[str, re.Match[str]], str | None]:
    return lambda obj, m: name


def _keyed(prefix: str) -> Callable[[str, re.Match[str]], str | None]:
    return lambda obj, m: f"{prefix}:{_key(obj)}"


def _none(obj: str, m: re.Match[str]) -> str | None:
    return None


_DIETS = frozenset({"vegetarian", "vegan", "pescatarian", "pescetarian", "carnivore", "omnivore", "keto"})
_JOB_SUFFIXES = ("er", "or", "ist", "ian", "ant", "ent", "eer", "ive", "nurse", "doctor", "chef", "teacher",
                 "student", "lawyer", "coach", "artist", "scientist", "designer", "developer", "manager", "mom",
                 "dad", "parent", "retiree", "freelancer", "consultant", "intern", "professor", "vet", "pilot")
_NOT_IDENTITY = re.compile(
    r"^(?:bit|little|lot|big fan|huge fan|fan|bit of|fan of|good|great|little bit|tad|fairly|pretty|very|"
    r"really|bit worried|proud|happy|sucker for|part of|member of|firm believer|believer|fun)\b",
    re.IGNORECASE,
)




def _identity_subject(obj: str, m: re.Match[str]) -> str | None:
    last = obj.casefold().split()[-1] if obj.split() else ""
    if last in _DIETS:
        return "diet"
    return "job" if last.endswith(_JOB_SUFFIXES) else None


_UNIQUE_RELATIONS = frozenset({"wife", "husband", "partner", "boyfriend", "girlfriend", "fiance", "fiancee",
                               "fiancé", "fiancée", "mother", "mom", "mum", "father", "dad", "boss"})


def _relation_subject(obj: str, m: re.Match[str]) -> str | None:
    relation = m["x"].casefold()
    return f"relation:{relation}" if relation in _UNIQUE_RELATIONS else None


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_I = r"(?<![\w'])i\s+"
_RELATIONS = (
    r"(?P<x>wife|husband|partner|boyfriend|girlfriend|fianc[eé]e?|sister|brother|mother|mom|mum|father|dad|son"
    r"|daughter|best friend|friend|colleague|coworker|co-worker|boss|roommate|cousin|aunt|uncle|grandma"
    r"|grandmother|grandpa|grandfather|niece|nephew|kid|child|baby|dog|cat|puppy|kitten|pet)"
)

_EN_RULES: tuple[_Rule, ...] = (
    _Rule(_r(rf"\bmy name is\s+{_OBJ}{_END}|\b(?:call me|{_IM} called)\s+(?P<o2>[A-Z][\w'-]+)"),
          "profile", "name", "{s}'s name is {o}", _fixed("name"), proper=True),
    _Rule(_r(rf"{_I}{_ADV}work(?:ing)? as\s+{_OBJ}{_END}"), "profile", "job", "{s} works as {o}",
          _fixed("job")),
    _Rule(_r(rf"(?:{_I}{_ADV}work|{_IM}\s+{_ADV}working)\s+(?:at|for)\s+{_OBJ}{_END}"), "profile", "works_at",
          "{s} works at {o}", _fixed("employer"), proper=True),
    _Rule(_r(rf"(?:{_I}{_ADV}(?:live|reside)|{_IM}\s+{_ADV}(?:living|based|staying))\s+in\s+{_OBJ}{_END}"),
          "profile", "lives_in", "{s} lives in {o}", _fixed("location"), proper=True),
    _Rule(_r(rf"(?:{_I}{_ADV}(?:moved|relocated)|{_IM}\s+{_ADV}moving|i've\s+{_ADV}moved)\s+(?:back\s+)?to\s+{_OBJ}{_END}"),
          "profile", "lives_in", "{s} lives in {o}", _fixed("location"), proper=True),
    _Rule(_r(rf"(?:{_IM}\s+{_ADV}(?:originally\s+)?from|{_I}{_ADV}(?:come from|grew up in))\s+{_OBJ}{_END}"),
          "profile", "from", "{s} is from {o}", _fixed("origin"), proper=True),
    _Rule(_r(rf"{_IM}\s+{_ADV}(?:severely\s+|very\s+|mildly\s+)?allergic to\s+{_OBJ}{_END}"), "profile",
          "allergic_to", "{s} is allergic to {o}", _keyed("allergy")),
    _Rule(_r(rf"{_IM}\s+(?P<obj>\d{{1,3}})(?:\s+years?\s+old|\s*(?:yo|y/o)\b)|{_I}(?:just\s+)?turned\s+(?P<o2>\d{{1,3}})\b"),
          "profile", "age", "{s} is {o} years old", _fixed("age")),
    _Rule(_r(rf"\bmy birthday is\s+(?:on\s+)?{_OBJ}{_END}"), "profile", "birthday", "{s}'s birthday is {o}",
          _fixed("birthday")),
    _Rule(_r(rf"\bmy (?P<x>e-?mail(?: address)?|phone(?: number)?|address)\s+is\s+(?P<obj>\S+(?:\s+\S+){{0,6}}?){_END}"),
          "profile", "contact", "{s}'s {x} is {o}", lambda o, m: m["x"].casefold().split()[0]),
    _Rule(_r(rf"\bmy\s+(?:favou?rite|fave)\s+(?P<x>[a-z]+(?:\s+[a-z]+)?)\s+(?:is|are|was)\s+{_OBJ}{_END}"),
          "preference", "favorite", "{s}'s favourite {x} is {o}", lambda o, m: f"favorite:{_key(m['x'])}"),
    _Rule(_r(rf"(?:{_I}{_ADV}(?:don't|do not|didn't|never|can't|cannot|can not)\s+(?:really\s+)?(?:like|enjoy|love|stand)"
             rf"|{_I}{_ADV}(?:hate|dislike|detest|loathe|can't stand))\s+{_OBJ}{_END}"),
          "preference", "dislikes", "{s} dislikes {o}", _keyed("preference")),
    _Rule(_r(rf"{_I}{_ADV}prefer\s+{_OBJ}{_END}"), "preference", "prefers", "{s} prefers {o}",
          lambda o, m: f"preference:{_key(re.split(r' (?:over|to|rather than|instead of) ', o)[0])}"),
    _Rule(_r(rf"(?:{_I}{_ADV}(?:love|like|enjoy|adore)|{_IM}\s+{_ADV}(?:a\s+(?:big|huge)\s+)?(?:fan of|into|passionate about|obsessed with))"
             rf"\s+{_OBJ}{_END}"),
          "preference", "likes", "{s} likes {o}", _keyed("preference")),
    _Rule(_r(rf"\bmy\s+(?:new\s+|little\s+|older\s+|younger\s+|big\s+|best\s+)?{_RELATIONS}(?:'s name is|\s+is named|\s+is called|\s+named|\s+called|,)?\s+"
             rf"(?-i:(?P<obj>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?))"),
          "relationship", "relationship", "{s}'s {x} is {o}", _relation_subject),
    _Rule(_r(rf"(?:{_I}{_ADV}|i've\s+{_ADV})(?P<x>have|own|bought|purchased|adopted|got)\s+"
             rf"(?P<obj>(?:a|an|one|two|three|four|five|\d+|some|new|my own|a new|my first)\s+[^.,;!?\n]{{1,60}}?){_END}"),
          "possession", "has", "{s} {x} {o}", _none),
    _Rule(_r(rf"(?:{_IM}\s+{_ADV}(?:going|planning|hoping|about) to|{_I}{_ADV}(?:will|plan to|intend to|want to|am going to)|i'll\s+{_ADV})"
             rf"\s*{_OBJ}{_END}"),
          "plan", "plans", "{s} plans to {o}", _none),
    _Rule(_r(rf"{_I}{_ADV}(?P<x>went to|visited|started|attended|joined|finished|completed|graduated from|"
             rf"signed up for|ran|traveled to|travelled to|volunteered at|participated in|took part in)\s+{_OBJ}{_END}"),
          "event", "did", "{s} {x} {o}", _none),
    # only "I'm a/an X" and diets: "I'm gonna ...", "I'm down", "I'm all about ..." say nothing lasting
    _Rule(_r(rf"{_IM}\s+(?P<obj>an?\s+[^.,;!?\n]{{1,80}}?|(?:a\s+)?(?:{'|'.join(sorted(_DIETS))})){_END}"), "profile",
          "is", "{s} is {o}", _identity_subject),
)

_SKIP_PLAN = re.compile(r"^(?:be|to|my|your|you|it|that|this|ever|keep (?:you|u) (?:posted|updated)|try|see|let|have to|need"
                        r"|say|tell|check|just|do my best|remember|never forget|make sure|stay|get 'em|visit$"
                        r"|keep (?:going|pushing|on|it up|working|at it|trying|chasing|doing)"
                        r"|keep that in mind|think|get back)\b", re.IGNORECASE)
_SKIP_POSSESSION = re.compile(r"\b(?:question|idea|feeling|chance|time|minute|second|moment|look|go|try|lot of|lot to|a no|"
                              r"great time|good time|blast|problem)\b", re.IGNORECASE)
_SKIP_IDENTITY = re.compile(r"^(?:not|so|sure|sorry|glad|happy|going|planning|trying|thinking|doing|feeling|here|"
                            r"back|fine|okay|ok|good|great|tired|excited|looking|just|really|also|still|always|"
                            r"currently|getting|working|about|in|at|on|with|from|into|allergic|\d)\b", re.IGNORECASE)


# --- Chinese ----------------------------------------------------------------------------------

_ZH_JOBS = ("师", "员", "生", "家", "者", "医生", "老师", "工程师", "经理", "护士", "律师", "司机", "厨师")
_ZH_OBJ = r"(?P<obj>[^，。！？、；,.!?;\s]{1,30}?)"
_ZH_END = r"(?=[，。！？、；,.!?;\s]|但|因为|所以|而且|了$|$)"
_ZH_RULES: tuple[_Rule, ...] = (
    _Rule(re.compile(rf"我(?:的名字)?(?:叫|名叫|的名字是)\s*{_ZH_OBJ}{_ZH_END}"), "profile", "name", "{s}叫{o}",
          _fixed("name")),
    _Rule(re.compile(rf"我(?:现在|目前)?(?:住在|搬到了?|生活在)\s*{_ZH_OBJ}{_ZH_END}"), "profile", "lives_in",
          "{s}住在{o}", _fixed("location")),
    _Rule(re.compile(rf"我(?:现在|目前)?在{_ZH_OBJ}(?:工作|上班){_ZH_END}"), "profile", "works_at", "{s}在{o}工作",
          _fixed("employer")),
    _Rule(re.compile(rf"我对{_ZH_OBJ}过敏"), "profile", "allergic_to", "{s}对{o}过敏", _keyed("allergy")),
    _Rule(re.compile(rf"我(?:很|也|真的|特别|非常|一直)?(?:不喜欢|讨厌|不爱|受不了)\s*{_ZH_OBJ}{_ZH_END}"), "preference",
          "dislikes", "{s}不喜欢{o}", _keyed("preference")),
    _Rule(re.compile(rf"我(?:很|也|真的|特别|非常|最|一直|超)?(?:喜欢|爱|热爱|偏爱|喜爱)(?!过)\s*{_ZH_OBJ}{_ZH_END}"),
          "preference", "likes", "{s}喜欢{o}", _keyed("preference")),
    _Rule(re.compile(rf"我(?:最)?喜欢的(?P<x>[^，。！？\s是]{{1,6}})是{_ZH_OBJ}{_ZH_END}"), "preference", "favorite",
          "{s}最喜欢的{x}是{o}", lambda o, m: f"favorite:{m['x']}"),
    _Rule(re.compile(rf"我(?:有|养了|买了)(?P<obj>[一两三四五六七八九十几\d][^，。！？\s]{{1,20}}?){_ZH_END}"),
          "possession", "has", "{s}有{o}", _none),
    _Rule(re.compile(rf"我(?:打算|准备|计划|要|想要|将要|会)\s*{_ZH_OBJ}{_ZH_END}"), "plan", "plans", "{s}打算{o}", _none),
    _Rule(re.compile(rf"我(?:昨天|上周|今天|最近)?(?P<x>去了|参加了|开始了|加入了)\s*{_ZH_OBJ}{_ZH_END}"), "event", "did",
          "{s}{x}{o}", _none),
    _Rule(re.compile(rf"我的(?P<x>妻子|老婆|丈夫|老公|女朋友|男朋友|妈妈|母亲|爸爸|父亲|姐姐|妹妹|哥哥|弟弟|朋友|儿子|女儿|老板)"
                     rf"(?:叫|是)\s*{_ZH_OBJ}{_ZH_END}"),
          "relationship", "relationship", "{s}的{x}是{o}", lambda o, m: f"relation:{m['x']}"),
    _Rule(re.compile(rf"我是{_ZH_OBJ}{_ZH_END}"), "profile", "is", "{s}是{o}",
          lambda o, m: "origin" if o.endswith("人") else ("job" if o.endswith(_ZH_JOBS) else None)),
)

# --- assistant turns ------------------------------------------------------------------------

_ASSISTANT_RE = _r(
    r"\b(?P<x>i (?:would |'d )?(?:recommend|suggest|advise)|you (?:should|could|might want to) (?:try|consider|use|visit|read|watch)"
    r"|i(?:'ve| have) (?:added|saved|scheduled|booked|created|set up|updated|noted|booked)|i (?:added|saved|scheduled|booked|created|noted)"
    r"|here (?:is|are) (?:a|an|the|some|your))\b"
)
_ZH_ASSISTANT_RE = re.compile(r"我(?:建议|推荐)|你可以(?:试试|考虑)|我已经(?:添加|保存|安排|预订|记下)|建议你")

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_USER_ROLES = frozenset({"user", "human", "me"})
_SILENT_ROLES = frozenset({"system", "tool", "function", "developer"})


def _sentences(text: str) -> list[str]:
    text = text.replace("’", "'").replace("‘", "'")
    return [s.strip() for s in _SENTENCE_SPLIT.split(text) if s and s.strip()]


def _speaker(role: str, chinese: bool) -> tuple[str, str]:
    """(label used in fact text, subject prefix)."""
    if role.casefold() in _USER_ROLES:
        return ("用户" if chinese else "User"), ""
    name = role.strip()
    return name, f"{name.casefold()}:"


def _apply(rules: Iterable[_Rule], sentence: str, label: str, prefix: str, zh: bool) -> list[Fact]:
    found: list[tuple[int, Fact]] = []
    for rule in rules:
        for m in rule.pattern.finditer(sentence):
            groups = m.groupdict()
            raw = groups.get("obj") or groups.get("o2")
            if not raw:
                continue
            obj = raw.strip() if zh else _third_person_pronouns(_clean(raw))
            if rule.proper and not zh:
                obj = _proper(obj)
            if not obj or obj.casefold() in _SKIP_OBJECTS:
                continue
            if not zh and not _keep(rule, obj):
                continue
            subject = rule.subject(obj, m)
            extra = (groups.get("x") or "").strip()
            if rule.predicate == "has" and not zh:
                extra = _POSSESSION_VERBS.get(extra.casefold(), extra)
            if rule.predicate == "plans" and not zh and re.match(r"^(?:[A-Z]|the |a |an )", obj):
                obj = f"go to {obj}"  # "I'm going to Japan": a place, not a verb
            text = rule.template.format(s=label, o=obj, x=extra.casefold() if not zh else extra)
            found.append((m.start(), Fact(text, rule.category, f"{prefix}{subject}" if subject else None, rule.predicate)))
    found.sort(key=lambda pair: pair[0])
    return [fact for _, fact in found]


_POSSESSION_VERBS = {"have": "has", "own": "owns", "got": "has", "purchased": "bought"}


_FIRST_PERSON = {"my": "their", "mine": "theirs", "myself": "themselves", "me": "them"}
_FIRST_PERSON_RE = re.compile(r"\b(?:my|mine|myself|me)\b", re.IGNORECASE)


def _third_person_pronouns(obj: str) -> str:
    """"my grandma" -> "their grandma": the fact is told about the speaker, not by them."""
    return _FIRST_PERSON_RE.sub(lambda m: _FIRST_PERSON[m.group().casefold()], obj)


_VAGUE_OBJECT = re.compile(r"^(?:[-–—:]|(?:this|that|these|those|it|them|is|was|are|were|you|your)\b|.*\bi'm\b)",
                           re.IGNORECASE)


def _keep(rule: _Rule, obj: str) -> bool:
    if _VAGUE_OBJECT.match(obj):
        return False
    if rule.predicate == "plans":
        return not _SKIP_PLAN.match(obj) and len(obj.split()) <= 12
    if rule.predicate == "has":
        return not _SKIP_POSSESSION.search(obj)
    if rule.predicate == "is":
        bare = re.sub(r"^an?\s+", "", obj, flags=re.IGNORECASE)
        return not _SKIP_IDENTITY.match(bare) and not _NOT_IDENTITY.match(bare) and len(bare.split()) <= 5
    if rule.predicate in ("likes", "dislikes", "prefers"):
        return not re.match(r"^(?:to (?:say|think|know|hear|see)|that|how|the idea|when|it when)\b", obj, re.IGNORECASE)
    return True


def extract_facts(text: str, *, role: str = "user", entities: Iterable[object] = ()) -> list[Fact]:
    """Extract short normalised facts from one message, without an LLM.

    Args:
        text: The message content, English or Chinese.
        role: ``"user"`` (facts about "User"), ``"assistant"`` (only "Assistant said ..." facts),
            ``"system"``/``"tool"`` (none), or a speaker's name (facts about that name).
        entities: Entities already found in ``text`` (``Entity`` objects or strings); names among
            them are also matched as subjects of third-person statements ("Caroline moved to Paris").

    Returns:
        Deduplicated facts in text order; empty when nothing matched.
    """
    if not text or not text.strip() or role.casefold() in _SILENT_ROLES:
        return []
    is_assistant = role.casefold() in ("assistant", "ai", "bot")
    facts: list[Fact] = []
    names = {str(getattr(e, "text", e)).strip() for e in entities}
    for sentence in _sentences(text):
        zh = _CJK.search(sentence) is not None
        if is_assistant:
            if (_ZH_ASSISTANT_RE if zh else _ASSISTANT_RE).search(sentence):
                said = sentence if len(sentence) <= 200 else sentence[:197].rsplit(" ", 1)[0] + "..."
                facts.append(Fact(f"助手说：{said}" if zh else f"Assistant said: {said}", "assistant", None, "said"))
            continue
        label, prefix = _speaker(role, zh)
        facts.extend(_apply(_ZH_RULES if zh else _EN_RULES, sentence, label, prefix, zh))
        if not zh:
            facts.extend(_third_person(sentence, names))
    return _dedupe(facts)


_THIRD = _r(
    r"(?-i:\b(?P<who>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))\s+(?P<verb>lives in|moved to|works as an?|works as|works at|works for"
    r"|is allergic to|loves|likes|enjoys|adores|hates|dislikes|adopted|bought|went to|visited|started|joined)\s+"
    + _OBJ + _END
)
_THIRD_MAP = {
    "lives in": ("profile", "lives_in", "lives in", "location", True),
    "moved to": ("profile", "lives_in", "lives in", "location", True),
    "works as": ("profile", "job", "works as", "job", False),
    "works at": ("profile", "works_at", "works at", "employer", True),
    "works for": ("profile", "works_at", "works at", "employer", True),
    "is allergic to": ("profile", "allergic_to", "is allergic to", "allergy:", False),
    "loves": ("preference", "likes", "likes", "preference:", False),
    "likes": ("preference", "likes", "likes", "preference:", False),
    "enjoys": ("preference", "likes", "likes", "preference:", False),
    "adores": ("preference", "likes", "likes", "preference:", False),
    "hates": ("preference", "dislikes", "dislikes", "preference:", False),
    "dislikes": ("preference", "dislikes", "dislikes", "preference:", False),
    "adopted": ("possession", "has", "adopted", None, False),
    "bought": ("possession", "has", "bought", None, False),
    "went to": ("event", "did", "went to", None, False),
    "visited": ("event", "did", "visited", None, False),
    "started": ("event", "did", "started", None, False),
    "joined": ("event", "did", "joined", None, False),
}
_NOT_NAMES = frozenset({"He", "She", "It", "They", "This", "That", "There", "Who", "What", "Everyone", "Nobody",
                        "We", "I", "You", "Then", "So", "Also", "Today", "Yesterday", "Everybody", "Somebody",
                        "Someone", "User", "Assistant", "My", "Your", "Our", "His", "Her", "The", "And", "But"})


def _third_person(sentence: str, names: set[str]) -> list[Fact]:
    """Facts stated about a named person ("Caroline moved to Paris"): a bonus over first person."""
    facts: list[Fact] = []
    pos = 0
    # search, not finditer: the object of one match may hide the next ("... Boston and Melanie loves ...")
    while (m := _THIRD.search(sentence, pos)) is not None:
        pos = m.start("verb")
        who = m["who"]
        if who.split()[0] in _NOT_NAMES or (names and who not in names and who.split()[0] not in names):
            continue
        verb = re.sub(r"\s+an?$", "", m["verb"].casefold())
        category, predicate, phrase, subject, proper = _THIRD_MAP[verb]
        obj = _clean(m["obj"])
        obj = _proper(obj) if proper else obj
        if not obj or obj.casefold() in _SKIP_OBJECTS or _VAGUE_OBJECT.match(obj):
            continue
        key = None
        if subject is not None:
            key = f"{who.casefold()}:{subject}{_key(obj) if subject.endswith(':') else ''}"
        facts.append(Fact(f"{who} {phrase} {obj}", category, key, predicate))
    return facts


def _dedupe(facts: list[Fact]) -> list[Fact]:
    seen: set[str] = set()
    out = []
    for fact in facts:
        key = fact.text.casefold()
        if key not in seen:
            seen.add(key)
            out.append(fact)
    return out


# --- memory poisoning -----------------------------------------------------------------------

_INSTRUCTION_RE = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|my\s+)*"
    r"(?:previous|prior|above|earlier|preceding|former|existing|original)\s+"
    r"(?:instructions?|prompts?|rules?|directions?|guidelines?|messages?|context)"
    r"|\b(?:ignore|disregard)\s+(?:all|everything)\s+(?:above|before|previous|prior)"
    r"|\byou are now\b|\bfrom now on,? you (?:are|will|must)\b|\bact as (?:if you are|an?)\b.{0,40}\b(?:unrestricted|jailbr)"
    r"|\bsystem prompt\b|\b(?:new|updated) instructions?\s*:|\bjailbreak\b|\bdo anything now\b|\bdeveloper mode\b"
    r"|\breveal (?:your|the) (?:instructions|prompt|system)"
    r"|忽略(?:之前|以上|前面|先前|所有)的?(?:所有)?(?:指令|指示|提示|规则|说明)|无视(?:之前|以上|前面)的?(?:指令|指示|规则)"
    r"|你现在是|系统提示词?|从现在起你(?:是|将|必须)",
    re.IGNORECASE,
)


def looks_like_instruction(text: str) -> bool:
    """True if ``text`` reads like a prompt injection aimed at whoever later reads this memory.

    Such memories are stored with a flag rather than dropped: the caller decides. Phrases covered
    include "ignore previous instructions", "disregard all prior ...", "you are now", "system
    prompt" and "忽略之前的指令".
    """
    return bool(text) and _INSTRUCTION_RE.search(text) is not None
