"""Whether a statement announces that something changed, and whether it only asks (no LLM, no model).

Latest first (``retrieve/updates.py``) lifts a later statement over an earlier one on the same
topic. Two plain-text signals tell it more about the later statement than its topic can:

- it **announces a change** in a sentence that states something ("they switched me to
  amlodipine", "swim is changing again for summer", "we said yes to Lakeside Hall instead"): such a
  statement replaces an earlier value even when it shares few words with the question;
- it **only asks** ("What time should I aim for?"): a question states no new value, so it replaces
  nothing, however close its topic;
- it is **about someone else** ("Joanne says groceries are cheaper there. She spends $600 a
  month"): it does not replace the asker's own value.

The change words are verbs and adverbs of replacement in general English, not a list of topics.
"now" and "new" are left out: "Nia is smiling now", "a new roof" are everywhere in conversation.

    announces_change("I called. They switched me to amlodipine, 5 mg.")   # "switched"
    announces_change("Should I change my goal?")                         # None: it asks
    only_asks("Any first project ideas?")                                 # True
"""

from __future__ import annotations

import re

__all__ = ["about_someone_else", "announces_change", "only_asks"]

_CHANGE = re.compile(
    r"\b(?:anymore|any more|no longer|no more|instead|switch(?:ed|es|ing)?|chang(?:e|ed|es|ing)|mov(?:ed|ing)|"
    r"went (?:up|down)|gone (?:up|down)|increased|decreased|raised|lowered|replaced)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# "(8:05 am on 22 October, 2024) Maya: ..." - a leading date label is not part of what was said
_LABEL = re.compile(r"^\s*\([^)]{0,80}\)\s*")


def announces_change(text: str) -> str | None:
    """The change word of the first stated (not asked) sentence that has one, else ``None``."""
    for sentence in _SENTENCE.split(_LABEL.sub("", text, count=1)):
        if sentence.rstrip().endswith("?"):
            continue
        found = _CHANGE.search(sentence)
        if found:
            return found.group(0).casefold()
    return None


def only_asks(text: str) -> bool:
    """Whether the statement ends in a question: it asks for something rather than stating a value."""
    return text.rstrip().endswith("?")


_THIRD = re.compile(r"\b(?:he|she|him|his|her|hers|he's|she's)\b", re.IGNORECASE)
_FIRST = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|we|we're|we've|we'd|we'll|us)\b", re.IGNORECASE)


def about_someone_else(text: str) -> bool:
    """Whether a sentence of it is about a third person: he / she, and no I / we in that sentence.

    "She spends $600 a month" is; "She increased my dose, so I take 1000 mg" is not.
    """
    return any(_THIRD.search(s) and not _FIRST.search(s) for s in _SENTENCE.split(_LABEL.sub("", text, count=1)))
