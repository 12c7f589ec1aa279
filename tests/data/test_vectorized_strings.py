"""The vectorized string reads behind the duplicate check and the qrels join (rankscope.data._strings)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rankscope.data._strings import StringBuffers, fingerprint


def _random_strings(rng: np.random.Generator, n: int, max_len: int) -> list[str]:
    alphabet = np.array(list("ab0129-_.é中\x00"))
    return ["".join(rng.choice(alphabet, size=int(rng.integers(0, max_len + 1)))) for _ in range(n)]


def test_equal_strings_equal_fingerprints_whatever_the_layout() -> None:
    rng = np.random.default_rng(3)
    strs = _random_strings(rng, 5000, 40)
    arr = pa.array(strs)
    fp = fingerprint(arr)
    perm = rng.permutation(len(strs))
    np.testing.assert_array_equal(fingerprint(pa.array([strs[i] for i in perm])), fp[perm])
    np.testing.assert_array_equal(fingerprint(arr.slice(7, 300)), fp[7:307])
    np.testing.assert_array_equal(fingerprint(pa.chunked_array([arr.slice(0, 11), arr.slice(11)])), fp)
    np.testing.assert_array_equal(fingerprint(arr.cast(pa.large_string())), fp)


def test_short_strings_of_one_length_never_collide() -> None:
    """Up to 8 bytes the fingerprint is a bijection of (bytes, length): the join relies on it."""
    rng = np.random.default_rng(4)
    raw = rng.integers(0, 256, size=(60_000, 8), dtype=np.uint8)
    for length in (1, 3, 7, 8):
        rows = {bytes(r[:length]) for r in raw}
        values = pa.array(list(rows), type=pa.binary()).cast(pa.string(), safe=False)
        assert len(np.unique(fingerprint(values))) == len(rows)


def test_equal_rows_and_lengths_match_python() -> None:
    rng = np.random.default_rng(5)
    a = _random_strings(rng, 3000, 30)
    b = [s if rng.random() < 0.5 else _random_strings(rng, 1, 30)[0] for s in a]
    b[::7] = [s + "x" for s in a[::7]]
    bufs_a = StringBuffers(pa.chunked_array([pa.array(a[:1000]), pa.array(a[1000:])]))
    bufs_b = StringBuffers(pa.array(b))
    rows_a = rng.permutation(len(a))
    rows_b = rows_a.copy()
    got = bufs_a.equal_rows(rows_a, bufs_b, rows_b)
    assert got.tolist() == [a[i] == b[i] for i in rows_a]
    assert bufs_a.lengths(rows_a).tolist() == [len(a[i].encode()) for i in rows_a]
    assert bufs_b.lengths().tolist() == [len(s.encode()) for s in b]
