"""``agentbase proposals`` and ``agentbase audit replay`` on a real database: a person lists, shows,
approves and rejects what agents proposed; the log replays into a new file."""

from __future__ import annotations

from agentbase_kernel import Kernel


def _agent_proposes(cli_db, *texts: str) -> list[str]:
    with Kernel(cli_db, embedder=None, ner="regex") as k:
        bot = k.view(agent="bot")
        return [bot.add_memory(t, project_id="hb").proposal_id for t in texts]


def test_protect_list_show_approve_and_reject(ok, ok_json, agentbase, initialised, cli_db) -> None:
    zone = ok("proposals", "protect", "--project-id", "hb").strip()
    assert [z["id"] for z in ok_json("proposals", "zones")] == [zone]
    keep, drop = _agent_proposes(cli_db, "Deploys run on Fridays", "Deploys never run")
    rows = [line.split("\t") for line in ok("proposals", "list").splitlines()]
    assert [(r[0], r[1], r[4]) for r in rows] == [(keep, "pending", "bot"), (drop, "pending", "bot")]
    shown = ok("proposals", "show", keep)
    assert "+Deploys run on Fridays" in shown and "proposer: bot" in shown
    assert ok_json("proposals", "show", keep)["diff"].endswith("+Deploys run on Fridays")
    approved = ok_json("proposals", "approve", keep, "--reviewer", "dana")
    assert approved["status"] == "approved" and approved["decided_by"] == "dana"
    entry = ok_json("get", approved["result_entry_id"])
    assert (entry["l2_full"], entry["source"], entry["trust"]) == ("Deploys run on Fridays", "human_approved", 1.0)
    missing_reason = agentbase("proposals", "reject", drop)
    assert missing_reason.exit_code == 2 and "--reason" in missing_reason.stderr
    assert ok_json("proposals", "reject", drop, "--reason", "not true")["decision_reason"] == "not true"
    assert ok_json("proposals", "list") == []
    assert [p["status"] for p in ok_json("proposals", "list", "--status", "all")] == ["approved", "rejected"]
    again = agentbase("proposals", "approve", keep)
    assert again.exit_code != 0 and "already approved" in again.stderr
    stats = ok_json("stats")
    assert stats["proposals pending"] == 0


def test_unknown_proposal_is_a_clear_error(agentbase, initialised) -> None:
    result = agentbase("proposals", "show", "prop_nope")
    assert result.exit_code != 0 and "No proposal with id 'prop_nope'" in result.stderr
    assert "Traceback" not in result.output


def test_audit_replay_rebuilds_the_file(ok, ok_json, agentbase, initialised, cli_db, tmp_path) -> None:
    ok("add", "Alice drinks green tea", "--user-id", "alice")
    ok("proposals", "protect", "--project-id", "hb")
    [proposal] = _agent_proposes(cli_db, "Deploys run on Fridays")
    ok("proposals", "approve", proposal)
    target = tmp_path / "replayed.db"
    summary = ok_json("audit", "replay", str(target))
    assert summary["applied"] >= 4
    with Kernel(cli_db, embedder=None, ner="regex") as a, Kernel(target, embedder=None, ner="regex") as b:
        assert [(e.id, e.l2_full, e.source) for e in a.list(limit=None)] == \
            [(e.id, e.l2_full, e.source) for e in b.list(limit=None)]
        assert [p.status for p in b.list_proposals(status=None)] == ["approved"]
    again = agentbase("audit", "replay", str(target))
    assert again.exit_code != 0 and "empty target" in again.stderr
    more = ok_json("audit", "replay", str(target), "--from", str(summary["last_sequence"]))
    assert more["applied"] == 0


def test_outcomes_record_list_and_revert(ok, ok_json, agentbase, initialised) -> None:
    memory = ok("add", "The build runs with make ci", "--user-id", "alice").strip()
    out = ok("outcomes", "record", "s1", "failure", "--entry", memory, "--user-id", "alice")
    outcome_id, effect = out.splitlines()
    assert effect.split("\t") == [memory, "1.000", "0.800"]
    assert ok_json("get", memory)["confidence"] == 0.8
    [listed] = ok_json("outcomes", "list", "--session-id", "s1")
    assert (listed["id"], listed["outcome_type"], listed["reverted_at"]) == (outcome_id, "failure", None)
    ok("outcomes", "revert", outcome_id)
    assert ok_json("get", memory)["confidence"] == 1.0
    again = agentbase("outcomes", "revert", outcome_id)
    assert again.exit_code != 0 and "already reverted" in again.stderr
    bad = agentbase("outcomes", "record", "s1", "meh")
    assert bad.exit_code != 0 and "no default value" in bad.stderr
