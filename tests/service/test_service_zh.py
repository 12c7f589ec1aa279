"""The service in Chinese (issue 17 §5): its errors say themselves in Chinese, a dashboard page shows a user's
mistake in the page's language, ``rankscope serve`` says its settings' errors in the session's language, and the
JSON API keeps its English problems (what clients match on)."""

from __future__ import annotations

import gzip
import html
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from clirun import cli
from prose import assert_chinese
from rankscope.errors import RankscopeError
from rankscope.service.egress import EgressPolicy
from rankscope.service.ingest import Uploaded, UploadError, read_run_upload, read_testset_upload
from rankscope.service.judging.ingest import build_task
from rankscope.service.reports import JobNotDone
from rankscope.service.settings import Settings, check_token
from rankscope.service.store import NotFound
from rankscope.service.uploads import Counter, LimitExceeded

from .conftest import RUN_A, make_client, upload_testset, wait_job
from .fake_retriever import live_testset


def _both(exc: BaseException, english: str) -> str:
    """``exc`` says ``english`` in English (``str`` and ``text("en")``); its Chinese, checked to be Chinese."""
    assert str(exc) == english
    assert exc.text("en") == english  # type: ignore[attr-defined]
    zh = str(exc.text("zh"))  # type: ignore[attr-defined]
    assert_chinese(zh)
    return zh


def _raised(call: object, *args: object, **kwargs: object) -> BaseException:
    with pytest.raises(Exception) as info:
        call(*args, **kwargs)  # type: ignore[operator]
    return info.value


# --- the errors a user of the service meets most ------------------------------------------------------------

def test_upload_errors_say_themselves_in_chinese(tmp_path: Path) -> None:
    counter = Counter(max_bytes=1000, max_rows=2)
    empty = _raised(read_run_upload, tmp_path, counter, Uploaded(io.BytesIO(b""), "run.trec"), "trec", "r")
    assert isinstance(empty, UploadError) and empty.field == "file"
    assert _both(empty, "the uploaded file is empty") == "上传的文件为空"

    fmt = _raised(read_run_upload, tmp_path, counter, Uploaded(io.BytesIO(b"x"), "run.trec"), "csv", "r")
    assert _both(fmt, "must be one of trec, json, ranked; got 'csv'") == "必须是 trec、json、ranked 之一，实际为 'csv'"

    rows = _raised(read_run_upload, tmp_path, counter, Uploaded(io.BytesIO(b"a\nb\nc\n"), "run.trec"), "trec", "r")
    assert isinstance(rows, LimitExceeded)
    assert "`rankscope serve --max-rows`" in _both(
        rows, "more than 2 rows (the limit of one upload; raise it with `rankscope serve --max-rows`)")

    big = _raised(Counter(max_bytes=10, max_rows=100).add, "file", b"x" * 11)
    assert "10 字节" in _both(big, "more than 10 bytes once decompressed (the limit of one upload; raise it with "
                                   "`rankscope serve --max-data-mb`)")


def test_a_readers_error_names_the_uploaded_file_in_either_language(tmp_path: Path) -> None:
    counter = Counter(max_bytes=10_000, max_rows=1000)
    up = Uploaded(io.BytesIO(gzip.compress(b"q1 Q0 d1 1 1.0 r\n" * 20)[:-12]), "mine.trec.gz")
    exc = _raised(read_run_upload, tmp_path, counter, up, "trec", "r")
    assert isinstance(exc, RankscopeError) and str(tmp_path) not in str(exc)
    zh = _both(exc, "mine.trec.gz: truncated gzip data")
    assert zh.startswith("mine.trec.gz") and str(tmp_path) not in zh

    not_zip = _raised(read_testset_upload, tmp_path, counter, Uploaded(io.BytesIO(b"PK no zip"), "beir.zip"), "beir")
    zh = _both(not_zip, "beir.zip: not a zip archive (a BEIR upload is a zip of corpus.jsonl, queries.jsonl, qrels/)")
    assert "corpus.jsonl、queries.jsonl" in zh

    run = Uploaded(io.BytesIO(json.dumps({"q1": {"d1": 1.0}}).encode()), "run.json")
    ranked = _raised(read_run_upload, tmp_path, counter, run, "ranked", "r")
    _both(ranked, "run.json: ranked format: every query must map to a list of doc ids")


