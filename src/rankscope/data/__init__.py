"""Data model: :class:`Qrels` and :class:`Run`."""

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run

__all__ = ["Qrels", "Run"]
