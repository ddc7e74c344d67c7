"""Rule-based, bilingual query analysis for retrieval (no LLM).

``detect_intents`` tells retrieval which strategies to switch on::

    temporal          "when", "how long", "ago", "before", "什么时候", "多久"   -> date filters, time ordering
    knowledge_update  "current", "latest", "still", "现在", "最新"              -> prefer the newest fact
    multi_session     "all the", "every", "total", "across", "所有", "总共"     -> wider recall, group by session
    preference        "prefer", "favorite", "recommend", "喜欢", "推荐"          -> preference facts
    aggregation       "how many", "how much", "count", "多少", "一共"           -> collect, then count

``key_phrases`` breaks a question into the noun-ish chunks worth searching for separately.
"""

from __future__ import annotations

import re

__all__ = ["INTENTS", "asks_for_recommendation", "detect_intents", "key_phrases"]

INTENTS: tuple[str, ...] = ("aggregation", "knowledge_update", "multi_session", "preference", "temporal")


def _words(*phrases: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(phrases) + r")\b", re.IGNORECASE)


_RULES: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "temporal": (
        _words(
            "when", "what time", "what date", "which day", "which year", "which month", "what year", "what month",
            "first time", "last time", "before", "after", "since", "how long", "ago", "until", "till", "during",
            "earlier", "later", "recently", "yesterday", "today", "tomorrow", "last (?:week|month|year|weekend)",
            "next (?:week|month|year|weekend)", "in (?:19|20)\\d\\d", "date", "first", "order",
            "(?:january|february|march|april|june|july|august|september|october|november|december)",
        ),
        re.compile(r"多久|之前|以前|之后|以后|什么时候|何时|哪天|哪一天|哪年|哪个月|几点|几号|第一次|最近|昨天|上周|去年|上个月|多长时间"),
    ),
    "knowledge_update": (
        _words("current", "currently", "latest", "now", "still", "anymore", "any more", "these days", "nowadays",
               "most recent", "updated?", "changed?", "new", "at the moment", "today"),
        re.compile(r"当前|最新|现在|目前|如今|还在|仍然|依然|更新|改成|换成"),
    ),
    "multi_session": (
        _words("all the", "all of", "all my", "every", "each", "total", "in total", "across", "altogether",
               "overall", "so far", "throughout", "combined", "list (?:all|every)", "ever"),
        re.compile(r"所有|总共|全部|每次|每个|一共|合计|累计|至今|历次|哪些"),
    ),
    "preference": (
        _words("prefer", "prefers", "preferred", "preference", "favou?rite", "recommend", "recommendation",
               "suggest", "suggestion", "likes?", "loves?", "enjoys?", "dislikes?", "hates?", "fan of", "into",
               "would i", "should i", "ideas? for"),
        re.compile(r"偏好|推荐|喜欢|爱好|最爱|讨厌|建议|口味|兴趣"),
    ),
    "aggregation": (
        _words("how many", "how much", "count", "number of", "total", "sum", "in total", "how often",
               "how many times", "altogether", "average"),
        re.compile(r"多少|一共|几次|几个|几本|几天|总共|总计|合计|数量|平均"),
    ),
}
# "like" in "what is X like" / "looks like" is not a preference
_NOT_PREFERENCE = re.compile(r"\b(?:what (?:is|was|are|were) .{1,40} like|look(?:s|ed)? like|like this|like that)\b",
                             re.IGNORECASE)


def detect_intents(query: str) -> set[str]:
    """The retrieval intents a question shows, by keyword rules (English and Chinese).

    Args:
        query: The question.

    Returns:
        A subset of ``INTENTS``; empty for a plain lookup ("What is my dog's name?").
    """
    found: set[str] = set()
    for intent, (english, chinese) in _RULES.items():
        if english.search(query) or chinese.search(query):
            found.add(intent)
    if "preference" in found and _NOT_PREFERENCE.search(query):
        rest = _NOT_PREFERENCE.sub(" ", query)
        if not (_RULES["preference"][0].search(rest) or _RULES["preference"][1].search(rest)):
            found.discard("preference")
    return found


_QUESTION_WORDS = frozenset(
    """what whats what's which who whom whose when where why how do does did is are was were am can could
    would should will shall may might must have has had tell show list give remind find me my i you your
    we our us they them their he she his her it its the a an of to in on at for from with about by as
    and or but if than that this these those there here any some many much more most few lot lots
    ever all every each total number times time kind sort type please just really also again so did
    know remember recall mentioned mention said say says told talk talked again still currently now
    like get got go went been being be do done doing make made before after since during until till across
    when while between""".split()
)
_MONTH_CONTEXT = frozenset({"in", "during", "since", "of", "last", "next", "this", "early", "late", "mid", "until"})
_HOW_MANY = re.compile(r"\bhow (?:many|much)\s+(?P<x>[\w' -]+?)(?:\s+(?:do|does|did|have|has|had|is|are|was|were|"
                       r"can|could|will|would|should|in|on|at|for|since|during|this|that)\b|[?.,!]|$)", re.IGNORECASE)
