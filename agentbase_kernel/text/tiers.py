"""Rule-based tiers of detail for an entry, and session summaries.

Retrieval returns as much of an entry as the token budget allows::

    L0  make_l0(text)   <= 50 chars   a headline: the lead sentence, cut at a word boundary
    L1  make_l1(text)   <= 300 chars  the first sentences, cut at a word boundary
    L2  the full text (stored as is)

``summarize_session`` condenses a whole session the same way, without an LLM; a caller may pass its
own ``Summarizer`` instead. Chinese has no spaces, so CJK text is cut at punctuation or characters.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from agentbase_kernel.text.ner import Entity, RegexNer, has_cjk

__all__ = ["L0_MAX", "L1_MAX", "SUMMARY_LABELS", "SUMMARY_MAX", "Summarizer", "make_l0", "make_l1", "summarize_session"]

# the words ``summarize_session`` writes around what it found: a name tagger reads "Topics:" as a name
SUMMARY_LABELS = frozenset({"Topics", "First request", "Last", "话题", "首个请求", "最后"})

L0_MAX = 50
L1_MAX = 300
SUMMARY_MAX = 600
ELLIPSIS = "…"

Summarizer = Callable[[str], str]
"""A caller-supplied summariser (say, an LLM call): transcript text in, summary out."""

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？；])|\n+")
_CJK_PUNCT = "，。！？；、：）」』》"
_CJK_BREAKS = "，。！？；、：,.;:!? "
_FILLER = re.compile(
    r"^(?:hi|hey|hello|hiya|yo|ok|okay|sure|thanks|thank you|thx|yes|yeah|yep|no|nope|wow|oh|ah|great|cool|"
    r"nice|awesome|haha|lol|hmm|well|right|good (?:morning|evening|afternoon)|你好|嗨|好的|谢谢|嗯|哈哈)"
    r"(?:[\s,]+\w+)?[\s!.,~?]*$",
    re.IGNORECASE,
)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split(" ")).strip()) if s and s.strip()]


def _cut(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` chars at a word boundary (or CJK punctuation), adding "…"."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    room = limit - len(ELLIPSIS)
    head = text[: room + 1]
    if has_cjk(head[:room]):
        cut = max(head.rfind(ch, 0, room + 1) for ch in _CJK_BREAKS)
        # only back up to punctuation if that keeps most of the room; otherwise cut mid-run
        piece = head[:cut] if cut >= room * 0.6 else head[:room]
    else:
        cut = head.rfind(" ")
        piece = head[:cut] if cut > 0 else head[:room]
    return piece[:room].rstrip(" ,;:-—–，、；：") + ELLIPSIS


def _lead(text: str, entities: Sequence[Entity] = ()) -> str:
    """The first sentence that says something: greetings like "Hey Mel!" are skipped."""
    sentences = _sentences(text)
    useful = [s for s in sentences if not _FILLER.match(s)]
    if not useful:
        return sentences[0] if sentences else ""
    names = [e.text.casefold() for e in entities if len(e.text) > 1]
    lead = useful[0]
    # a very short lead without any entity ("So true.") loses to a next sentence that has one
    if names and len(useful) > 1 and len(lead.split()) <= 3:
        if not any(n in lead.casefold() for n in names) and any(n in useful[1].casefold() for n in names):
            return useful[1]
    return lead


def make_l0(text: str, entities: Iterable[Entity] = ()) -> str:
    """A headline of at most 50 characters.

    Args:
        text: The entry text.
        entities: Entities of ``text``; a lead of three words or fewer that names none of them
            gives way to the next sentence when that one does. Greetings ("Hey Mel!") are always
            skipped when something follows.

    Returns:
        The lead sentence, cut at a word boundary with "…" only when it was cut; "" for blank text.
    """
    return _cut(_lead(text, list(entities)), L0_MAX)


def make_l1(text: str) -> str:
    """The first sentences of ``text`` that fit in 300 characters.

    Returns:
        Whole sentences while they fit; if the first one alone is longer, it is cut at a word
        boundary (or, for Chinese, at punctuation) with "…". "" for blank text.
    """
    sentences = _sentences(text)
    if not sentences:
        return ""
    out = ""
    for sentence in sentences:
        joiner = "" if not out or has_cjk(out[-1:]) or out[-1] in _CJK_PUNCT else " "
        if len(out) + len(joiner) + len(sentence) > L1_MAX:
            break
        out = f"{out}{joiner}{sentence}"
    return out if out else _cut(sentences[0], L1_MAX)


_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
    down during each few for from further get got had hadn't has hasn't have haven't having he he'd he'll
    he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it
    it's its itself just let's like me more most mustn't my myself no nor not now of off on once only or
    other ought our ours ourselves out over own really same shan't she she'd she'll she's should shouldn't
    so some such than that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've this those through to too under until up very was wasn't we we'd we'll we're
    we've were weren't what what's when when's where where's which while who who's whom why why's will with
    won't would wouldn't you you'd you'll you're you've your yours yourself yourselves yeah yes hey hi hello
    thanks thank okay ok sure great good nice awesome cool wow oh lol haha really much many lot lots thing
    things something anything everything one two know think going want make made see well way time really
    love feel felt glad happy sounds sound amazing pretty still even back last next day today yesterday
    always never maybe definitely totally actually kind sort tell told said say says could would should
    that's what's it's let also any much every been being into onto upon us via per etc may""".split()
)
_ZH_STOP = set("的了是我你他她它们在和与也都就还很这那个有吗呢吧啊哦嗯不没要会能想说去来到为对把被让给着过上下中")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")


