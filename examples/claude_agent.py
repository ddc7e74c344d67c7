"""agentbase as a Claude agent's memory: hooks that recall and record, plus memory tools.

    python examples/claude_agent.py

With the Claude Code CLI and an API key the whole change is one line,
``options = memory.attach(ClaudeAgentOptions(...))``, then ``async with ClaudeSDKClient(options) as client``.
Offline, this example calls the hooks and tools exactly as the SDK does, with the SDK's own hook input types:
UserPromptSubmit -> PreToolUse/PostToolUse for an Edit -> Stop, then the next session's prompt and edit.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path

from claude_agent_sdk import (
    ClaudeAgentOptions,
    PostToolUseHookInput,
    PreToolUseHookInput,
    StopHookInput,
    UserPromptSubmitHookInput,
)

from agentbase_adapters.claude import AgentBaseMemory

path = os.environ.get("AGENTBASE_PATH") or str(Path(tempfile.mkdtemp()) / "memory.db")
CONTEXT = {"signal": None}


def injected(output: dict) -> str:
    return output.get("hookSpecificOutput", {}).get("additionalContext", "(nothing)")


async def turn(memory: AgentBaseMemory, session: str, prompt: str, edit: str, answer: str) -> None:
    base = {"session_id": session, "transcript_path": f"/tmp/{session}.jsonl", "cwd": "/repo"}
    print(f"\n[{session}] prompt: {prompt}")
    out = await memory.on_user_prompt(UserPromptSubmitHookInput(**base, hook_event_name="UserPromptSubmit",
                                                                prompt=prompt), None, CONTEXT)
    print("  UserPromptSubmit adds:", injected(out).replace("\n", "\n    "))
    tool_input = {"file_path": f"/repo/{edit}", "old_string": "...", "new_string": "..."}
    out = await memory.on_pre_tool_use(PreToolUseHookInput(**base, hook_event_name="PreToolUse", tool_name="Edit",
                                                           tool_input=tool_input, tool_use_id="t1"), "t1", CONTEXT)
    print(f"  PreToolUse(Edit {edit}) adds:", injected(out).replace("\n", "\n    "))
    await memory.on_post_tool_use(PostToolUseHookInput(**base, hook_event_name="PostToolUse", tool_name="Edit",
                                                       tool_input=tool_input, tool_response="ok", tool_use_id="t1"),
                                  "t1", CONTEXT)
    await memory.on_stop(StopHookInput(**base, hook_event_name="Stop", stop_hook_active=False,
                                       last_assistant_message=answer), None, CONTEXT)
    memory.flush(60)


async def main() -> None:
    with AgentBaseMemory(path, user_id="alice") as memory:
        options = memory.attach(ClaudeAgentOptions(cwd="/repo", allowed_tools=["Read", "Edit"]))
        print("hooks:", sorted(options.hooks), "| tools:", options.allowed_tools[2:])
        memory.wait_ready(120)
        await turn(memory, "session-1", "The export times out on big accounts, fix it", "src/export.py",
                   "Streamed the export in pages of 500 rows; the timeout is gone.")
        stored = await memory.remember_tool({"content": "Alice wants every fix covered by a test",
                                             "category": "preference"})
        print("\nmemory_remember:", json.loads(stored["content"][0]["text"])["result"])
        await turn(memory, "session-2", "Add CSV output to the export", "src/export.py",
                   "Added a CSV writer next to the JSON one, with a test.")
        found = await memory.search_tool({"query": "export timeout", "top_k": 1})
        print("\nmemory_search:", json.loads(found["content"][0]["text"])["results"][0]["memory"])
    print(f"memories in {path}")


asyncio.run(main())
