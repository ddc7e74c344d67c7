"""The Markdown mirror: export, a person's edits synced back through ingest, rebuild from the files."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentbase_kernel import AgentBase, InvalidArgument


@pytest.fixture(params=["sqlite", "postgres"])
def location(request, tmp_path):
    return tmp_path / "m.db" if request.param == "sqlite" else request.getfixturevalue("postgres_url")


@pytest.fixture
def kb(location, hash_embedder):
    base = AgentBase(location, embedder=hash_embedder, ner="regex")
    base.sync.initialize()
    yield base.sync
    base.sync.close()


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*"))
            if p.is_file()}


def _fill(kb) -> list[str]:
    ids = [kb.add_memory(text, user_id="alice", category=cat, tags=tags).id for text, cat, tags in [
        ("I like green tea", "preference", ["drink"]), ("My sister lives in Lisbon", None, []),
        ("Book the dentist for May", "todo", ["health"]), ("The wifi password is on the fridge", None, []),
        ("I run on Tuesdays", "habit", [])]]
    ids.append(kb.add_memory("Deploy with make release", agent_id="bot", context_type="skill").id)
    kb.add_messages("s1", [{"role": "user", "content": "Hi, I moved to Porto"},
                           {"role": "assistant", "content": "Noted.\n\nPorto it is."}], user_id="alice")
    return ids


def test_export_writes_one_file_per_memory_in_a_folder_per_scope_and_sessions(kb, tmp_path):
    ids = _fill(kb)
    out = tmp_path / "mirror"
    summary = kb.export_markdown(out)
    assert summary["sessions"] == 1 and summary["memories"] == kb.count() >= 8  # 6 memories, 2 session turns, facts
    files = _files(out)
    tea = files[f"user=alice/{ids[0]}.md"]
    assert tea.startswith(f'---\nid: "{ids[0]}"\ntype: "memory"\nscope: {{"user_id": "alice"}}\n'
                          'category: "preference"\ntags: ["drink"]\ncreated: "')
    assert tea.endswith('trust: 1.0\nconfidence: 1.0\n---\nI like green tea\n')
    assert f"agent=bot/{ids[5]}.md" in files
    session = files["user=alice/sessions/s1.md"]
    assert "### user · " in session and "Noted.\n\nPorto it is.\n" in session
    assert any(p.startswith("user=alice,session=s1/") for p in files)
    alice_only = kb.export_markdown(tmp_path / "alice", user_id="alice")
    assert alice_only["memories"] == kb.count(user_id="alice") == kb.count() - 1


def test_round_trip_edit_three_add_one_delete_one(kb, tmp_path):
    ids = _fill(kb)
    out = tmp_path / "mirror"
    kb.export_markdown(out, user_id="alice")
    before = {e.id: e for e in kb.list(user_id="alice", limit=None)}
    folder = out / "user=alice"
    tea = folder / f"{ids[0]}.md"
    tea.write_text(tea.read_text().replace("I like green tea", "I like jasmine tea"))
    sister = folder / f"{ids[1]}.md"
    sister.write_text(sister.read_text().replace('category: null', 'category: "family"'))
    dentist = folder / f"{ids[2]}.md"
    dentist.write_text(dentist.read_text().replace('tags: ["health"]', 'tags: ["health", "urgent"]'))
    (folder / "new-note.md").write_text("---\ncategory: preference\n---\nI prefer aisle seats\n")
    (folder / f"{ids[3]}.md").unlink()
    report = kb.sync_markdown(out)
    assert sorted(report["updated"]) == sorted(ids[:3]) and report["deleted"] == [ids[3]]
    assert len(report["added"]) == 1 and report["conflicts"] == [] and report["ignored"] == []
    after = {e.id: e for e in kb.list(user_id="alice", limit=None)}
    assert set(after) == set(before) - {ids[3]} | set(report["added"])
    assert after[ids[0]].l2_full == "I like jasmine tea" and after[ids[1]].category == "family"
    assert [t for t in after[ids[2]].tags if not t.startswith("ner_")] == ["health", "urgent"]
    new = after[report["added"][0]]
    assert (new.l2_full, new.category, new.source) == ("I prefer aisle seats", "preference", "human_edited")
    for same in set(before) - set(ids[:4]):
        assert after[same].l2_full == before[same].l2_full and after[same].updated_at == before[same].updated_at
    assert all(after[i].source == "human_edited" for i in ids[:3])
    assert [h.actor for h in kb.history(ids[0])][-1] == "human_edited"
    assert kb.history(ids[3])[-1].event == "DELETE" and kb.history(ids[3])[-1].actor == "human_edited"
    assert {r.kind for r in kb.audit(user_id="alice", limit=20)} >= {"write", "update", "delete"}
    # the directory now reads as an export of the database: a fresh export is byte for byte the same
    fresh = tmp_path / "fresh"
    kb.export_markdown(fresh, user_id="alice")
    assert _files(fresh) == _files(out)
    assert not (folder / "new-note.md").exists()
    assert kb.sync_markdown(out) == {"added": [], "updated": [], "deleted": [], "conflicts": [], "ignored": []}


def test_a_change_on_both_sides_is_reported_and_neither_is_lost(kb, tmp_path):
    entry = kb.add_memory("The meeting is at 10", user_id="u")
    gone = kb.add_memory("Old note", user_id="u")
    out = tmp_path / "m"
    kb.export_markdown(out)
    path = out / "user=u" / f"{entry.id}.md"
    path.write_text(path.read_text().replace("at 10", "at 11"))
    kb.update(entry.id, text="The meeting is at 9", user_id="u")
    (out / "user=u" / f"{gone.id}.md").unlink()
    kb.update(gone.id, text="Old note, still needed", user_id="u")
    report = kb.sync_markdown(out)
    assert {(c["id"], c["reason"]) for c in report["conflicts"]} == {
        (entry.id, "changed in the database and in the file"),
        (gone.id, "file deleted, memory changed in the database")}
    assert kb.get(entry.id).l2_full == "The meeting is at 9" and "at 11" in path.read_text()
    assert kb.get(gone.id).l2_full == "Old note, still needed"
    with pytest.raises(InvalidArgument, match="not synced yet"):
        kb.export_markdown(out)
    assert kb.sync_markdown(out)["conflicts"][0]["id"] == entry.id  # still reported until someone settles it


def test_rebuild_from_markdown_restores_ids_scopes_times_and_sessions(kb, tmp_path, hash_embedder, location):
    ids = _fill(kb)
    out = tmp_path / "mirror"
    kb.export_markdown(out)
    original = {e.id: e for e in kb.list(limit=None)}
    target = tmp_path / "rebuilt.db"
    with AgentBase(target, embedder=hash_embedder, ner="regex").sync as fresh:
        summary = fresh.rebuild_from_markdown(out)
        assert summary["by_type"]["memory"]["inserted"] == len(original)
        rebuilt = {e.id: e for e in fresh.list(limit=None)}
        assert set(rebuilt) == set(original)
        for i, e in original.items():
            r = rebuilt[i]
            assert (r.l2_full, r.scope, r.category, r.created_at, r.context_type) == \
                (e.l2_full, e.scope, e.category, e.created_at, e.context_type)
        assert [m.content for m in fresh.list_messages("s1")] == ["Hi, I moved to Porto", "Noted.\n\nPorto it is."]
        assert fresh.find("jasmine tea or green tea", user_id="alice")[0].id == ids[0]
        again = tmp_path / "again"
        fresh.export_markdown(again)
    assert _files(again) == _files(out)


def test_bad_mirrors_are_invalid_arguments(kb, tmp_path):
    with pytest.raises(InvalidArgument, match="not an agentbase Markdown mirror"):
        kb.sync_markdown(tmp_path)
    kb.add_memory("x one", user_id="u")
    out = tmp_path / "m"
    kb.export_markdown(out)
    (out / "user=u" / "broken.md").write_text("---\nid: 1\nno colon here\n---\ntext\n")
    with pytest.raises(InvalidArgument, match="broken.md"):
        kb.sync_markdown(out)
    (out / "user=u" / "broken.md").write_text("---\ncategory: x\n---\n\n")
    count = kb.count()
    with pytest.raises(InvalidArgument):
        kb.sync_markdown(out)
    assert kb.count() == count
    (out / "user=u" / "broken.md").unlink()
    u_only = tmp_path / "u-only"
    kb.export_markdown(u_only, user_id="u")
    (u_only / "user=v").mkdir()
    (u_only / "user=v" / "x.md").write_text("elsewhere\n")
    with pytest.raises(InvalidArgument, match="outside the mirror"):
        kb.sync_markdown(u_only)
    with pytest.raises(InvalidArgument, match="not a directory"):
        kb.export_markdown(tmp_path / "m" / ".agentbase-mirror.json")