def _topics(texts: Sequence[str], entities: Sequence[Entity], limit: int = 8) -> list[str]:
    """Entities first (most mentioned first), then frequent non-stopword terms seen at least twice."""
    counts: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for ent in entities:
        if ent.label in {"DATE", "MONEY", "PERCENT", "QUANTITY", "IP"}:
            continue
        counts[ent.norm] += 3
        shown.setdefault(ent.norm, ent.text)
    entity_words = {w for norm in shown for w in norm.split()}
    terms: Counter[str] = Counter()
    for text in texts:
        for word in _WORD.findall(text):
            low = word.casefold().strip("'-")
            if low not in _STOPWORDS and low not in entity_words and len(low) > 2:
                terms[low] += 1
        for run in _CJK_RUN.findall(text):
            for i in range(len(run) - 1):
                gram = run[i : i + 2]
                if not (set(gram) & _ZH_STOP) and gram not in entity_words:
                    terms[gram] += 1
    for term, n in terms.items():
        if n >= 2:
            counts[term] += n
            shown.setdefault(term, term)
    return [shown[key] for key, _ in counts.most_common(limit)]


def _transcript(turns: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"{role}: {content}" for role, content in turns)


def summarize_session(
    turns: Sequence[tuple[str, str]],
    *,
    summarizer: Summarizer | None = None,
    max_chars: int = SUMMARY_MAX,
) -> str:
    """Summarise a session without an LLM: who spoke, the topics, the first request, the turn count.

    Args:
        turns: ``(role, content)`` pairs in order; the role may also be a speaker's name.
        summarizer: Optional caller hook given the transcript ("role: content" lines); its answer
            is used instead of the rule-based summary when it is not blank.
        max_chars: Upper bound on the summary length.

    Returns:
        The summary (at most ``max_chars`` characters), or "" for a session with no content.
    """
    turns = [(role, content) for role, content in turns if content and content.strip()]
    if not turns:
        return ""
    if summarizer is not None:
        answer = summarizer(_transcript(turns)).strip()
        if answer:
            return _cut(answer, max_chars)
    roles = Counter(role for role, _ in turns)
    texts = [content for _, content in turns]
    chinese = sum(has_cjk(t) for t in texts) * 2 > len(texts)
    ner = RegexNer()
    entities = [ent for text in texts for ent in ner.extract(text)]
    topics = _topics(texts, entities)
    first_user = next((c for r, c in turns if r.casefold() in ("user", "human")), None)
    if first_user is None:  # named speakers (LoCoMo): the first turn opens the session
        first_user = texts[0]
    speakers = ", ".join(f"{role} ({n})" for role, n in roles.most_common())
    sentences = _sentences(first_user)
    while len(sentences) > 1 and _FILLER.match(sentences[0]):
        sentences = sentences[1:]  # "Hey Mel!" is not the request
    request = make_l1(" ".join(sentences))
    if chinese:
        parts = [f"会话共{len(turns)}轮，发言者：{speakers}。"]
        if topics:
            parts.append(f"话题：{'、'.join(topics)}。")
        parts.append(f"首个请求：{_cut(request, 200)}")
    else:
        parts = [f"1 turn by {turns[0][0]}." if len(turns) == 1 else f"{len(turns)} turns between {speakers}."]
        if topics:
            parts.append(f"Topics: {', '.join(topics)}.")
        parts.append(f"First request: {_cut(request, 200)}")
    last = texts[-1]
    summary = " ".join(parts) if not chinese else "".join(parts)
    if len(turns) > 1 and len(summary) + 40 < max_chars:
        tail = _cut(make_l1(last), max(40, min(160, max_chars - len(summary) - 12)))
        summary += f"{'。' if chinese and not summary.endswith(('。', '…')) else ' '}" + (
            f"最后：{tail}" if chinese else f"Last: {tail}"
        )
    return _cut(summary, max_chars)
