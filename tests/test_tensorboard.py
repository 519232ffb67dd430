"""tapegrad.utils.tensorboard.SummaryWriter: event files written and read back, as PyTorch's writer's."""
import glob
import os

import numpy as np
import pytest

import tapegrad
from conftest import require

require("tensorboardX")   # a test dependency: missing, the run fails saying how to install it
from tensorboardX.proto import event_pb2  # noqa: E402
from tapegrad.utils.tensorboard import SummaryWriter  # noqa: E402


def _events(log_dir):
    # TFRecord framing: length (8 bytes), its CRC (4), the record, its CRC (4).
    events = []
    for path in sorted(glob.glob(os.path.join(log_dir, "**", "events.out.tfevents.*"), recursive=True)):
        data = open(path, "rb").read()
        pos = 0
        while pos < len(data):
            n = int.from_bytes(data[pos:pos + 8], "little")
            event = event_pb2.Event()
            event.ParseFromString(data[pos + 12:pos + 12 + n])
            events.append(event)
            pos += 12 + n + 4
    return events


def _summaries(events):
    return [(e.step, v) for e in events for v in e.summary.value]


def test_scalars_and_histograms_are_written_and_readable(tmp_path):
    with SummaryWriter(log_dir=str(tmp_path)) as writer:
        assert writer.log_dir == str(tmp_path)
        for step in range(3):
            writer.add_scalar("loss", tapegrad.tensor(1.5) / (step + 1), step)
        writer.add_scalar("lr", 0.1, tapegrad.tensor(7))
        writer.add_histogram("weights", tapegrad.arange(10, dtype=tapegrad.float32), 2)
        writer.flush()
    values = _summaries(_events(str(tmp_path)))
    loss = [(step, v.simple_value) for step, v in values if v.tag == "loss"]
    assert loss == [(0, 1.5), (1, 0.75), (2, 0.5)]
    assert [(s, v.simple_value) for s, v in values if v.tag == "lr"] == [(7, pytest.approx(0.1))]
    histo = [v.histo for s, v in values if v.tag == "weights"][0]
    assert (histo.min, histo.max, histo.num, histo.sum) == (0.0, 9.0, 10.0, 45.0)


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    writer = SummaryWriter(log_dir=str(tmp_path))
    writer.add_scalars("run", {"a": tapegrad.tensor(1.0), "b": 2.0}, 0)
    writer.close()
    values = _summaries(_events(str(tmp_path)))
    assert sorted(v.simple_value for s, v in values if v.tag == "run") == [1.0, 2.0]


def test_add_graph_is_refused_with_a_clear_error(tmp_path):
    writer = SummaryWriter(log_dir=str(tmp_path))
    with pytest.raises(NotImplementedError, match="add_graph"):
        writer.add_graph(tapegrad.nn.Linear(2, 2), tapegrad.zeros(1, 2))
    writer.close()


def test_missing_tensorboardx_says_how_to_install(monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ImportError, match="pip install tensorboardX"):
        SummaryWriter(log_dir=str(tmp_path))


def test_tensors_are_numpy_for_tensorboardx(tmp_path):
    from tapegrad.utils.tensorboard._writer import _numpy
    out = _numpy(tapegrad.ones(2, requires_grad=True) * 2)
    assert isinstance(out, np.ndarray) and out.tolist() == [2.0, 2.0]
