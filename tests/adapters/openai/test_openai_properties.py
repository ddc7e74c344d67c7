"""Property tests: what goes in through the adapter comes back out unchanged, and the metadata
rules accept exactly what OpenAI accepts."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.beta.threads import Message

from agentbase_adapters.openai import OpenAIAssistantAdapter
from agentbase_adapters.openai._wire import check_metadata
from agentbase_kernel import AgentBase
from agentbase_kernel.errors import InvalidArgument

# The fixture's database is shared across examples on purpose: each example makes its own thread.
shared_db = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
keys = st.text(min_size=1, max_size=64)
values = st.text(max_size=512)


@shared_db
@given(metadata=st.dictionaries(keys, values, max_size=16))
def test_valid_metadata_round_trips(db: AgentBase, metadata: dict[str, str]) -> None:
    oa = OpenAIAssistantAdapter(db)
    metadata = {k: v for k, v in metadata.items() if k not in ("user_id", "agent_id", "project_id")}
    thread = oa.create_thread(metadata=metadata)
    assert oa.retrieve_thread(thread["id"])["metadata"] == metadata


@shared_db
@given(text=st.text(min_size=1).filter(lambda t: t.strip() and "\x00" not in t))
def test_message_text_round_trips(db: AgentBase, text: str) -> None:
    oa = OpenAIAssistantAdapter(db)
    thread = oa.create_thread()
    message = oa.create_message(thread["id"], role="user", content=text)
    back = oa.retrieve_message(thread["id"], message["id"])
    Message.model_validate(back, strict=True)
    assert back["content"][0]["text"]["value"] == text
    assert db.sync.get_message(thread["id"], message["id"]).content == text


@given(
    metadata=st.one_of(
        st.dictionaries(keys, values, min_size=17, max_size=20),
        st.dictionaries(st.text(min_size=65, max_size=80), values, min_size=1, max_size=2),
        st.dictionaries(keys, st.text(min_size=513, max_size=600), min_size=1, max_size=2),
        st.dictionaries(keys, st.integers() | st.none() | st.booleans(), min_size=1, max_size=3),
    )
)
def test_invalid_metadata_is_always_rejected(metadata: dict[str, object]) -> None:
    with pytest.raises(InvalidArgument):
        check_metadata(metadata)
