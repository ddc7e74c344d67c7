"""The smallest memory API: ``remember`` / ``recall`` / ``forget`` (and their ``a``-prefixed async twins).

``who`` is the kernel's ``user_id``; ``tags`` and keyword metadata are stored with the entry. The same
entries are visible to every other adapter on the same file. Written once over the sync kernel;
each ``a``-twin runs its sync method in a worker thread (``agentbase_kernel.in_thread``).
"""

from __future__ import annotations

from collections.abc import Iterable
from os import PathLike
from typing import Any

from agentbase_kernel import AddResult, AgentBase, Hit, InvalidArgument, NotFoundError, in_thread

__all__ = ["MinimalAdapter"]


_SPEAKER_KEYS = ("speaker", "name")
_TIME_KEYS = ("created_at", "timestamp")
_ROLE_KEY = "role"


def _to_record(who: str | None, tags: Iterable[str], metadata: dict[str, Any]) -> dict[str, Any]:
    """``add_memory`` keywords for one ``remember`` call.

    Each ``who``'s memories are one stream (read as a conversation: neighbours give context; a long
    pause starts its next session), one per ``session=`` keyword when given (as a Mem0 ``run_id``);
    a ``speaker=``/``name=`` keyword is also who said it, ``role=`` which side of the conversation
    ("user", "assistant"; default "user": a first-person question ranks the user's own words up),
    and ``created_at=``/``timestamp=`` (a datetime or an ISO string) when it happened. All keywords
    stay in the metadata.
    """
    if isinstance(tags, str):
        raise InvalidArgument(f"tags must be a list of strings, not the string {tags!r} - write tags=[{tags!r}]")
    if tags is None:
        tags = ()
    try:
        tag_list = list(tags)
    except TypeError:
        raise InvalidArgument(f"tags must be a list of strings, got {tags!r}") from None
    if not all(isinstance(tag, str) for tag in tag_list):
        raise InvalidArgument(f"tags must be strings, got {tag_list!r}")
    speaker = next((metadata[k] for k in _SPEAKER_KEYS if isinstance(metadata.get(k), str) and metadata[k]), None)
    when = next((metadata[k] for k in _TIME_KEYS if metadata.get(k) is not None), None)
    role = metadata.get(_ROLE_KEY, "user")
    if not isinstance(role, str) or not role.strip():
        raise InvalidArgument(f"role must be a non-empty string such as 'user' or 'assistant', not {role!r}")
    session = metadata.get("session")
    stream = "minimal" if session is None else f"minimal:{session}"
    return {"user_id": who, "tags": tag_list, "metadata": metadata or None, "actor": speaker, "speaker": speaker,
            "role": role.strip(), "created_at": when, "stream": stream, "split_stream": session is None}


def _from_record(hits: Iterable[Hit]) -> list[Hit]:
    """``recall`` hands back the kernel's own ``Hit`` records."""
    return list(hits)


class MinimalAdapter:
    """Remember text, recall what matches a query, forget by id: the README's first example.

        mem = MinimalAdapter("memory.db")
        entry_id = mem.remember("Alice prefers window seats", who="alice")
        mem.recall("seat preference", who="alice")[0].content
    """

    def __init__(self, db: AgentBase | str | PathLike[str] | None = None, *, defer_embedding: bool | None = True,
                 **options: Any) -> None:
        """Use an open ``AgentBase``, or open one on a path (``None``: ``$AGENTBASE_PATH``, the ``.agentbase`` pointer, ``./agentbase.db`` (``locate_database``)).

        Args:
            db: An ``AgentBase`` (left open by ``close()``), or a path this adapter opens and closes.
            defer_embedding: ``remember`` returns once the text is stored and FTS-searchable; its
                vector follows from a background thread (``flush()`` and ``close()`` wait for it).
                ``None``: the kernel's ``ingest.defer_embedding``.
            **options: ``AgentBase`` options (``embedder=``, ``ner=`` ...) when ``db`` is a path.

        Raises:
            TypeError: ``options`` given together with an already open ``AgentBase``.
        """
        if isinstance(db, AgentBase) and options:
            raise TypeError(f"options {sorted(options)} only apply when MinimalAdapter opens the file itself")
        self._owns_db = not isinstance(db, AgentBase)
        self.db: AgentBase = (db if isinstance(db, AgentBase) else AgentBase(db, **options)).view(source="minimal")
        self.defer_embedding = defer_embedding

    def remember(self, /, text: str, *, who: str | None = None, tags: Iterable[str] = (), **metadata: Any) -> str:
        """Store ``text`` and return its id; storing the same text twice returns the first id.

        Raises:
            InvalidArgument: Empty text, a malformed ``who`` or non-string tags (all ``ValueError``).
        """
        result: AddResult = self.db.sync.add_memory(text, **_to_record(who, tags, metadata),
                                                    defer_embedding=self.defer_embedding)
        return result.id

    def recall(self, query: str, *, who: str | None = None, top_k: int = 5) -> list[Hit]:
        """The best ``top_k`` entries for ``query`` (of ``who`` only, if given), best first.

        Raises:
            InvalidArgument: Empty query or a non-positive ``top_k``.
        """
        _check_top_k(top_k)
        return _from_record(self.db.sync.find(query, top_k=top_k, user_id=who))

    def forget(self, entry_id: str | None = None, *, who: str | None = None) -> int:
        """Forget one entry (``entry_id``) or everything of ``who``; returns how many were forgotten.

        Forgetting an id that is not there returns 0, so ``forget`` is idempotent.

        Raises:
            InvalidArgument: Neither ``entry_id`` nor ``who`` given.
        """
        if entry_id is None:
            if who is None:
                raise InvalidArgument("forget() needs entry_id=... or who=... - use db.sync.reset() to wipe everything")
            return int(self.db.sync.delete_all(user_id=who))
        try:
            self.db.sync.delete(entry_id, user_id=who)
        except NotFoundError:
            return 0
        return 1

    aremember = in_thread(remember)
    arecall = in_thread(recall)
    aforget = in_thread(forget)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything remembered so far is vector-searchable too; ``False`` if ``timeout`` ran out."""
        return self.db.sync.wait_embedded(timeout)

    def close(self) -> None:
        """Wait for pending vectors, then close the database if this adapter opened it; safe to call twice."""
        if self._owns_db:
            self.db.sync.close()
        elif not self.db.sync.closed:
            self.db.sync.wait_embedded()

    def __enter__(self) -> MinimalAdapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_top_k(top_k: Any) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise InvalidArgument(f"top_k must be a positive integer, not {top_k!r}")