def test_judging_and_report_errors_say_themselves_in_chinese() -> None:
    from rankscope.i18n import _, pgettext

    recs = [{"query_id": "q1", "doc_id": "d1", "best_rank": 1, "runs": {}},
            {"query_id": "q1", "doc_id": "d2", "best_rank": 2, "runs": {}}]
    source = _("test set {id} {name!r}", id=3, name="toy")
    exc = _raised(build_task, recs, {"q1": "what"}, {"d1": "text"}, texts_field=("test_set_id", "test_set_id"),
                  texts_source=source)
    zh = _both(exc, "1 of 2 documents of the pool have no text in test set 3 'toy' (e.g. 'd2')")
    assert zh == "候选池的 2 个文档中有 1 个在 测试集 3 'toy' 中没有文本（例如 'd2'）"

    not_done = JobNotDone(_("evaluation {job} is {status}; its report exists once it is done", job="e1",
                            status=pgettext("job status", "running")))
    assert "运行中" in _both(not_done, "evaluation e1 is running; its report exists once it is done")
    assert _both(NotFound.of("test set", 7), "test set 7 not found") == "未找到测试集 7"
    assert _both(NotFound.of("item", 5, task=2), "item 5 of judging task 2 not found") == "未找到评判任务 2 的条目 5"


def test_settings_and_allow_list_errors_say_themselves_in_chinese() -> None:
    _both(_raised(Settings, db_url="sqlite://", workers=-1), "workers must be >= 0, got -1")
    weak = _raised(check_token, "short")
    assert "16 个字符" in _both(weak, "the token is too weak: use at least 16 characters without spaces "
                                      '(e.g. `python -c "import secrets; print(secrets.token_urlsafe(24))"`)')
    policy = EgressPolicy.from_entries(["search.internal", "127.0.0.1:9200"], own=[("127.0.0.1", 8000)])
    refused = _raised(policy.check, "http://other.example/q")
    zh = _both(refused, "host other.example:80 is not on the retriever allow-list (search.internal, 127.0.0.1:9200); "
                        "start the service with --allow-retriever other.example:80")
    assert "search.internal、127.0.0.1:9200" in zh and "--allow-retriever other.example:80" in zh
    none = _raised(EgressPolicy().check, "http://a.example/q")
    assert "（空）" in _both(none, "host a.example:80 is not on the retriever allow-list (empty); start the service "
                                  "with --allow-retriever a.example:80")
    _both(_raised(policy.check, "ftp://search.internal/q"), "the scheme must be http or https, got 'ftp'")
    _both(_raised(policy.check, "http://127.0.0.1:8000/q"), "127.0.0.1:8000 is this service's own address")


# --- the dashboard: a user's mistake in the page's language ---------------------------------------------------

@pytest.fixture
def web(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(f"sqlite:///{tmp_path / 'zh.sqlite3'}", max_rows=50) as c:
        yield c


def _alert(page: str) -> str:
    """The problem the page shows (after the alert's title)."""
    found = re.search(r'<div class="alert" id="error"><strong>[^<]*</strong> — (.*?)</div>', page, re.S)
    assert found, page[:2000]
    return html.unescape(found.group(1))


def test_dashboard_errors_are_said_in_the_pages_language(web: TestClient) -> None:
    empty = {"file": ("toy.json", b"")}
    r = web.post("/testsets", files=empty, data={"format": "json"})
    assert r.status_code == 422 and _alert(r.text) == "file: the uploaded file is empty"  # English unchanged
    r = web.post("/testsets?lang=zh", files=empty, data={"format": "json"})
    assert r.status_code == 422 and _alert(r.text) == "file：上传的文件为空"

    web.cookies.set("rankscope_lang", "zh")  # the language the page was shown in, kept in its cookie
    ts = upload_testset(web)
    many = "".join(f"q1 Q0 d{i} {i + 1} {100 - i} a\n" for i in range(60))
    r = web.post("/runs", files={"file": ("big.trec", many)}, data={"test_set_id": str(ts["id"]), "format": "trec"})
    assert r.status_code == 413
    problem = _alert(r.text)
    assert_chinese(problem)
    assert problem.startswith("file：超过 50 行") and "`rankscope serve --max-rows`" in problem

    r = web.post("/runs", files={"file": ("a.trec", RUN_A)}, data={"test_set_id": "0", "format": "trec"})
    assert r.status_code == 422 and _alert(r.text) == "test_set_id：应大于或等于 1"
    r = web.post("/evaluations", data={"test_set_id": str(ts["id"]), "metrics": "ndcg@10"})
    assert r.status_code == 422 and _alert(r.text) == "run_ids：请至少勾选一个结果"

    r = web.get("/testsets/999")
    assert r.status_code == 404 and _alert(r.text) == "path：未找到测试集 999"
    r = web.get("/judging/1/judge")
    assert r.status_code == 401
    assert _alert(r.text) == "请打开评判任务 1 的管理员为你生成的邀请链接：服务据此知道你是谁"
    r = web.get("/compare?run_ids=abc")
    assert r.status_code == 422 and _alert(r.text) == "run_ids：应为 1 到 2147483647 之间的编号，实际为 'abc'"
    r = web.get("/no-such-page")
    assert r.status_code == 404 and _alert(r.text) == "没有这个页面"

    r = web.get("/testsets/999?lang=en")  # and back: the English pages say what they said
    assert _alert(r.text) == "path: test set 999 not found"
    r = web.post("/runs?lang=en", files={"file": ("a.trec", RUN_A)}, data={"test_set_id": "0", "format": "trec"})
    assert _alert(r.text) == "test_set_id: Input should be greater than or equal to 1"


def test_a_failed_job_says_why_in_the_pages_language(web: TestClient) -> None:
    """A job that fails on the user's input (a live job whose retriever answered no query) keeps its reason in
    every language: the API's ``error`` in English, the evaluation page in the page's language."""
    ts = upload_testset(web, live_testset(2), name="live")
    r = web.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"], "retriever_url": "http://127.0.0.1:9/x",
                                                   "retries": 0, "metrics": ["mrr"]})
    job = wait_job(web, r.json()["id"])
    assert job["status"] == "failed" and job["error"].startswith("the retriever answered no query; first error: ")
    en = web.get(f"/evaluations/{job['id']}?lang=en").text
    assert job["error"] in html.unescape(en)
    zh = html.unescape(web.get(f"/evaluations/{job['id']}?lang=zh").text)
    assert "检索器没有回答任何查询；第一个错误：" in zh and "the retriever answered no query" not in zh


