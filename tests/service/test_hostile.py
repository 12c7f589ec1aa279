"""Hostile and malformed input (issue 12, failures 1, 4, 5, 6): 4xx with the field, never a 500.

1. compressed uploads are counted while they are decompressed (gzip, zip members, BEIR folders): 413 naming
   the field and the limit;
4. out-of-range integers in dashboard routes and forms: 404 / 422;
5. upload errors name the uploaded file, not the server's temporary file;
6. malformed retriever URLs are refused when the evaluation is created (422).
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile

import pytest
from fastapi.testclient import TestClient

from .conftest import RUN_A, make_client, upload_run, upload_testset

HUGE = "99999999999999999999"


def _gz(text: str) -> bytes:
    return gzip.compress(text.encode(), compresslevel=9)


def _beir_zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


BEIR_QUERIES = b'{"_id": "q1", "text": "first"}\n{"_id": "q2", "text": "second"}\n'
BEIR_QRELS = b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n"


def test_gzip_bomb_is_refused_while_decompressing(db_url: str) -> None:
    with make_client(db_url, max_data_bytes=100_000, max_rows=1_000_000) as c:
        bomb = _gz("q1 0 d1 1\n" * 200_000)  # 2 MB of qrels in ~5 kB
        assert len(bomb) < 20_000
        r = c.post("/api/v1/testsets", files={"file": ("qrels.txt.gz", bomb)}, data={"format": "trec"})
        assert r.status_code == 413, r.text
        err = r.json()["errors"][0]
        assert err["field"] == "file" and "100000" in err["problem"] and "decompress" in err["problem"]
        # the same for a run
        ts = upload_testset(c)
        r = c.post("/api/v1/runs", files={"file": ("run.trec.gz", _gz(RUN_A * 50_000))},
                   data={"test_set_id": str(ts["id"])})
        assert r.status_code == 413 and r.json()["errors"][0]["field"] == "file"
        # a small gzip upload still works, and its rows are read
        r = c.post("/api/v1/runs", files={"file": ("run.trec.gz", _gz(RUN_A))}, data={"test_set_id": str(ts["id"])})
        assert r.status_code == 201 and r.json()["n_rows"] == 5
        assert len(c.get("/api/v1/testsets").json()) == 1


def test_row_limit_counts_rows_while_reading(db_url: str) -> None:
    with make_client(db_url, max_rows=100) as c:
        ts = upload_testset(c)
        r = c.post("/api/v1/runs", files={"file": ("run.trec", RUN_A * 30)}, data={"test_set_id": str(ts["id"])})
        assert r.status_code == 413, r.text
        err = r.json()["errors"][0]
        assert err["field"] == "file" and "100 rows" in err["problem"]
        many = {f"q{i}": {"d1": 1.0} for i in range(150)}  # one line of JSON, 150 rows
        r = c.post("/api/v1/runs", files={"file": ("run.json", json.dumps(many))},
                   data={"test_set_id": str(ts["id"]), "format": "json"})
        assert r.status_code == 413 and "100 rows" in r.json()["errors"][0]["problem"]


def test_zip_members_are_counted_and_only_the_beir_files_extracted(db_url: str) -> None:
    with make_client(db_url, max_data_bytes=200_000) as c:
        big_corpus = b'{"_id": "d1", "text": "' + b"a" * 2_000_000 + b'"}\n'
        archive = _beir_zip({"s/queries.jsonl": BEIR_QUERIES, "s/qrels/test.tsv": BEIR_QRELS,
                             "s/corpus.jsonl": big_corpus})
        assert len(archive) < 50_000
        r = c.post("/api/v1/testsets", files={"file": ("s.zip", archive)}, data={"format": "beir"})
        assert r.status_code == 413, r.text
        err = r.json()["errors"][0]
        assert err["field"] == "file" and "200000" in err["problem"]
        # a big member the BEIR reader does not need is never extracted
        junk = _beir_zip({"s/queries.jsonl": BEIR_QUERIES, "s/qrels/test.tsv": BEIR_QRELS,
                          "s/huge.bin": b"\0" * 5_000_000})
        r = c.post("/api/v1/testsets", files={"file": ("s.zip", junk)}, data={"format": "beir"})
        assert r.status_code == 201, r.text
        assert r.json()["n_queries"] == 2
        # a gzip member (corpus.jsonl.gz) is decompressed under the same count
        nested = _beir_zip({"s/queries.jsonl": BEIR_QUERIES, "s/qrels/test.tsv": BEIR_QRELS,
                            "s/corpus.jsonl.gz": gzip.compress(big_corpus)})
        r = c.post("/api/v1/testsets", files={"file": ("s.zip", nested)}, data={"format": "beir"})
        assert r.status_code == 413, r.text


def test_out_of_range_integers_are_404_or_422(db_url: str) -> None:
    with make_client(db_url) as c:
        ts = upload_testset(c)
        for url in (f"/testsets/{HUGE}", "/testsets/2147483648", f"/compare?test_set_id={HUGE}",
                    "/compare?test_set_id=2147483648", f"/compare?test_set_id=1&run_ids={HUGE}",
                    f"/api/v1/testsets/{HUGE}", f"/api/v1/runs?test_set_id={HUGE}", f"/evaluations/{HUGE}",
                    f"/evaluations/x?baseline={HUGE}"):
            r = c.get(url)
            assert r.status_code in (404, 422), (url, r.status_code, r.text[:300])
        r = c.post("/runs", files={"file": ("r.trec", RUN_A)}, data={"test_set_id": HUGE})
        assert r.status_code in (404, 422), r.text[:300]
        r = c.post("/api/v1/runs", files={"file": ("r.trec", RUN_A)}, data={"test_set_id": HUGE})
        assert r.status_code == 422 and r.json()["errors"][0]["field"] == "test_set_id"
        for form in ({"test_set_id": HUGE, "run_ids": "1", "metrics": "mrr"},
                     {"test_set_id": str(ts["id"]), "run_ids": HUGE, "metrics": "mrr"},
                     {"test_set_id": "2147483648", "run_ids": "1", "metrics": "mrr"}):
            r = c.post("/evaluations", data=form)
            assert r.status_code in (404, 422), (form, r.status_code, r.text[:300])
        r = c.post("/api/v1/evaluations", json={"test_set_id": ts["id"], "run_ids": [int(HUGE)]})
        assert r.status_code == 422


def test_upload_errors_name_the_uploaded_file(client: TestClient) -> None:
    def problem(r: object) -> str:
        assert r.status_code == 422, r.text  # type: ignore[attr-defined]
        text = str(r.json()["errors"][0]["problem"])  # type: ignore[attr-defined]
        assert "rankscope-upload" not in text and "/tmp" not in text and "upload." not in text, text
        return text

    assert problem(client.post("/api/v1/testsets", files={"file": ("my-qrels.txt", "q1 0 d1 1\nq2 0\n")},
                               data={"format": "trec"})).startswith("my-qrels.txt:2:")
    assert problem(client.post("/api/v1/testsets", files={"file": ("my-qrels.txt.gz", _gz("q1 0 d1 1\nq2 0\n"))},
                               data={"format": "trec"})).startswith("my-qrels.txt.gz:2:")
    ts = upload_testset(client)
    assert problem(client.post("/api/v1/runs", files={"file": ("bm25.trec", "q1 Q0 d1 1 3.0 a\nq1 Q0 d2\n")},
                               data={"test_set_id": str(ts["id"])})).startswith("bm25.trec:2:")
    assert "set.jsonl" in problem(client.post("/api/v1/testsets", files={"file": ("set.jsonl", '{"id": 1}\n{oops\n')},
                                              data={"format": "jsonl"}))
    bad = _beir_zip({"s/queries.jsonl": b'{"_id": "q1", "text": "a"}\n{broken\n', "s/qrels/test.tsv": BEIR_QRELS})
    text = problem(client.post("/api/v1/testsets", files={"file": ("mine.zip", bad)}, data={"format": "beir"}))
    assert "mine.zip" in text and "queries.jsonl" in text
    r = client.post("/testsets", files={"file": ("form.txt", "q1 0 d1 1\nq2 0\n")}, data={"format": "trec"})
    assert r.status_code == 422 and "form.txt:2:" in r.text and "rankscope-upload" not in r.text


@pytest.mark.parametrize("url", ["http://:Ä", "http://:80/x", "http://host:99999/x", "http://exa mple.org/",
                                 "http://[::1/x", "https://user@/x"])
def test_malformed_retriever_url_is_422(client: TestClient, url: str) -> None:
    ts = upload_testset(client, name="live")
    run = upload_run(client, ts["id"], RUN_A, "bm25")
    assert run["id"]
    r = client.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"], "retriever_url": url})
    assert r.status_code == 422, r.text
    assert r.json()["errors"][0]["field"] == "retriever_url"
    assert client.get("/api/v1/evaluations").json() == []

