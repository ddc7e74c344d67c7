"""Tokenising for the full-text index and for safe FTS5 queries (English and CJK).

FTS5's ``unicode61`` tokenizer treats a run of CJK characters as one token, so Chinese text
would only match whole runs. We pre-tokenise CJK runs into overlapping bigrams (single
characters for one-character runs) both when indexing and when querying; Latin text is left
to ``porter unicode61``. Query text is never passed raw to MATCH: it is reduced to words and
each word is quoted, so FTS5 syntax in user input (``"``, ``*``, ``NEAR(``, ``AND``...) is inert.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import Any

__all__ = [
    "STOPWORDS",
    "count_tokens",
    "fts_query",
    "fts_text",
    "has_cjk",
    "normalize",
    "query_terms",
    "tokenizer_name",
    "words",
]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(rf"[{_CJK}]+|[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)

# Dropped from queries (docs/retrieval.md, "Where each default comes from"); they stay in the
# index so phrase-like matches keep working.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can could did didn't do does doesn't doing don't down
    during each few for from further had has have having he he'd he'll he's her here here's hers
    herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    let's me more most my myself no nor not of off on once only or other ought our ours ourselves
    out over own same she she'd she'll she's should so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this
    those through to too under until up very was we we'd we'll we're we've were what what's when
    when's where where's which while who who's whom why why's with would you you'd you'll you're
    you've your yours yourself yourselves also did does just will shall may might must""".split()
)


def normalize(text: str) -> str:
    """NFKC, casefold, strip NUL and control characters, collapse whitespace."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch if ch.isprintable() or ch.isspace() else " " for ch in text)
    return " ".join(text.casefold().split())


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None


def _cjk_grams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def words(text: str) -> list[str]:
    """Lower-cased word tokens; CJK runs become overlapping bigrams."""
    out: list[str] = []
    for match in _WORD.finditer(normalize(text)):
        token = match.group(0)
        if _CJK_RUN.fullmatch(token):
            out.extend(_cjk_grams(token))
        else:
            out.append(token.replace("’", "'"))
    return out


def fts_text(text: str) -> str:
    """The text as it goes into the FTS5 column: Latin words as they are, CJK as bigrams."""
    if not has_cjk(text):
        return text
    return _CJK_RUN.sub(lambda m: " " + " ".join(_cjk_grams(m.group(0))) + " ", text)


def fts_query(text: str, *, drop_stopwords: bool = True, max_terms: int = 48) -> str | None:
    """A safe FTS5 MATCH expression: each word quoted, OR-ed. ``None`` when nothing is left."""
    terms = query_terms(text, drop_stopwords=drop_stopwords, max_terms=max_terms)
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms) if terms else None


def query_terms(text: str, *, drop_stopwords: bool = True, max_terms: int = 48) -> list[str]:
    """The distinct words of a query as FTS terms (stop words dropped unless nothing else is left)."""
    terms: list[str] = []
    seen: set[str] = set()
    for token in words(text):
        token = token.strip("'")
        if not token or token in seen:
            continue
        if drop_stopwords and token in STOPWORDS:
            continue
        seen.add(token)
        terms.append(token)
        if len(terms) >= max_terms:
            break
    if not terms and drop_stopwords:
        return query_terms(text, drop_stopwords=False, max_terms=max_terms)
    return terms


def count_tokens(text: str) -> int:
    """Token count with tiktoken's cl100k_base when installed, else ~4 characters per token."""
    encoder = _encoder()
    if encoder is not None:
        return len(encoder.encode(text, disallowed_special=()))
    return max(1, (len(text) + 3) // 4)


_ENCODER: object | None = None
_ENCODER_TRIED = False


def _encoder() -> Any:
    """tiktoken's cl100k_base, but only from a local cache: it must never download."""
    global _ENCODER, _ENCODER_TRIED
    if not _ENCODER_TRIED:
        _ENCODER_TRIED = True
        cache = _tiktoken_cache()
        if cache is not None:
            try:
                import tiktoken

                previous = os.environ.get("TIKTOKEN_CACHE_DIR")
                os.environ["TIKTOKEN_CACHE_DIR"] = cache
                try:
                    _ENCODER = tiktoken.get_encoding("cl100k_base")
                finally:
                    if previous is None:
                        os.environ.pop("TIKTOKEN_CACHE_DIR", None)
                    else:
                        os.environ["TIKTOKEN_CACHE_DIR"] = previous
            except Exception:
                _ENCODER = None
    return _ENCODER


def _tiktoken_cache() -> str | None:
    """A folder that already holds tiktoken's files (the user's, or LlamaIndex's bundled copy)."""
    import importlib.util

    candidates = [os.environ.get("TIKTOKEN_CACHE_DIR"), os.environ.get("DATA_GYM_CACHE_DIR")]
    spec = importlib.util.find_spec("llama_index")
    for root in (spec.submodule_search_locations or []) if spec else []:
        candidates.append(os.path.join(root, "core", "_static", "tiktoken_cache"))
    for folder in candidates:
        if folder and os.path.isdir(folder) and os.listdir(folder):
            return folder
    return None


def tokenizer_name() -> str:
    """Which counter ``count_tokens`` uses, for traces."""
    return "tiktoken:cl100k_base" if _encoder() is not None else "estimate:4-chars-per-token"
