"""Build ``assistant_dev.json`` from the conversations written in ``assistant_dev/conv_*.py``.

Usage::

    python benchmarks/data/build_assistant_dev.py [OUT]

Each source file defines ``USER`` (the user's name), ``SESSIONS`` (a list of ``(date, turns)``;
turns alternate user, assistant, user... and each session ends on the assistant's reply; a turn
may open with ``@tag`` so that questions can cite it by name) and ``QA`` (``(question, answer, [tags], kind)`` plus an optional dict with
``superseded`` tags for a knowledge update, or a ``category`` override). Tags become LoCoMo
``dia_id``s here, so a question never cites a turn by a hand-counted number.
"""

from __future__ import annotations

import json
import re
import runpy
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "assistant_dev"
OUT = HERE / "assistant_dev.json"
ASSISTANT = "Assistant"
# the LoCoMo category nearest to each kind, so tooling that reads only categories runs unchanged
CATEGORY = {"knowledge-update": 4, "preference": 3, "aggregation": 1, "multi-session": 1, "temporal": 2,
            "single-session-user": 4, "single-session-assistant": 4, "paraphrase": 4}
_TAG = re.compile(r"@([\w-]+)\s+")


def build_conversation(sample_id: str, source: dict[str, Any]) -> dict[str, Any]:
    user = source["USER"]
    conversation: dict[str, Any] = {"speaker_a": user, "speaker_b": ASSISTANT}
    tags: dict[str, str] = {}
    for n, (when, turns) in enumerate(source["SESSIONS"], start=1):
        conversation[f"session_{n}_date_time"] = when
        session = []
        for pos, raw in enumerate(turns, start=1):
            text = raw.strip()
            match = _TAG.match(text)
            dia_id = f"D{n}:{pos}"
            if match:
                tag = match.group(1)
                if tag in tags:
                    raise ValueError(f"{sample_id}: tag @{tag} used twice")
                tags[tag] = dia_id
                text = text[match.end():]
            session.append({"speaker": user if pos % 2 else ASSISTANT, "dia_id": dia_id, "text": text})
        if len(session) % 2:
            # turns are assigned by position, so an odd count means two user lines were written in a row
            raise ValueError(f"{sample_id} session {n}: every user turn needs an assistant reply")
        conversation[f"session_{n}"] = session
    qa = []
    for item in source["QA"]:
        question, answer, evidence, kind = item[:4]
        extra = item[4] if len(item) > 4 else {}
        unknown = [t for t in [*evidence, *extra.get("superseded", [])] if t not in tags]
        if unknown:
            raise ValueError(f"{sample_id}: {question!r} cites unknown tags {unknown}")
        entry: dict[str, Any] = {"question": question, "answer": answer, "evidence": [tags[t] for t in evidence],
                                 "category": extra.get("category", CATEGORY[kind]), "kind": kind}
        if "superseded" in extra:
            entry["superseded"] = [tags[t] for t in extra["superseded"]]
        qa.append(entry)
    return {"sample_id": sample_id, "conversation": conversation, "qa": qa}


def build() -> list[dict[str, Any]]:
    out = []
    for path in sorted(SOURCES.glob("conv_*.py")):
        number = path.stem.split("_")[1]
        out.append(build_conversation(f"asst-{number}", runpy.run_path(str(path))))
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else OUT
    data = build()
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out}: {len(data)} conversations, {sum(len(c['qa']) for c in data)} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
