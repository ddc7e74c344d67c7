"""OpenAI Assistants-style code on agentbase: only the client construction changes.

Starts the wire-compatible server on a free loopback port (uvicorn in a thread), then runs
ordinary ``client.beta.threads`` code against it. Runs offline: no model is bundled, so a small
responder function writes the assistant's replies from what agentbase retrieves.

    python examples/openai_threads.py
"""

from __future__ import annotations

import socket
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import uvicorn
from openai import OpenAI

from agentbase_adapters.openai import create_app
from agentbase_kernel import AgentBase

# The SDK deprecates its own Assistants API; the drop-in still serves code that uses it.
warnings.filterwarnings("ignore", message="The Assistants API is deprecated", category=DeprecationWarning)


def responder(messages: list[dict[str, str]], context: list[dict[str, Any]]) -> str:
    """Stands in for a model: answers from the memories agentbase found for the last message."""
    question = messages[-1]["content"]
    remembered = [c["content"] for c in context if c["content"] != question][:2]
    if not remembered:
        return "Noted."
    return "From what you told me: " + " / ".join(remembered)


def assistants_code(client: OpenAI) -> str:
    """Unchanged Assistants code: a thread, some messages, a run, the reply."""
    thread = client.beta.threads.create(metadata={"user_id": "alice", "agent_id": "travel-bot"})
    client.beta.threads.messages.create(
        thread.id, role="user", content="I'm vegetarian and I love spicy food."
    )
    client.beta.threads.messages.create(thread.id, role="user", content="Next week I fly to Osaka.")
    client.beta.threads.messages.create(thread.id, role="user", content="What food should I try there?")
    run = client.beta.threads.runs.create_and_poll(thread_id=thread.id, assistant_id="asst_travel")
    print(f"run {run.id}: {run.status}")
    for message in client.beta.threads.messages.list(thread_id=thread.id, order="asc"):
        print(f"  {message.role:>9}: {message.content[0].text.value}")  # type: ignore[union-attr]
    return thread.id


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    path = Path(tempfile.mkdtemp()) / "threads.db"
    with AgentBase(path) as db:
        port = free_port()
        app = create_app(db, api_key="sk-local", responder=responder)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.01)
        try:
            # The one changed line: point the real client at agentbase.
            client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-local")
            thread_id = assistants_code(client)
        finally:
            server.should_exit = True
        print("\nThe same messages are memories in alice's scope:")
        for hit in db.sync.find("food preferences", user_id="alice", top_k=3):
            where = "this thread" if hit.entry.session_id == thread_id else "elsewhere"
            print(f"  {hit.score:.3f}  [{hit.entry.role}, {where}] {hit.content}")


if __name__ == "__main__":
    main()
