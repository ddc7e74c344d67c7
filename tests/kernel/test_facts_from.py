"""``ingest.facts_from``: facts extracted from every turn, or only from the user's."""

import pytest

from agentbase_kernel import Config, InvalidArgument, Kernel

USER_SAYS = "I live in Lisbon and my favorite color is green."
ASSISTANT_SAYS = "I would recommend the tram museum. You should try the custard tarts near the river."


def _facts(kernel: Kernel, user_id: str) -> dict[str, list[str]]:
    """The derived fact texts of a scope, by the role of the turn they came from."""
    out: dict[str, list[str]] = {}
    for entry in kernel.list(user_id=user_id, limit=None):
        if entry.metadata.get("derived") == "fact":
            out.setdefault(entry.role or "", []).append(entry.l2_full)
    return out


def _chat(tmp_path, hash_embedder, facts_from: str | None) -> dict[str, list[str]]:
    config = Config() if facts_from is None else Config().with_(ingest={"facts_from": facts_from})
    with Kernel(tmp_path / f"{facts_from}.db", embedder=hash_embedder, ner="regex", config=config) as kernel:
        kernel.add_messages("s1", [{"role": "user", "content": USER_SAYS},
                                   {"role": "assistant", "content": ASSISTANT_SAYS}], user_id="u")
        return _facts(kernel, "u")


def test_by_default_both_turns_yield_facts(tmp_path, hash_embedder):
    facts = _chat(tmp_path, hash_embedder, None)
    assert "User lives in Lisbon" in facts["user"]
    assert any(text.startswith("Assistant said: I would recommend the tram museum") for text in facts["assistant"])
    assert Config().ingest.facts_from == "all"


def test_user_only_drops_the_assistant_turns_facts_and_keeps_the_users(tmp_path, hash_embedder):
    everything, users_only = _chat(tmp_path, hash_embedder, "all"), _chat(tmp_path, hash_embedder, "user")
    assert users_only["user"] == everything["user"]
    assert "assistant" in everything and "assistant" not in users_only


def test_user_only_keeps_the_turn_itself_searchable(tmp_path, hash_embedder):
    config = Config().with_(ingest={"facts_from": "user"})
    with Kernel(tmp_path / "m.db", embedder=hash_embedder, ner="regex", config=config) as kernel:
        kernel.add_messages("s1", [{"role": "assistant", "content": ASSISTANT_SAYS}], user_id="u")
        hits = kernel.find("tram museum", user_id="u")
        assert hits and hits[0].entry.l2_full == ASSISTANT_SAYS


def test_user_only_counts_writes_without_a_role_and_named_or_human_speakers_as_the_users(tmp_path, hash_embedder):
    config = Config().with_(ingest={"facts_from": "user"})
    with Kernel(tmp_path / "m.db", embedder=hash_embedder, ner="regex", config=config) as kernel:
        kernel.add_memory("I work as a nurse.", user_id="plain", infer=True)
        kernel.add_memory(ASSISTANT_SAYS, user_id="bot", role="assistant", infer=True)
        kernel.add_messages("s2", [{"role": "user", "name": "Caroline", "content": "I moved to Porto."}],
                            user_id="named")
        kernel.add_messages("s3", [{"role": "human", "content": "I am allergic to peanuts."},
                                   {"role": "ai", "content": ASSISTANT_SAYS}], user_id="lc")
        assert _facts(kernel, "plain") == {"user": ["User works as a nurse"]}
        assert _facts(kernel, "bot") == {}
        assert _facts(kernel, "named") == {"user": ["Caroline lives in Porto"]}
        assert _facts(kernel, "lc") == {"user": ["User is allergic to peanuts"]}


def test_an_unknown_value_is_refused():
    with pytest.raises(InvalidArgument, match="facts_from"):
        Config().with_(ingest={"facts_from": "assistant"})


def test_env_and_toml_set_it(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTBASE_INGEST__FACTS_FROM", "user")
    assert Config.load().ingest.facts_from == "user"
    monkeypatch.delenv("AGENTBASE_INGEST__FACTS_FROM")
    toml = tmp_path / "agentbase.toml"
    toml.write_text('[ingest]\nfacts_from = "user"\n')
    assert Config.load(toml).ingest.facts_from == "user"
    toml.write_text('[ingest]\nfacts_from = "nobody"\n')
    with pytest.raises(InvalidArgument, match="facts_from"):
        Config.load(toml)
