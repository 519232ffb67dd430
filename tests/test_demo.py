"""The training demo (python -m tapegrad.demo) at tiny sizes: it trains, plots, generates, and a checkpoint
reloaded into a fresh model generates the same text."""
import warnings

import numpy as np
import pytest

from conftest import require

import tapegrad
from tapegrad.demo import cli
from tapegrad.demo.generate import generate

require("tqdm")
require("matplotlib")

TINY = ["--steps", "12", "--n-layer", "1", "--n-embd", "16", "--n-head", "2", "--block-size", "16",
        "--batch-size", "8", "--sample-tokens", "24", "--no-progress"]


def test_arguments():
    args = cli.parse_args(["--steps", "7", "--no-compile", "--device", "cpu"])
    assert (args.steps, args.compile, args.device) == (7, False, "cpu")
    defaults = cli.parse_args([])
    assert defaults.compile and defaults.steps > 100
    assert defaults.device == ("cuda" if tapegrad.cuda.is_available() else "cpu")


@pytest.mark.parametrize("argv, phrase", [(["--steps", "0"], "--steps must be at least 1"),
                                          (["--n-embd", "10", "--n-head", "4"], "multiple of --n-head")])
def test_bad_arguments_exit_with_a_message(argv, phrase, capsys):
    with pytest.raises(SystemExit):
        cli.parse_args(argv)
    assert phrase in capsys.readouterr().err


def test_no_compile_runs_every_step_eagerly():
    _, _, trainer = cli.build(cli.parse_args(TINY + ["--no-compile"]), text=TEXT)
    assert trainer.compiled_step is None and trainer.eager_steps == 12


TEXT = "def f(x):\n    return x + 1\n\nclass A:\n    pass\n" * 40   # small: builds without the full corpus


def test_demo_trains_plots_generates_and_reloads(tmp_path, capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = cli.main(TINY + ["--out", str(tmp_path)])
    out = capsys.readouterr().out
    # its compiled steps are one program each: no graph break sent them back to eager
    assert not [str(w.message) for w in caught if "tapegrad.compile" in str(w.message)]

    losses = result["losses"]
    assert len(losses) == 12
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3 - 0.2, losses

    assert result["curve"] == tmp_path / "loss.png"
    assert result["curve"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"loss curve: {result['curve']}" in out

    assert set(result["times"]) == {"eager", "compiled"}
    assert "eager" in out and "compiled" in out and "step time" in out

    # The checkpoint reloads into a fresh model that generates the same text (the demo checks it too).
    assert "generates the same text: yes" in out
    sample = result["sample"]
    assert sample.startswith(cli.PROMPT) and len(sample) == len(cli.PROMPT) + 24
    state = tapegrad.load(result["checkpoint"])
    assert list(state) == [name for name, _ in result["model"].named_parameters()]

    # Generation runs the same structure every token (a fixed-size buffer): once warm, more tokens compile
    # nothing and meet no structure not seen before.
    generate(result["model"], result["vocab"], cli.PROMPT, 40, seed=1)
    before = tapegrad.autograd.backward_cache_info()
    generate(result["model"], result["vocab"], cli.PROMPT, 40, seed=2)
    after = tapegrad.autograd.backward_cache_info()
    assert (after["compiles"], after["misses"]) == (before["compiles"], before["misses"])


def test_ops_recorded_by_the_demo_name_the_demo_lines():
    # The demo is user code shipped inside the package: an op it records is located on its own line (as
    # errors name it, and as a no_grad loop such as generation is cut into repeating windows), not on the
    # line of whoever called the demo.
    from tapegrad.demo.model import GPTConfig, TinyGPT
    model = TinyGPT(GPTConfig(vocab_size=5, block_size=4, n_layer=1, n_head=2, n_embd=4))
    # Concrete parameters (from NumPy): the random initial values are then never computed.
    model.load_state_dict({k: tapegrad.tensor(np.full(tuple(v.shape), 0.1, np.float32))
                           for k, v in model.state_dict().items()}, assign=True)
    with tapegrad.no_grad():
        logits = model(tapegrad.tensor([[1, 2]]))
    file, _ = logits._storage._raw.node.where
    assert file.replace("\\", "/").endswith("tapegrad/demo/model.py"), file