def test_the_json_api_keeps_its_english_problems(web: TestClient) -> None:
    zh = {"Accept-Language": "zh-CN,zh;q=0.9"}
    web.cookies.set("rankscope_lang", "zh")
    r = web.post("/api/v1/testsets?lang=zh", files={"file": ("toy.json", b"")}, data={"format": "json"}, headers=zh)
    assert r.status_code == 422
    assert r.json() == {"detail": "file: the uploaded file is empty",
                        "errors": [{"field": "file", "problem": "the uploaded file is empty"}]}
    r = web.get("/api/v1/testsets/999", headers=zh)
    assert r.status_code == 404 and r.json()["detail"] == "path: test set 999 not found"


# --- rankscope serve ------------------------------------------------------------------------------------------

def test_serve_says_its_settings_errors_in_the_sessions_language() -> None:
    en = cli("serve", "--db", "sqlite://", "--allow-retriever", "search.internal:99999", env={"RANKSCOPE_LANG": "en"},
             width=200)
    assert en.returncode == 2 and en.stdout == ""
    assert en.stderr == "rankscope: error: --allow-retriever 'search.internal:99999': the port must be 1-65535\n"
    zh = cli("serve", "--db", "sqlite://", "--allow-retriever", "search.internal:99999", env={"RANKSCOPE_LANG": "zh"},
             width=200)
    assert zh.returncode == 2 and zh.stdout == ""
    assert_chinese(zh.stderr)
    assert "--allow-retriever 'search.internal:99999'：端口必须在 1-65535 之间" in zh.stderr


def _zip(members: dict[str, bytes]) -> bytes:
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _testset(tmp: Path, data: bytes, name: str, fmt: str, queries: bytes | None = None) -> object:
    extra = Uploaded(io.BytesIO(queries), "q.tsv", "queries") if queries is not None else None
    return read_testset_upload(tmp, Counter(10_000, 1000), Uploaded(io.BytesIO(data), name), fmt, queries=extra)


def _run(tmp: Path, data: bytes, fmt: str) -> object:
    return read_run_upload(tmp, Counter(10_000, 1000), Uploaded(io.BytesIO(data), "run.json"), fmt, "r")


@pytest.mark.parametrize(("call", "english"), [
    (lambda t: EgressPolicy.from_entries(["a b"]), "--allow-retriever 'a b': expected HOST or HOST:PORT"),
    (lambda t: Settings(db_url="sqlite://", lease_seconds=0), "lease_seconds must be positive, got 0"),
    (lambda t: Settings(db_url="sqlite://", max_rows=0), "max_data_bytes and max_rows must be positive"),
    (lambda t: EgressPolicy().check("http://u:p@a.example/"), "user names or passwords in the URL are not accepted"),
    (lambda t: _testset(t, _zip({"corpus.jsonl": b"{}"}), "b.zip", "beir"),
     "b.zip: the archive holds no queries.jsonl"),
    (lambda t: _testset(t, _zip({"x/queries.jsonl": b'{"_id": "q1", "text": "a"}\n'}), "b.zip", "beir"),
     "b.zip: no qrels for split 'test'"),
    (lambda t: _testset(t, json.dumps({"queries": [{"id": "q1", "text": "a"}]}).encode(), "ts.json", "json"),
     "ts: no relevance judgment in any query"),
    (lambda t: _testset(t, b"q1 0 d1 1\n", "qrels.txt", "trec", queries=b"q1\tfirst\n\tno id\n"),
     "q.tsv:2: expected 'query_id<TAB>text'"),
    (lambda t: _run(t, b"[]", "json"), "run.json: expected a non-empty object {query: {doc: score}} or "
                                       "{query: [doc, ...]}"),
])
def test_more_errors_in_both_languages(tmp_path: Path, call: object, english: str) -> None:
    _both(_raised(call, tmp_path), english)


