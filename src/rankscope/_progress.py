"""One progress bar for every long step (a retriever over a test set, judging, synthetic questions, the demo's
indexing): rich, on stderr, gone when done, a no-op when disabled.

>>> with progress_bar("nothing to see", 3, enabled=False) as bar:
...     bar.advance(), bar.update(2, 3)
(None, None)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ProgressBar", "progress_bar"]


class ProgressBar:
    """What a step does with its bar: ``advance()`` one item, or ``update(done, total)`` (the form retrievers'
    ``progress=`` callbacks take)."""

    def __init__(self, bar: Any = None, task: Any = None) -> None:
        self._bar, self._task = bar, task

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)

    def update(self, done: int, total: int) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=total)


@contextmanager
def progress_bar(label: str, total: int, enabled: bool) -> Iterator[ProgressBar]:
    """A bar labelled ``label`` (already in the reader's language) for ``total`` items; a no-op when ``enabled`` is
    false or there is nothing to do."""
    if not enabled or total == 0:
        yield ProgressBar()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        yield ProgressBar(bar, bar.add_task(label, total=total))
