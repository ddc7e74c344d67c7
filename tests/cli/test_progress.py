"""Progress bars on stderr: drawn on a terminal, never into a pipe, never with --quiet."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("initialised")


def test_rebuild_draws_no_bar_into_a_pipe(agentbase, ok):
    ok("add", "one")
    result = agentbase("rebuild")
    assert result.exit_code == 0
    assert result.stderr == ""
    assert "ok:" in result.stdout


def _stderr_on_a_terminal(args: list[str], cwd) -> str:
    """Run the installed command with stderr on a pseudo-terminal; return what it drew there."""
    import fcntl
    import os
    import pty
    import shutil
    import struct
    import subprocess
    import sys
    import termios
    from pathlib import Path

    agentbase = shutil.which("agentbase", path=str(Path(sys.executable).parent))
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a fresh pty is 0 columns wide
    env = {**os.environ, "AGENTBASE_EMBEDDER": "none", "AGENTBASE_NER": "regex"}
    if "://" not in env.get("AGENTBASE_PATH", ""):  # a server database (AGENTBASE_TEST_BACKEND=postgres) stays
        env.pop("AGENTBASE_PATH", None)
    proc = subprocess.run([agentbase, *args], check=False, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=slave, timeout=300)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.returncode == 0, proc.stdout
    return b"".join(chunks).decode(errors="replace")


def test_rebuild_shows_progress_on_a_terminal_unless_quiet(ok, tmp_path):
    ok("add", "one")
    assert "rebuilding" in _stderr_on_a_terminal(["rebuild"], tmp_path)
    assert "rebuilding" not in _stderr_on_a_terminal(["rebuild", "--quiet"], tmp_path)


def _dump_without_vectors(tmp_path) -> None:
    from agentbase_kernel import Kernel

    with Kernel(tmp_path / "src.db", embedder=None, ner="regex") as k:
        k.add_memories([{"text": f"note {i} about the garden", "user_id": "u"} for i in range(120)])
        with open(tmp_path / "dump.jsonl", "w", encoding="utf-8") as out:
            k.export(out, vectors=False)


def test_import_shows_records_then_the_embedding_on_a_terminal(tmp_path):
    _dump_without_vectors(tmp_path)
    drawn = _stderr_on_a_terminal(["--embedder", "minilm", "--db", "new.db", "import", "dump.jsonl"], tmp_path)
    assert "importing" in drawn and "record" in drawn
    assert "embedding texts without a vector" in drawn and "text" in drawn
    assert " B/s" not in drawn and "100%" in drawn  # records, not bytes
    quiet = _stderr_on_a_terminal(["--embedder", "minilm", "--db", "q.db", "import", "dump.jsonl", "--quiet"],
                                  tmp_path)
    assert "importing" not in quiet and "embedding" not in quiet


def test_import_draws_no_bar_into_a_pipe(agentbase, tmp_path):
    _dump_without_vectors(tmp_path)
    result = agentbase("--db", "new.db", "import", "dump.jsonl")
    assert result.exit_code == 0 and "importing" not in result.stderr and "embedding" not in result.stderr