def test_python_s_own_words_are_shown_as_they_are(tmp_path: Path) -> None:
    exc = _raised(_run, tmp_path, b'{"q1": 5}', "json")
    assert str(exc) == "run.json: cannot read the run: object of type 'int' has no len()"
    assert exc.text("zh") == "run.json：无法读取结果文件（run）：object of type 'int' has no len()"  # type: ignore[attr-defined]


def test_field_errors_in_both_languages(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from rankscope.service.api.deps import check_name
    from rankscope.service.store import validate_metrics
    from rankscope.service.web.judging_views import check_annotator

    _both(_raised(check_name, "x" * 201, "name", "d"), "at most 200 characters, got 201")
    _both(_raised(check_name, "a\x01", "name", "d"), "must not contain control characters")
    _both(_raised(check_annotator, "  "), "must not be empty")
    _both(_raised(validate_metrics, []), "metrics: give at least one metric")
    # a name that resolves to the service itself (the resolver is simulated: the tests resolve no name)
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, port, *a, **k: [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))] if host == "search.example" else [])
    policy = EgressPolicy.from_entries(["search.example:8000"], own=[("127.0.0.1", 8000)])
    own = _raised(policy.check_resolved, "http://search.example:8000/q")
    _both(own, str(own))
    assert str(own) == "search.example resolves to 127.0.0.1, this service's own address"


def test_api_problems_of_runs_and_fields_say_themselves_in_a_chinese_page(web: TestClient) -> None:
    from .conftest import upload_run

    a, b = upload_testset(web, name="a"), upload_testset(web, name="b")
    run_a, run_b = upload_run(web, a["id"], RUN_A, "ra"), upload_run(web, b["id"], RUN_A, "rb")
    r = web.post("/api/v1/evaluations", json={"test_set_id": a["id"], "run_ids": [run_b["id"]], "metrics": ["mrr"]})
    assert r.status_code == 422 and r.json()["errors"][0]["problem"] == (
        f"run_ids: run {run_b['id']} belongs to test set {b['id']}, not to test set {a['id']}")
    body = {"test_set_id": a["id"], "run_ids": [run_a["id"], run_b["id"]], "metrics": ["mrr"]}
    r = web.post("/api/v1/comparisons", json=body)
    assert r.status_code == 422 and r.json()["errors"][0]["problem"] == (
        f"run {run_b['id']} belongs to test set {b['id']}, not {a['id']}")
    r = web.post("/api/v1/comparisons", json={**body, "run_ids": [run_a["id"], run_a["id"]]})
    assert r.status_code == 422 and r.json()["errors"][0]["problem"] == "give at least two different runs"
    r = web.post("/api/v1/testsets", files={"file": ("t.json", json.dumps({"queries": []}))},
                 data={"description": "a\x00b"})
    assert r.status_code == 422 and r.json()["detail"] == "description: must not contain NUL characters"

    r = web.post("/evaluations?lang=zh", data={"test_set_id": str(a["id"]), "run_ids": str(run_b["id"]),
                                               "metrics": "mrr"})
    assert r.status_code == 422
    assert _alert(r.text) == f"run_ids：结果 {run_b['id']} 属于测试集 {b['id']}，而不是测试集 {a['id']}"


def test_a_body_over_the_limit_gets_the_error_page_on_the_dashboard(tmp_path: Path) -> None:
    big = {"file": ("big.json", "q1 Q0 d1 1 3.0 a\n" * 500)}
    with make_client(f"sqlite:///{tmp_path / 'limit.sqlite3'}", max_upload_bytes=2000) as c:
        api = c.post("/api/v1/testsets", files=big, data={"format": "json"})
        assert api.status_code == 413 and api.headers["content-type"] == "application/json"  # the API: JSON
        problem = api.json()["errors"][0]["problem"]
        assert problem == "larger than 2000 bytes (raise it with `rankscope serve --max-upload-mb`)"
        en = c.post("/testsets?lang=en", files=big, data={"format": "json"})
        assert en.status_code == 413 and en.text.startswith("<!doctype html>")
        assert _alert(en.text) == f"body: {problem}"
        zh = c.post("/testsets?lang=zh", files=big, data={"format": "json"})
        assert zh.status_code == 413 and _alert(zh.text) == (
            "body：超过 2000 字节（可用 `rankscope serve --max-upload-mb` 调高）")
        assert c.get("/api/v1/testsets").json() == []
