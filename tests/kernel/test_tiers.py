"""L0/L1 tiers and rule-based session summaries, English and Chinese."""

from __future__ import annotations

import pytest

from agentbase_kernel.text.ner import RegexNer
from agentbase_kernel.text.tiers import L0_MAX, L1_MAX, make_l0, make_l1, summarize_session

LONG = (
    "Hey Mel! I went to the LGBTQ support group yesterday and it was so powerful. "
    "The stories were inspiring and I felt accepted. I want to keep going every week, "
    "maybe even volunteer there once I finish my counseling course later this year."
)
ZH = "我昨天去了北京市的清华大学参观，那里的建筑非常漂亮，学生们也很热情，我们还在校园里吃了午饭，然后去了颐和园散步。"


def test_l0_skips_the_greeting_and_cuts_at_a_word_boundary() -> None:
    l0 = make_l0(LONG)
    assert l0 == "I went to the LGBTQ support group yesterday and…"
    assert len(l0) <= L0_MAX
    assert LONG.find(l0.removesuffix("…") + " ") != -1  # whole words only


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Short one.", id="short"),
        pytest.param("Exactly fifty characters long, not one more: yes!!", id="fifty"),
    ],
)
def test_l0_without_cut_has_no_ellipsis(text: str) -> None:
    assert make_l0(text) == text


def test_l0_only_greeting_is_kept() -> None:
    assert make_l0("Hey Mel!") == "Hey Mel!"


def test_l0_entities_pick_the_informative_sentence() -> None:
    text = "So true. Caroline went to Boston."
    assert make_l0(text) == "So true."
    assert make_l0(text, RegexNer().extract(text)) == "Caroline went to Boston."


def test_l0_chinese_cuts_at_punctuation() -> None:
    l0 = make_l0(ZH)
    assert l0 == "我昨天去了北京市的清华大学参观，那里的建筑非常漂亮，学生们也很热情，我们还在校园里吃了午饭…"
    assert len(l0) <= L0_MAX


def test_l0_chinese_without_punctuation_cuts_at_characters() -> None:
    l0 = make_l0("好" * 120)
    assert l0 == "好" * (L0_MAX - 1) + "…"


def test_l0_blank() -> None:
    assert make_l0("  \n ") == ""


def test_l1_keeps_whole_sentences_up_to_the_limit() -> None:
    l1 = make_l1(LONG)
    assert l1 == (
        "Hey Mel! I went to the LGBTQ support group yesterday and it was so powerful. "
        "The stories were inspiring and I felt accepted. I want to keep going every week, "
        "maybe even volunteer there once I finish my counseling course later this year."
    )
    assert len(l1) <= L1_MAX


def test_l1_cuts_an_overlong_first_sentence() -> None:
    text = " ".join(["word"] * 100) + ". Next sentence."
    l1 = make_l1(text)
    assert len(l1) <= L1_MAX
    assert l1.endswith("word…")


def test_l1_drops_sentences_that_do_not_fit() -> None:
    first = "A" + " sentence" * 30 + "."
    second = "B" + " more" * 30 + "."
    assert make_l1(f"{first} {second}") == first


def test_l1_chinese_joins_sentences_without_spaces() -> None:
    assert make_l1("我住在上海。我喜欢跑步。") == "我住在上海。我喜欢跑步。"


LOCOMO_TURNS = [
    ("Caroline", "Hey Mel! Good to see you! How have you been?"),
    ("Melanie", "Hey Caroline! I've been painting a lot lately, my kids love painting too."),
    ("Caroline", "I went to the LGBTQ support group in Boston yesterday."),
    ("Melanie", "That's amazing, Caroline! Painting helps me relax."),
]


def test_summary_names_speakers_topics_and_count() -> None:
    summary = summarize_session(LOCOMO_TURNS)
    assert summary.startswith("4 turns between Caroline (2), Melanie (2). Topics: ")
    for topic in ("Caroline", "Boston", "LGBTQ", "painting"):
        assert topic in summary
    assert "First request: Good to see you! How have you been?" in summary
    assert len(summary) <= 600


def test_summary_uses_the_first_user_request() -> None:
    turns = [
        ("user", "Can you recommend a hotel in Paris for my trip in May?"),
        ("assistant", "Sure! Hotel Lutetia in Paris is lovely in May."),
        ("user", "Thanks, book the Paris hotel please."),
    ]
    summary = summarize_session(turns)
    assert summary.startswith("3 turns between user (2), assistant (1). Topics: Paris")
    assert "First request: Can you recommend a hotel in Paris for my trip in May?" in summary


def test_summary_chinese() -> None:
    summary = summarize_session([("user", "我想去北京旅游，推荐一些北京的景点吧"), ("assistant", "北京的故宫和颐和园都很值得去。")])
    assert summary.startswith("会话共2轮，发言者：user (1), assistant (1)。话题：北京")
    assert "首个请求：我想去北京旅游" in summary


def test_summary_is_bounded() -> None:
    turns = [("user", LONG), ("assistant", LONG)] * 40
    assert len(summarize_session(turns)) <= 600
    assert len(summarize_session(turns, max_chars=120)) <= 120


def test_summary_of_an_empty_session() -> None:
    assert summarize_session([]) == ""
    assert summarize_session([("user", "  ")]) == ""


def test_summarizer_hook_replaces_the_rules() -> None:
    seen: list[str] = []

    def summarizer(transcript: str) -> str:
        seen.append(transcript)
        return "They talked about Boston."

    assert summarize_session(LOCOMO_TURNS[:2], summarizer=summarizer) == "They talked about Boston."
    assert seen == [
        "Caroline: Hey Mel! Good to see you! How have you been?\n"
        "Melanie: Hey Caroline! I've been painting a lot lately, my kids love painting too."
    ]


def test_blank_summarizer_answer_falls_back_to_rules() -> None:
    assert summarize_session(LOCOMO_TURNS, summarizer=lambda _: " ").startswith("4 turns")


def test_a_one_turn_session_summary_says_turn_not_turns():
    summary = summarize_session([("user", "Remind me to renew my passport")])
    assert summary.startswith("1 turn by user. ")
    assert "1 turns" not in summary
