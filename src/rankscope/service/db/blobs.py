"""Qrels and runs stored as compressed Arrow IPC streams (one blob each).

>>> from rankscope import Run
>>> run = Run.from_dict({"q1": {"d1": 0.5, "d2": 0.25}}, name="bm25")
>>> decode_run(encode_table(run), "bm25").to_dict()
{'q1': {'d1': 0.5, 'd2': 0.25}}
"""

from __future__ import annotations

from typing import Any

from rankscope.data import Qrels, Run

__all__ = ["encode_table", "decode_qrels", "decode_run"]


def encode_table(obj: Qrels | Run) -> bytes:
    """Serialize the (query_id, doc_id, value) rows of ``obj``."""
    import pyarrow as pa

    table = obj.to_arrow()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def _read(blob: bytes) -> Any:
    import pyarrow as pa

    return pa.ipc.open_stream(pa.py_buffer(blob)).read_all()


def decode_qrels(blob: bytes) -> Qrels:
    t = _read(blob)
    return Qrels.from_arrays(t.column(0).to_numpy(), t.column(1).combine_chunks(), t.column(2).to_numpy())


def decode_run(blob: bytes, name: str) -> Run:
    t = _read(blob)
    return Run.from_arrays(t.column(0).to_numpy(), t.column(1).combine_chunks(), t.column(2).to_numpy(), name)
