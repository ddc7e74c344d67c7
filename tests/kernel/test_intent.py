"""Bilingual intent rules and zero-LLM key phrases."""

from __future__ import annotations

import pytest

from agentbase_kernel.text.intent import INTENTS, detect_intents, key_phrases


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("When did Caroline go to the LGBTQ support group?", {"temporal"}, id="when"),
        pytest.param("How long ago did I adopt my dog?", {"temporal"}, id="how-long-ago"),
        pytest.param("What did I do before the trip to Japan?", {"temporal"}, id="before"),
        pytest.param("Where do I currently live?", {"knowledge_update"}, id="currently"),
        pytest.param("What is my latest job title?", {"knowledge_update"}, id="latest"),
        pytest.param("How many books did I read in total across all sessions?",
                     {"aggregation", "multi_session"}, id="how-many-total"),
        pytest.param("How much did I spend on coffee?", {"aggregation"}, id="how-much"),
        pytest.param("What is my favorite color?", {"preference"}, id="favorite"),
        pytest.param("Can you recommend a restaurant for tonight?", {"preference"}, id="recommend"),
        pytest.param("Which hobbies do I like?", {"preference"}, id="like-verb"),
        pytest.param("What was the weather like?", set(), id="like-not-preference"),
        pytest.param("What is my dog's name?", set(), id="plain-lookup"),
        pytest.param("我什么时候去的北京？", {"temporal"}, id="zh-when"),
        pytest.param("我现在住在哪里？", {"knowledge_update"}, id="zh-now"),
        pytest.param("我一共读了多少本书？", {"aggregation", "multi_session"}, id="zh-how-many"),
        pytest.param("你推荐什么电影？", {"preference"}, id="zh-recommend"),
        pytest.param("我搬家多久了？", {"temporal"}, id="zh-how-long"),
        pytest.param("所有的会议都在哪里？", {"multi_session"}, id="zh-all"),
    ],
)
def test_detect_intents(query: str, expected: set[str]) -> None:
    found = detect_intents(query)
    assert found == expected
    assert found <= set(INTENTS)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("How many books did I read in May?", ["books", "read", "may"], id="how-many-x"),
        pytest.param("how many books did i read in may?", ["books", "read", "may"], id="casefolded-month"),
        pytest.param("may i ask where my dog sleeps?", ["ask", "dog sleeps"], id="modal-may"),
        pytest.param("When did Caroline go to the LGBTQ support group?", ["caroline", "lgbtq support group"],
                     id="noun-chunks"),
        pytest.param("What did Melanie paint after the pottery class?", ["melanie paint", "pottery class"],
                     id="after-splits"),
        pytest.param("What is my dog's name?", ["dog name"], id="possessive"),
        pytest.param("How much money did I spend on concert tickets?", ["money", "spend", "concert tickets"],
                     id="how-much-x"),
        pytest.param("我一共读了多少本书？", ["书"], id="zh-how-many"),
        pytest.param("我什么时候去的北京？", ["北京"], id="zh-chunks"),
        pytest.param("What?", [], id="nothing-left"),
    ],
)
def test_key_phrases(query: str, expected: list[str]) -> None:
    assert key_phrases(query) == expected
