"""The benchmark report's figures: a ratio that rounds onto its target says which side of it it lies."""
from benchmarks import report
from benchmarks.catalog import Measure, Target


def test_a_ratio_that_rounds_onto_its_target_shows_the_digits_that_decide():
    m = Measure("steady", "per step", Target("torch", 0.4))
    assert report.fmt_ratio(m, {"ratio": 0.40034}) == "0.4003×"   # NOT met, though it rounds to 0.40
    assert report.fmt_ratio(m, {"ratio": 0.3997}) == "0.3997×"    # met
    assert report.fmt_ratio(m, {"ratio": 0.4}) == "0.40×"
    assert report.fmt_ratio(m, {"ratio": 0.41}) == "0.41×"
    assert report.fmt_ratio(m, {"ratio": None}) == "-"
