"""The benchmark harness's steady measure: what it reports is what every side ran."""
from benchmarks import harness
from benchmarks.catalog import JX, PT, TG


def _counting_side(calls, side):
    def step():
        calls[side] += 1
        return float(calls[side])   # the "loss": how far the side has come
    return step


def test_steady_reports_losses_only_after_every_side_ran_the_same_steps(monkeypatch):
    # tapegrad's warm-up runs on while its step still rents NumPy: here for its first 7 steps
    calls = {TG: 0, PT: 0, JX: 0}
    monkeypatch.setattr(harness, "_numpy_runs", lambda side: min(calls[side], 7) if side == TG else 0)
    events = []
    h = harness.Harness(quick=True, budget_s=60, sides=(TG, PT, JX), emit=events.append)
    out = h.steady("steady", {side: _counting_side(calls, side) for side in calls}, steps_per_round=2, rounds=3)

    assert set(out) == {TG, PT, JX}
    assert len(set(calls.values())) == 1, calls   # the baselines caught up with tapegrad's longer warm-up
    assert calls[TG] == 8 + 3 * 2
    losses = [e["value"] for e in events if e["ev"] == "info" and e["key"] == "steady: last loss per side"]
    assert losses == [{side: float(calls[side]) for side in calls}]
