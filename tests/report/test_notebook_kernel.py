"""The notebook displays in a real Jupyter kernel: every display shows an image or HTML.

A notebook is executed by nbclient in an IPython kernel (ipykernel, with matplotlib-inline's backend as Jupyter
sets it), without ``%matplotlib inline``: a result, a comparison, their plots, a gate, a test set and a DataFrame,
each the last expression of its cell or passed to ``display``.  Each output must carry ``image/png`` or
``text/html`` — a figure that only says ``<Figure size 400x320 with 1 Axes>`` fails.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

SETUP = """\
import rankscope as rs
from rankscope.gate import check
qrels = rs.Qrels.from_dict({f"q{i}": {f"d{i}": 1, f"e{i}": 2} for i in range(12)})
bm25 = rs.Run.from_ranked_lists({f"q{i}": ["x", f"d{i}", f"e{i}"] if i % 2 else [f"e{i}", "x"] for i in range(12)},
                                name="bm25")
dense = rs.Run.from_ranked_lists({f"q{i}": [f"e{i}", f"d{i}"] for i in range(12)}, name="dense")
result = rs.evaluate(qrels, dense, ["ndcg@10", "mrr", "recall@5"])
comparison = rs.compare(qrels, {"bm25": bm25, "dense": dense}, ["ndcg@10", "mrr"])
"""
CELLS = [
    SETUP + "result",
    "comparison",
    'rs.plot(comparison, "ndcg@10")',
    "rs.plot(result)",
    'from IPython.display import display\ndisplay(rs.plot(comparison, "mrr"))\ndisplay(result)',
    'check(qrels, bm25, ["mrr>=0.5"], preset="production:minimum", baseline=dense, max_drops=["ndcg@10=0.02"])',
    'rs.TestSet([rs.data.testset.Query("q1", "what is BM25")], {"q1": {"d1": 1}}, name="mini")',
    "comparison.to_dataframe()",
]


@pytest.mark.slow
def test_every_display_of_a_kernel_shows_an_image_or_html(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    client = nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    shown = 0
    for cell in nb.cells:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, (cell.source, errors)
        displays = [o for o in cell.outputs if o.output_type in ("execute_result", "display_data")]
        assert displays, cell.source
        for output in displays:
            assert {"image/png", "text/html"} & set(output.data), (cell.source, output.data.get("text/plain"))
            if "image/png" in output.data:
                assert base64.b64decode(output.data["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
            shown += 1
    assert shown == len(CELLS) + 1  # the cell with two display() calls shows both
    assert sum("image/png" in o.data for c in nb.cells for o in c.outputs if "data" in o) == 3
