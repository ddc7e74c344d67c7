"""Progress bars for bulk commands (tqdm, on stderr): off with ``--quiet`` and when stderr is not a terminal."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["bar", "phase_bar", "shown", "ticker"]


def shown(quiet: bool) -> bool:
    """Whether a bar would be drawn: never with ``--quiet``, never into a pipe or a file."""
    return not quiet and sys.stderr.isatty()


@contextmanager
def bar(description: str, *, quiet: bool, unit: str = "item") -> Iterator[Callable[[int, int], None]]:
    """A ``progress(done, total)`` callback drawing one bar, as the kernel's bulk calls take."""
    from tqdm import tqdm

    with tqdm(desc=description, unit=unit, disable=not shown(quiet), file=sys.stderr, dynamic_ncols=True) as pbar:
        def progress(done: int, total: int) -> None:
            if pbar.total != total:
                pbar.total = total
            pbar.update(done - pbar.n)

        yield progress


@contextmanager
def phase_bar(description: str, *, quiet: bool, unit: str = "item",
              position: int = 1) -> Iterator[Callable[[int, int], None]]:
    """A bar for a later phase (the embedding after an import's records): drawn from its first call
    on, on its own line below the first bar, so a phase that never starts draws nothing."""
    if not shown(quiet):
        yield lambda done, total: None
        return
    from tqdm import tqdm

    pbar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal pbar
        if pbar is None:
            pbar = tqdm(desc=description, unit=unit, total=total or None, file=sys.stderr, dynamic_ncols=True,
                        position=position)
        if pbar.total != (total or None):
            pbar.total = total or None
        pbar.update(done - pbar.n)

    try:
        yield progress
    finally:
        if pbar is not None:
            pbar.close()


@contextmanager
def ticker(description: str, *, quiet: bool) -> Iterator[None]:
    """Elapsed time for a step that reports no progress of its own (redrawn twice a second)."""
    if not shown(quiet):
        yield
        return
    from tqdm import tqdm

    stop = threading.Event()
    pbar: Any = tqdm(desc=description, bar_format="{desc}: {elapsed}", file=sys.stderr)

    def redraw() -> None:
        while not stop.wait(0.5):
            pbar.refresh()

    thread = threading.Thread(target=redraw, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        pbar.close()
