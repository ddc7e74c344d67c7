"""What an import may write: every record into its own scope, never into a row of another.

An import file names ids, and ids can collide with rows already in the database. The rule:

* a record whose id exists **in the same scope** is the same row: skipped, or replaced when the
  file's ``updated_at`` is newer (re-importing a backup is idempotent);
* a record whose id exists **in another scope** is a *conflict*: the import never changes a row's
  owner, and never writes into a row, session or link of a scope the file does not bring;
* a record that only points somewhere (a message's session, a link's two ends, a history event's
  entry, a session's summary) must point at rows this import wrote or found in its own scope, or at
  nothing at all (the pointer is then dropped, as before).

A conflict fails the import (``on_conflict="fail"``, the default: nothing is written), is left
out (``"skip"``), or, for a row of its own (entry, session, message, memory), is imported under a
new id (``"rekey"``): later records that name the old id follow it. Every conflict is reported.

``user_id=`` / ``agent_id=`` / ``project_id=`` force the scope of every record: the file's own
values are replaced (not filled in), and ids found in another scope are still conflicts, so forcing
a scope never merges the file into someone else's rows.
"""

from __future__ import annotations

import uuid
from typing import Any, Protocol

from ..errors import ImportConflict, InvalidArgument
from ..records import Entry, Scope
from ..store.protocol import EntryStore, SessionStore

__all__ = ["ON_CONFLICT", "Claims", "OwnerStore"]

ON_CONFLICT = ("fail", "skip", "rekey")
_SCOPE_KEYS = ("user_id", "agent_id", "project_id")
_LISTED = 100  # conflicts listed one by one in the summary; the rest are counted


class OwnerStore(EntryStore, SessionStore, Protocol):
    """What the ownership checks read: entries, sessions and messages by id (and a session to make)."""


def _scope(fields: dict[str, Any], *, session: bool = True) -> Scope:
    return Scope(fields.get("user_id"), fields.get("agent_id"), fields.get("project_id"),
                 fields.get("session_id") if session else None)


def _owner(scope: Scope) -> Scope:
    return Scope(scope.user_id, scope.agent_id, scope.project_id)


