"""Alert rules: their syntax, the anytime-valid drop and below tests, episodes and recovery, signals."""

from __future__ import annotations

import numpy as np
import pytest

from rankscope.errors import InvalidParameterError
from rankscope.monitor.alerts import (
    Rule,
    RuleState,
    check_sequential,
    check_signal,
    paired_differences,
    parse_rule,
    rules_from_standard,
)
from rankscope.monitor.schedule import Schedule


def test_rules_from_text_and_standards() -> None:
    assert [r.key for r in parse_rule("production:good")] == [r.key for r in rules_from_standard("production:good")]
    (r,) = parse_rule("drop ndcg@10 0.05", alpha=0.01)
    assert (r.kind, r.metric, r.margin, r.alpha, r.null, r.bounds) == ("drop", "ndcg@10", 0.05, 0.01, -0.05, (-1, 1))
    assert parse_rule("rbo >= 0.6")[0].kind == "signal"
    assert Rule.from_dict(r.to_dict()) == r
    for bad, match in [("psi >= 0.2", "write 'psi <= LIMIT'"), ("drop ndcg@10 2", "margin between 0 and 1"),
                       ("latncy_p95 <= 3", "did you mean 'latency_p95'"), ("ndcg@10 <= 0.5", "METRIC >= LEVEL"),
                       ("ndcg@10 is fine", "cannot read the rule"), ("drop num_ret 0.1", "known bounds"),
                       ("P@5 >= 1.5", "must lie in")]:
        with pytest.raises(InvalidParameterError, match=match) as info:
            parse_rule(bad)
        assert info.value.text("zh")


def _stream(rule: Rule, rounds: list[np.ndarray], seed: int = 0) -> list:
    state = RuleState()
    return [check_sequential(rule, state, v, label=str(i), seed=seed, bound=False) for i, v in enumerate(rounds)]


@pytest.mark.slow
def test_no_drop_never_alarms_more_often_than_alpha() -> None:
    """200 streams of 40 rounds where every round's mean difference is exactly at the null (-margin), the worst case
    the guarantee allows: the share of streams that ever alarm stays within alpha (+ 2 Monte-Carlo s.e.)."""
    rule = Rule("drop", "ndcg@10", margin=0.05, alpha=0.1)
    rng = np.random.default_rng(7)
    fired = 0
    n_streams = 200
    for s in range(n_streams):
        rounds = []
        for _ in range(40):
            v = np.clip(rng.normal(0, 0.2, 60), -1, 1)
            rounds.append(np.clip(v - v.mean() - 0.05, -1, 1))
        fired += any(c.opened for c in _stream(rule, rounds, seed=s))
    se = np.sqrt(0.1 * 0.9 / n_streams)
    assert fired / n_streams <= 0.1 + 2 * se


def test_a_real_drop_alarms_within_a_few_rounds_even_after_a_long_quiet_stretch() -> None:
    rule = Rule("drop", "ndcg@10", margin=0.02, alpha=0.05)
    rng = np.random.default_rng(1)
    quiet = [np.clip(rng.normal(0.0, 0.1, 100), -1, 1) for _ in range(100)]
    dropped = [np.clip(rng.normal(-0.1, 0.1, 100), -1, 1) for _ in range(10)]
    checks = _stream(rule, quiet + dropped)
    assert not any(c.firing for c in checks[:100])
    first = next(i for i, c in enumerate(checks) if c.opened)
    assert 100 <= first <= 103
    assert checks[first].p_value <= 0.05


def test_an_alert_is_one_episode_then_a_recovery_then_a_new_test() -> None:
    rule = Rule("drop", "ndcg@10", margin=0.02, alpha=0.05, clear_after=2)
    state = RuleState()
    values = [np.full(50, -0.2)] * 5 + [np.zeros(50)] * 3 + [np.full(50, -0.2)] * 4
    ids = [f"q{i}" for i in range(50)]
    checks = [check_sequential(rule, state, v, ids=ids, label=str(i)) for i, v in enumerate(values)]
    opened = [i for i, c in enumerate(checks) if c.opened]
    cleared = [i for i, c in enumerate(checks) if c.cleared]
    assert len(opened) == 2 and cleared == [6] and opened[0] < 5 and opened[1] > 7
    assert state.episodes == 2
    c = checks[opened[0]]
    assert c.value == pytest.approx(-0.2) and c.bound is not None and c.bound < -0.02 and len(c.worst) == 5
    text = c.text()
    assert "-0.2000" in text and "betting bound" in text and "alpha = 0.05" in text and c.text("zh") != text


def test_below_a_standard() -> None:
    (rule, *_) = rules_from_standard("production:good")  # recall@5 >= 0.8
    state = RuleState()
    good = [check_sequential(rule, state, np.full(40, 0.95)) for _ in range(5)]
    assert not any(c.firing for c in good)
    bad = [check_sequential(rule, state, np.r_[np.zeros(20), np.ones(20)]) for _ in range(5)]
    assert any(c.opened for c in bad) and "production:good" in rule.describe()


def test_signal_rules_compare_the_observed_value() -> None:
    (rule,) = parse_rule("empty_rate <= 0.05")
    state = RuleState()
    seen = [check_signal(rule, state, v) for v in (0.01, 0.2, 0.3, 0.0, 0.0, None, 0.1)]
    assert [c.opened for c in seen] == [False, True, False, False, False, False, True]
    assert [c.cleared for c in seen] == [False, False, False, False, True, False, False]
    assert "not a test" in seen[1].text()


def test_paired_differences_orient_losses_negative() -> None:
    ids, d, unpaired = paired_differences({"a": 3.0}, {"a": 1.0}, higher_is_better=False)
    assert ids == ["a"] and d.tolist() == [-2.0] and unpaired == 0


def test_schedule_missed_times_are_counted() -> None:
    s = Schedule(every_seconds=10)
    due = s.due(last=0.0, now=1_000_000.0)
    assert due.run == 1_000_000.0 and due.n_missed == 99_999 and len(due.missed) == 100
    assert Schedule(cron="0 * * * *").due(last=3600.0, now=3700.0).run is None
    with pytest.raises(InvalidParameterError, match="five fields"):
        Schedule(cron="every minute")
    with pytest.raises(InvalidParameterError, match="one of them"):
        Schedule()
