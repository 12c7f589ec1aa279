"""rankscope.ray on a two-node Ray cluster simulated on this machine (ray.cluster_utils.Cluster).

Identical numbers to the local engine; a worker killed mid-job: the job finishes, every
query scored (and every live call recorded) exactly once.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ray = pytest.importorskip("ray")

from rankscope import Evaluator, Qrels  # noqa: E402
from rankscope import ray as rray  # noqa: E402
from rankscope.data.testset import TestSet  # noqa: E402

pytestmark = pytest.mark.ray

METRICS = ["ndcg@10", "map", "mrr", "recall@100", "P@5", "bpref", "num_ret"]


def _dies_when_flagged(flags: str):  # type: ignore[no-untyped-def]
    """A worker setup hook: rankscope.ray's split and scoring tasks kill their worker process once each when
    ``flags/<task name>`` exists (the file is removed first, so the retried task lives)."""

    def hook() -> None:
        import rankscope.ray as engine

        for task in ("_split", "_score_part"):
            def dying(*args, _task=getattr(engine, task), _flag=os.path.join(flags, task)):  # type: ignore[no-untyped-def]
                try:
                    os.remove(_flag)
                except FileNotFoundError:
                    return _task(*args)
                os._exit(1)  # the worker process dies in the middle of the job

            setattr(engine, task, dying)

    return hook


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):  # type: ignore[no-untyped-def]
    """One simulated two-node cluster for the module (starting one costs ~5 s)."""
    import cloudpickle
    from ray.cluster_utils import Cluster

    cloudpickle.register_pickle_by_value(__import__(__name__))  # the hook travels to the workers by value
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 80 << 20,
                                                      "include_dashboard": False})
    c.add_node(num_cpus=1, object_store_memory=80 << 20)
    c.flags = tmp_path_factory.mktemp("kill-flags")
    ray.init(address=c.address, logging_level="ERROR", log_to_driver=False,
             runtime_env={"worker_process_setup_hook": _dies_when_flagged(str(c.flags))})
    c.wait_for_nodes()
    yield c
    ray.shutdown()
    c.shutdown()


def _case(seed: int = 7, n_q: int = 120) -> tuple[Qrels, pa.Table]:
    rng = np.random.default_rng(seed)
    qs, ds, ss = [], [], []
    for q in range(n_q):
        k = int(rng.integers(1, 30))
        qs += [f"q{q:03d}" if q % 9 else f"other{q}"] * k
        ds += [f"d{d}" for d in rng.choice(300, size=k, replace=False)]
        ss += (np.round(rng.random(k) * 4, 1) + np.where(rng.random(k) < 0.2, 1e-9, 0.0)).tolist()
    table = pa.table({"query_id": qs, "doc_id": ds, "score": ss}).take(pa.array(rng.permutation(len(qs))))
    judged = {f"q{q:03d}": {f"d{d}": int(rng.integers(0, 4)) for d in rng.choice(300, 8, replace=False)}
              for q in range(n_q + 15) if q % 9}
    return Qrels.from_dict(judged), table


def _same(a, b) -> None:
    assert a.queries == b.queries
    assert a.per_query.query_ids.tolist() == b.per_query.query_ids.tolist()
    np.testing.assert_array_equal(a.per_query.values, b.per_query.values)


def test_parquet_files_on_the_cluster_equal_local(cluster, tmp_path: Path) -> None:
    qrels, table = _case()
    half = table.num_rows // 2
    paths = [tmp_path / "a.parquet", tmp_path / "b.parquet"]  # not grouped by query, queries across both files
    pq.write_table(table.slice(0, half), paths[0], row_group_size=50)
    pq.write_table(table.slice(half), paths[1], row_group_size=50)
    for missing in ("zero", "ignore"):
        local = Evaluator(qrels, METRICS, missing=missing).evaluate(table)
        remote = rray.evaluate(qrels, paths, METRICS, missing=missing, partitions=3)
        _same(remote, local)
        assert local.queries.not_in_qrels and local.queries.missing_from_run and local.queries.float32_reordered


def test_split_and_scoring_workers_killed_mid_job(cluster, tmp_path: Path) -> None:
    qrels, table = _case(9)
    paths = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), paths[0], row_group_size=100)
    pq.write_table(table.slice(half), paths[1], row_group_size=100)
    flags = [cluster.flags / "_split", cluster.flags / "_score_part"]
    for flag in flags:
        flag.write_text("")
    remote = rray.evaluate(qrels, paths, METRICS, partitions=3)
    assert not any(f.exists() for f in flags)  # a splitting and a scoring worker did die
    _same(remote, Evaluator(qrels, METRICS).evaluate(table))  # every query once: the same values and counts


def test_dataset_with_a_worker_killed_mid_job(cluster, tmp_path: Path) -> None:
    qrels, table = _case(8)
    flag = tmp_path / "kill-once"
    flag.write_text("")

    def dies_once(batch: pa.Table) -> pa.Table:
        try:
            os.remove(flag)
        except FileNotFoundError:
            return batch
        os._exit(1)  # the worker process dies in the middle of the job

    ds = ray.data.from_arrow(table).repartition(4).map_batches(dies_once, batch_format="pyarrow")
    remote = rray.evaluate(qrels, ds, METRICS, partitions=4)
    assert not flag.exists()  # it did die once
    _same(remote, Evaluator(qrels, METRICS).evaluate(table))


def test_live_retriever_on_actors_with_an_actor_killed(cluster, tmp_path: Path) -> None:
    ts = TestSet.from_annotations([f"question {i}" for i in range(40)], [[f"d{i % 7}"] for i in range(40)])
    flag = tmp_path / "kill-once"
    flag.write_text("")

    def factory():
        def search(query: str, k: int) -> list[str]:
            i = int(query.split()[1])
            if i == 17:
                try:
                    os.remove(flag)
                except FileNotFoundError:
                    pass
                else:
                    os._exit(1)  # the actor's process dies while it holds calls
            return [f"d{(i + j) % 7}" for j in range(k)]

        return search

    seen: list[str] = []
    outcomes: list[object] = []

    def record(outcome) -> None:  # type: ignore[no-untyped-def]
        seen.append(outcome.query_id)
        outcomes.append(outcome)

    remote = rray.evaluate_retriever(factory, ts, ["mrr", "recall@3"], k=3, actors=2, concurrency=3,
                                     num_cpus=0.25, progress=False, on_result=record)
    again: list[str] = []  # resumed from the outcomes written: nothing is asked again
    resumed = rray.evaluate_retriever(factory, ts, ["mrr", "recall@3"], k=3, actors=1, concurrency=2,
                                      num_cpus=0.25, progress=False, resume=outcomes,
                                      on_result=lambda o: again.append(o.query_id))
    assert again == [] and resumed.from_cache == len(ts.queries) and resumed.mean() == remote.mean()
    assert not flag.exists()  # the actor did die (checked before the local run, which would die too)
    local = __import__("rankscope").evaluate_retriever(factory(), ts, ["mrr", "recall@3"], k=3, progress=False)
    assert sorted(seen) == sorted(q.id for q in ts.queries)  # every query exactly once
    assert remote.errors == {} and remote.mean() == local.mean()


def test_judging_on_actors_resumes_from_the_cache(cluster, tmp_path: Path) -> None:
    from rankscope.labels.judge import JudgeSettings, Judgment
    from rankscope.llm_client import Endpoint

    flag = tmp_path / "kill-once"
    flag.write_text("")

    def judge(query: str, doc: str, settings, client=None) -> Judgment:  # type: ignore[no-untyped-def]
        if query == "query 1":
            try:
                os.remove(flag)
            except FileNotFoundError:
                pass
            else:
                os._exit(1)  # the judge actor dies while it holds calls
        return Judgment(len(doc) % 4, None, "ok", calls=1)

    settings = JudgeSettings(Endpoint("http://127.0.0.1:9/v1"), "fake-model")  # never called: judge= answers
    pairs = [(f"q{i}", f"d{j}") for i in range(5) for j in range(4)]
    queries = {f"q{i}": f"query {i}" for i in range(5)}
    corpus = {f"d{j}": "x" * (j + 1) for j in range(4)}
    cache = tmp_path / "labels.sqlite"
    # a batch stopped after 8 pairs (one actor killed on the way), then the whole batch: only the rest is asked
    first = rray.judge_pairs(pairs[:8], queries, corpus, settings, actors=2, concurrency=2, judge=judge,
                             cache=cache, progress=False)
    assert not flag.exists() and first.failed == 0 and first.judged_now == 8
    rest = rray.judge_pairs(pairs, queries, corpus, settings, actors=1, concurrency=2, judge=judge,
                            cache=cache, progress=False)
    assert rest.failed == 0 and rest.judged_now == len(pairs) - 8 and rest.from_cache == 8
    again = rray.judge_pairs(pairs, queries, corpus, settings, actors=1, concurrency=1, judge=judge,
                             cache=cache, progress=False)
    assert again.judged_now == 0 and again.from_cache == len(pairs)


def test_cli_engine_ray_equals_local(cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import csv
    import io

    from rankscope.cli.app import main
    from rankscope.io import write_qrels, write_run
    from rankscope.io.tables import run_from_table

    qrels, table = _case(10)
    write_qrels(qrels, tmp_path / "q.qrels")
    write_run(run_from_table(table, "t", name="t"), tmp_path / "t.run")
    pq.write_table(table, tmp_path / "p.parquet", row_group_size=60)
    rows = {}
    for engine in (["--engine", "ray", "--address", cluster.address], []):
        with pytest.raises(SystemExit) as done:
            main(["evaluate", "--qrels", str(tmp_path / "q.qrels"), "--run", str(tmp_path / "t.run"),
                  str(tmp_path / "p.parquet"), "-m", "ndcg@10,map,bpref", "-f", "csv", *engine])
        out = capsys.readouterr()
        assert int(done.value.code or 0) == 0, out.err
        rows[bool(engine)] = list(csv.DictReader(io.StringIO(out.out)))
    assert rows[True] == rows[False] and len(rows[True]) == 2