_ZH_HOW_MANY = re.compile(r"(?:多少|几)(?:个|次|本|天|只|件|位|家|部|首|种)?(?P<x>[\u4e00-\u9fff]{1,8}?)(?:[？?。，,]|$|吗|呢)")
_ZH_QUESTION = re.compile(r"什么时候|什么|怎么样|怎么|为什么|哪些|哪里|哪个|哪儿|多少|多久|是否|有没有|吗|呢|吧|我|你|的|了|是|在|过|和|一共|总共|所有|最近|现在")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")


def key_phrases(query: str) -> list[str]:
    """Split a question into search phrases, without an LLM.

    "How many books did I read in May?" gives ``["books", "read", "may"]``: the counted thing
    first, then the runs of content words left after dropping question words and stop words.
    Chinese questions are split at question words and particles.

    Returns:
        Lower-cased phrases, deduplicated, in order of importance.
    """
    phrases: list[str] = []
    m = _HOW_MANY.search(query)
    if m:
        counted = " ".join(w for w in m["x"].casefold().split() if w not in _QUESTION_WORDS)
        if counted:
            phrases.append(counted)
    zm = _ZH_HOW_MANY.search(query)
    if zm and zm["x"]:
        phrases.append(zm["x"])
    # runs of consecutive content words are noun-ish chunks ("support group", "pottery class")
    run: list[str] = []
    tokens = _TOKEN.findall(query)
    for i, token in enumerate([*tokens, ""]):
        low = token.casefold().replace("’", "'").removesuffix("'s")
        # the month, not the modal verb: "in May", "read in may" (retrieval passes casefolded text)
        month = low == "may" and i > 0 and (token == "May" or tokens[i - 1].casefold() in _MONTH_CONTEXT)
        if low and (month or low not in _QUESTION_WORDS) and len(low) > 1:
            run.append(low)
            continue
        if run:
            phrases.append(" ".join(run))
            run = []
    for chunk in _ZH_QUESTION.split("".join(re.findall(r"[\u4e00-\u9fff]+|\s", query))):
        chunk = chunk.strip().lstrip("个次本天只件位家部首种")  # measure words left by 多少/几
        if len(chunk) >= 2:
            phrases.append(chunk)
    seen: set[str] = set()
    out: list[str] = []
    for phrase in phrases:
        if phrase not in seen:
            seen.add(phrase)
            out.append(phrase)
    return out


# "What is my manager's name", "Which days do I train", "How much is the rent now": a question in the
# present tense, or one that says "now" / "these days", asks how things stand today. "Where did I
# live", "What was my first car", "before", "used to" ask about the past.
_PRESENT_AUX = re.compile(r"^\W*(?:\w+\W+){0,3}?(?:is|are|am|do|does)\b|^\W*\w+'s\b", re.IGNORECASE)
_NOW = re.compile(r"\b(?:now|currently|current|these days|nowadays|lately|latest|most recent|at the moment|"
                  r"at last count|anymore|any more|still)\b", re.IGNORECASE)
_PAST_TENSE = re.compile(r"\b(?:did|was|were|had)\b", re.IGNORECASE)
_THEN = re.compile(r"\b(?:used to|first|originally|before|previous|previously|formerly|ago|in (?:19|20)\d\d)\b",
                   re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|mine|myself|we|we're|we've|us|our|ours)\b", re.IGNORECASE)
_SECOND_PERSON = re.compile(r"\b(?:you|you're|you've|your|yours|yourself)\b", re.IGNORECASE)


def asks_current(query: str) -> bool:
    """Whether a question asks how things stand now, so that a later statement outranks an earlier one.

    True when it says so ("... now?", "... these days?", "at the moment") or asks in the present
    tense about the asker ("Who is my manager?", "What metformin dose am I taking?"). False for the
    past ("Who was my manager in 2023?", "before the move") and for a third party in the present
    tense ("What activities does Melanie partake in?"): that asks for habits over time, not a value
    that changed (on LoCoMo reordering those cost a point of hit@10, docs/retrieval.md).
    """
    if _THEN.search(query):
        return False
    if _NOW.search(query):
        return True
    return bool(_PRESENT_AUX.search(query)) and not _PAST_TENSE.search(query) and asks_about_self(query)


def asks_about_self(query: str) -> bool:
    """A question in the first person only ("What's my rent?", "Where do we live?").

    In a user's memory it asks about what the user said, not what the other party said:
    "What did you recommend?" is second person and is not one.
    """
    return bool(_FIRST_PERSON.search(query)) and not _SECOND_PERSON.search(query)


_RECOMMEND = re.compile(r"\b(?:recommend\w*|suggest\w*|advice|advise|ideas?|tips?|should i|could you|can you|"
                        r"help me|what are some|any good|prefer\w*|favou?rite)\b", re.IGNORECASE)


def asks_for_recommendation(query: str) -> bool:
    """A request for advice or options ("What would you recommend?", "Any ideas for ...?")."""
    return _RECOMMEND.search(query) is not None
