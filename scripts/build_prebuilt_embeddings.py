"""Build the document embeddings the demo ships (``src/rankscope/datasets/<name>/embeddings/``).

    PYTHONPATH=src python scripts/build_prebuilt_embeddings.py cmrc2018 --model multilingual-e5-small

Embeds every passage of a bundled dataset with the model (as ``DenseRetriever`` does: the model's
document prefix, no truncation) and writes ``<model hash>.npz`` (vectors keyed by the SHA-256 of
each text, see :func:`rankscope.retrieval.dense.write_prebuilt`) plus a ``.json`` note.
``DenseRetriever(prebuilt_dir=...)`` re-embeds a few of them before trusting the file.  About 25
minutes for CMRC 2018 (848 passages) with multilingual-e5-small on 2 busy cores.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rankscope.datasets import load_dataset
from rankscope.retrieval.dense import DenseRetriever, write_prebuilt

ROOT = Path(__file__).resolve().parents[1] / "src" / "rankscope" / "datasets"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--model", default="multilingual-e5-small")
    args = parser.parse_args()
    corpus = load_dataset(args.dataset).corpus
    assert corpus is not None
    start = time.perf_counter()
    dense = DenseRetriever(corpus, args.model, cache=False, batch_size=16,
                           progress=lambda done, total: print(f"{done}/{total}", flush=True))
    assert dense.model_id is not None
    texts = [dense.doc_prefix + t for t in corpus.values()]
    path = write_prebuilt(ROOT / args.dataset / "embeddings", dense.model_id, texts, dense.embeddings)
    print(f"{path} ({len(texts)} documents, {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
