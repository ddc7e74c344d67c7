"""Kernel.prefetch on a bare session scope reads that session's profile, never the whole file's."""

from __future__ import annotations


def test_a_session_only_scope_reads_only_its_own_profile(kernel) -> None:
    kernel.add_memory("Alice is allergic to nuts", user_id="alice", category="fact")
    kernel.add_memory("This chat prefers short answers", session_id="chat-9", category="preference")
    found = kernel.prefetch("hello", session_id="chat-9")
    assert [e.l2_full for e in found.profile] == ["This chat prefers short answers"]
    assert "Alice" not in found.text()
    # with a user, the profile is the user's, read across their sessions
    assert [e.l2_full for e in kernel.prefetch("hello", user_id="alice", session_id="x").profile] == [
        "Alice is allergic to nuts"]