class Claims:
    """One import's view of ownership: the ids it wrote or found in scope, its renames, its conflicts."""

    def __init__(self, store: OwnerStore, *, on_conflict: str = "fail", forced: dict[str, str] | None = None) -> None:
        if on_conflict not in ON_CONFLICT:
            raise InvalidArgument(f"on_conflict must be one of {', '.join(ON_CONFLICT)}; got {on_conflict!r}",
                                  param="on_conflict")
        self.store = store
        self.on_conflict = on_conflict
        self.forced = {k: v for k, v in (forced or {}).items() if v is not None}
        self.renamed: dict[str, dict[str, str]] = {"entry": {}, "session": {}, "message": {}}
        self.entries: set[str] = set()  # ids (as stored) this import wrote, or found in its own scope
        self.sessions: set[str] = set()
        self.messages: set[str] = set()
        self.hashes: set[str] = set()  # texts of those entries: the only vectors the file may add
        self.histories: set[str] = set()  # deleted entries whose history this import brought
        self.left_out: set[str] = set()  # ids whose record a conflict left out: what names them goes too
        self.conflicts: list[dict[str, Any]] = []
        self.conflict_count = 0

    # -- the summary and the policy ------------------------------------------------------------
    def report(self) -> dict[str, Any]:
        return {"conflicts": self.conflicts, "conflicts_total": self.conflict_count}

    def _conflict(self, where: str, kind: str, record_id: str | None, reason: str, *,
                  rekey: str | None = None, drop: str | None = None) -> str | None:
        """Apply the policy; returns the new id when ``rekey`` names the table to re-key in."""
        if self.on_conflict == "fail":
            raise ImportConflict(
                f"{where}: {kind} {record_id!r} {reason} - an import never writes into another scope's rows. "
                "Leave such records out with on_conflict='skip' (--on-conflict=skip), or import them under new "
                "ids with on_conflict='rekey'", kind=kind, record_id=record_id, where=where)
        new_id = None
        if self.on_conflict == "rekey" and rekey is not None and record_id is not None:
            new_id = _new_id(rekey)
            self.renamed[rekey][record_id] = new_id
        action = "rekeyed" if new_id else (f"dropped {drop}" if drop else "skipped")
        self.conflict_count += 1
        if len(self.conflicts) < _LISTED:
            self.conflicts.append({"where": where, "type": kind, "id": record_id, "reason": reason, "action": action,
                                   **({"new_id": new_id} if new_id else {})})
        return new_id

    def _name(self, table: str, old: str | None) -> str | None:
        return None if old is None else self.renamed[table].get(old, old)

    def force(self, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        """The record with the forced scope in place of its own."""
        if not self.forced:
            return fields
        if kind in ("entry", "session", "memory"):
            return {**fields, **self.forced}
        if kind == "trace":
            return {**fields, "scope": {**(fields.get("scope") or {}), **self.forced}}
        return fields

    # -- rows of their own ----------------------------------------------------------------------
    def entry(self, where: str, fields: dict[str, Any]) -> tuple[dict[str, Any], bool] | None:
        """The entry to write (renamed, pointers checked) and whether its id is already here in its
        scope; ``None`` to leave it out."""
        rec = {**fields, "session_id": self._name("session", fields.get("session_id"))}
        rec["superseded_by"] = self._name("entry", fields.get("superseded_by"))
        rec["id"] = self._name("entry", fields["id"])
        scope = _scope(rec)
        existing = self.store.get_entries([rec["id"]]).get(rec["id"])
        same_row = existing is not None and existing.scope == scope  # a re-import: nothing new is linked
        if rec["session_id"] is not None and not same_row and not self._session_fits(where, "entry", rec, scope):
            self.left_out.add(rec["id"])
            return None
        scope = _scope(rec)
        if existing is not None and existing.scope != scope:
            new_id = self._conflict(where, "entry", rec["id"], "exists in another scope", rekey="entry")
            if new_id is None:
                self.left_out.add(rec["id"])
                return None
            rec["id"], existing = new_id, None
            rec["history"] = [{**event, "id": str(uuid.uuid4())} for event in rec.get("history") or ()]
        target = rec["superseded_by"]
        if target is not None and target not in self.entries:
            other = self.store.get_entries([target]).get(target)
            if other is not None and other.scope != scope:
                self._conflict(where, "entry", rec["id"], "is superseded by an entry of another scope",
                               drop="superseded_by")
                rec["superseded_by"] = None
        return rec, existing is not None

    def _session_fits(self, where: str, kind: str, rec: dict[str, Any], scope: Scope) -> bool:
        """A session-level entry or memory may name a session of its own, never another scope's."""
        sid = rec["session_id"]
        if sid in self.sessions:
            return True
        if sid in self.left_out:
            return False
        session = self.store.find_session(sid)
        if session is None or session.scope == _owner(scope):
            return True
        new_id = self._conflict(where, kind, rec.get("id"), f"names session {sid!r} of another scope",
                                rekey="session")
        if new_id is None:
            return False
        rec["session_id"] = new_id
        return True

    def entry_written(self, rec: dict[str, Any], existed: bool, outcome: str) -> None:
        # "skipped" for a new id: the same text already lives in this scope (dedup), under another id
        if outcome != "skipped" or existed:
            self.entries.add(rec["id"])
            self.hashes.add(rec["content_hash"])

    def session(self, where: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        rec = {**fields, "id": self._name("session", fields["id"])}
        rec["summary_entry_id"] = self._name("entry", fields.get("summary_entry_id"))
        existing = self.store.find_session(rec["id"])
        if existing is not None and existing.scope != _scope(rec, session=False):
            new_id = self._conflict(where, "session", rec["id"], "exists in another scope", rekey="session")
            if new_id is None:
                self.left_out.add(rec["id"])
                return None
            rec["id"] = new_id
        summary = rec["summary_entry_id"]
        if summary in self.left_out:
            rec["summary_entry_id"] = None
        elif summary is not None and summary not in self.entries and self.store.get_entries([summary]):
            self._conflict(where, "session", rec["id"], "names a summary entry that is not in the file",
                           drop="summary_entry_id")
            rec["summary_entry_id"] = None
        self.sessions.add(rec["id"])
        return rec

    def message(self, where: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        rec = {**fields, "session_id": self._name("session", fields["session_id"]),
               "id": self._name("message", fields["id"]), "entry_id": self._name("entry", fields.get("entry_id"))}
        if not self._own_session(where, "message", rec["id"], rec["session_id"]):
            return None
        holder = self.store.message_sessions([rec["id"]]).get(rec["id"])
        if holder is not None and holder != rec["session_id"]:
            new_id = self._conflict(where, "message", rec["id"], "exists in another session", rekey="message")
            if new_id is None:
                self.left_out.add(rec["id"])
                return None
            rec["id"] = new_id
        if rec["entry_id"] in self.left_out:
            rec["entry_id"] = None
        elif rec["entry_id"] is not None and rec["entry_id"] not in self.entries \
                and self.store.get_entries([rec["entry_id"]]):
            self._conflict(where, "message", rec["id"], "names an entry that is not in the file", drop="entry_id")
            rec["entry_id"] = None
        self.messages.add(rec["id"])
        return rec

    def _own_session(self, where: str, kind: str, record_id: str | None, sid: str) -> bool:
        """A message may go only into a session this import brought (or one that does not exist)."""
        if sid in self.sessions:
            return True
        if sid in self.left_out:
            return False
        if self.store.find_session(sid) is None:
            return True  # the store refuses a message without its session, naming it
        self._conflict(where, kind, record_id, f"belongs to session {sid!r}, which is not in the file")
        return False

    def chat_session(self, where: str, sid: str) -> str | None:
        """The session a batch of source messages goes into (renamed), or ``None`` to leave it out.

        A session new to the database is made here in the forced scope (without one, the kernel
        makes it unscoped, as an API write would)."""
        sid = self._name("session", sid) or sid
        if sid in self.sessions:
            return sid
        if sid in self.left_out:
            return None
        if self.store.find_session(sid) is not None:
            self._conflict(where, "chat_message", None, f"belongs to session {sid!r}, which is not in the file")
            return None
        if self.forced:
            self.store.ensure_session(sid, Scope(**self.forced), None)
        self.sessions.add(sid)
        return sid

    def chat_message_ids(self, where: str, sid: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The batch without messages already in ``sid`` (same id: re-import), with ids that exist in
        another session re-keyed or left out."""
        ids = [item["id"] for item in items if item.get("id")]
        holders = self.store.message_sessions(ids) if ids else {}
        kept = []
        for item in items:
            holder = holders.get(item.get("id") or "")
            if holder is None:
                kept.append(item)
            elif holder != sid:
                new_id = self._conflict(where, "chat_message", item["id"], "exists in another session",
                                        rekey="message")
                if new_id is not None:
                    kept.append({**item, "id": new_id})
        return kept

    def memory(self, where: str, fields: dict[str, Any], existing: Entry | None) -> tuple[dict[str, Any], Entry | None] | None:
        """A source memory to write (renamed) and the entry it updates, if that one is in its scope."""
        rec = {**fields, "session_id": self._name("session", fields.get("session_id"))}
        scope = _scope(rec)
        if rec["session_id"] is not None and not self._session_fits(where, "memory", rec, scope):
            return None
        if existing is not None and existing.scope != scope:
            new_id = self._conflict(where, "memory", existing.id, "exists in another scope", rekey="entry")
            if new_id is None:
                self.left_out.add(existing.id)
                return None
            rec["id"], existing = new_id, None
        return rec, existing

    # -- records that only point ----------------------------------------------------------------
    def history(self, where: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        """An event of a deleted entry: never one more event in the history of a row not in the file."""
        rec = {**fields, "entry_id": self._name("entry", fields["entry_id"])}
        if rec["entry_id"] in self.entries or rec["entry_id"] in self.histories:
            return rec
        if rec["entry_id"] in self.left_out:
            return None
        if self.store.get_entries([rec["entry_id"]]):
            self._conflict(where, "history", rec["id"], "is an event of an entry that is not in the file")
            return None
        known = {event.id for event in self.store.history(rec["entry_id"])}
        if known and rec["id"] not in known:
            self._conflict(where, "history", rec["id"], "adds to the history of a deleted entry not in the file")
            return None
        if not known:
            self.histories.add(rec["entry_id"])  # a history this import starts: its next events are its own
        return rec

    def link(self, where: str, kind: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        """``session_entry`` / ``entry_source`` / ``entry_link``: both ends this import's own."""
        ends = {"session_entry": (("session_id", "session"), ("entry_id", "entry")),
                "entry_source": (("entry_id", "entry"), ("message_id", "message")),
                "entry_link": (("src", "entry"), ("dst", "entry"))}[kind]
        rec = dict(fields)
        for name, table in ends:
            rec[name] = self._name(table, fields[name])
            mine = {"entry": self.entries, "session": self.sessions, "message": self.messages}[table]
            if rec[name] in self.left_out:
                return None
            if rec[name] not in mine and self._exists(table, rec[name]):
                self._conflict(where, kind, f"{rec[ends[0][0]]} -> {rec[ends[1][0]]}",
                               f"points at {table} {rec[name]!r}, which is not in the file")
                return None
        return rec

    def _exists(self, table: str, row_id: str) -> bool:
        if table == "entry":
            return bool(self.store.get_entries([row_id]))
        if table == "session":
            return self.store.find_session(row_id) is not None
        return bool(self.store.message_sessions([row_id]))

    def vector(self, fields: dict[str, Any]) -> bool:
        """Only the texts of this import's entries get the file's vectors."""
        return fields["content_hash"] in self.hashes


def _new_id(table: str) -> str:
    return f"msg_{uuid.uuid4().hex}" if table == "message" else str(uuid.uuid4())
