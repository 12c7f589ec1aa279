"""A vectorized open-addressing hash table from distinct 64-bit keys to row numbers.

Built once from the qrels' (query, doc fingerprint) keys; a run's candidate rows
are looked up all at once.  Linear probing at a load factor of at most 1/2: each
probing round is one numpy gather for every key still unresolved, so the number
of Python steps is the longest probe sequence (a handful), never the number of keys.
"""

from __future__ import annotations

import numpy as np

__all__ = ["KeyTable"]

_MIX = np.uint64(0x9E3779B97F4A7C15)


class KeyTable:
    """Map distinct uint64 ``keys`` to their positions ``0..len(keys)-1``.

    >>> t = KeyTable(np.array([10, 7, 2**40], dtype=np.uint64))
    >>> t.find(np.array([7, 8, 2**40, 10], dtype=np.uint64)).tolist()
    [1, -1, 2, 0]
    """

    def __init__(self, keys: np.ndarray) -> None:
        keys = np.asarray(keys, dtype=np.uint64)
        bits = max(4, (2 * len(keys)).bit_length())
        self._shift = np.uint64(64 - bits)
        self._mask = np.int64((1 << bits) - 1)
        self.keys = np.zeros(1 << bits, dtype=np.uint64)
        self.rows = np.full(1 << bits, -1, dtype=np.int32 if len(keys) < 2**31 else np.int64)
        pending = np.arange(len(keys), dtype=self.rows.dtype)
        slot = self._home(keys)
        while len(pending):
            s = slot[pending]
            free = self.rows[s] < 0
            cand, cs = pending[free], s[free]
            self.rows[cs] = cand  # several keys may claim one slot: the last write wins
            won = self.rows[cs] == cand
            self.keys[cs[won]] = keys[cand[won]]
            pending = np.concatenate((pending[~free], cand[~won]))
            slot[pending] = (slot[pending] + 1) & self._mask

    def _home(self, keys: np.ndarray) -> np.ndarray:
        return ((keys * _MIX) >> self._shift).astype(np.int64)

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Position of each key in the table's ``keys``, or -1 when absent."""
        keys = np.asarray(keys, dtype=np.uint64)
        out = np.full(len(keys), -1, dtype=np.int64)
        pending = np.arange(len(keys), dtype=np.int64)
        slot = self._home(keys)
        while len(pending):
            r = self.rows[slot]
            occupied = r >= 0
            match = occupied & (self.keys[slot] == keys)
            out[pending[match]] = r[match]
            go_on = occupied & ~match
            pending, keys, slot = pending[go_on], keys[go_on], (slot[go_on] + 1) & self._mask
        return out
