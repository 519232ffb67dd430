"""Checks PyTorch makes on tensor values (indices, class targets, probabilities), which JAX would skip
(it clamps indices and computes nan): the same error type and message, eagerly and inside a
`tapegrad.compile` program, where a failed check writes nothing back."""
import numpy as np
import pytest

import tapegrad


def _bad_inputs(lib):
    F = lib.nn.functional
    emb = lib.ones(5, 3)
    logits = lib.zeros(3, 4)
    return {
        "embedding index past the table": lambda: F.embedding(lib.tensor([1, 7]), emb),
        "negative embedding index": lambda: F.embedding(lib.tensor([-1, 2]), emb),
        "embedding_bag index": lambda: F.embedding_bag(lib.tensor([1, 9]), emb, lib.tensor([0])),
        "cross_entropy target past the classes": lambda: F.cross_entropy(logits, lib.tensor([0, 4, 1])),
        "cross_entropy target of a sequence": lambda: F.cross_entropy(lib.zeros(2, 4, 3),
                                                                      lib.tensor([[0, 9, 1], [0, 0, 0]])),
        "nll_loss negative target": lambda: F.nll_loss(logits, lib.tensor([0, -2, 1])),
        "binary_cross_entropy input above 1": lambda: F.binary_cross_entropy(lib.tensor([1.5]), lib.tensor([1.0])),
        "binary_cross_entropy nan input": lambda: F.binary_cross_entropy(lib.tensor([float("nan")]),
                                                                         lib.tensor([1.0])),
        "binary_cross_entropy target above 1": lambda: F.binary_cross_entropy(lib.tensor([0.5]),
                                                                              lib.tensor([1.5])),
        "binary_cross_entropy computed input": lambda: F.binary_cross_entropy(lib.tensor([0.5]) * 3,
                                                                              lib.tensor([1.0])),
        "one_hot class past num_classes": lambda: F.one_hot(lib.tensor([1, 9]), 5),
        "storage size overflow": lambda: lib.zeros(2 ** 62, 2),
    }


@pytest.mark.parametrize("case", sorted(_bad_inputs(tapegrad)))
def test_bad_values_raise_pytorchs_error(torch, case):
    with pytest.raises(Exception) as theirs:
        _bad_inputs(torch)[case]()
    with pytest.raises(type(theirs.value)) as ours:
        _bad_inputs(tapegrad)[case]()
    assert str(ours.value).startswith(str(theirs.value).split("\n")[0][:60]), (str(ours.value), str(theirs.value))


def test_allowed_values_pass(torch):
    for lib in (tapegrad, torch):
        F = lib.nn.functional
        F.cross_entropy(lib.zeros(3, 4), lib.tensor([0, 5, 1]), ignore_index=5)
        F.nll_loss(lib.zeros(3, 4), lib.tensor([0, -100, 3]))
        F.embedding(lib.tensor([0, 4]), lib.ones(5, 3))
        F.binary_cross_entropy(lib.tensor([0.0, 1.0]), lib.tensor([1.0, 0.0]))


def _classifier():
    tapegrad.manual_seed(0)
    emb, head = tapegrad.nn.Embedding(10, 4), tapegrad.nn.Linear(4, 3)
    opt = tapegrad.optim.Adam(list(emb.parameters()) + list(head.parameters()), lr=1e-2)

    def step(ids, targets):
        opt.zero_grad()
        loss = tapegrad.nn.functional.cross_entropy(head(emb(ids)), targets)
        loss.backward()
        opt.step()
        return loss
    return emb, head, opt, step


def _state(emb, head, opt):
    out = [p.detach().clone().numpy() for p in list(emb.parameters()) + list(head.parameters())]
    for p in list(emb.parameters()) + list(head.parameters()):
        out += [v.clone().numpy() for v in opt.state[p].values()]
        out.append(p.grad.clone().numpy())
    return out


@pytest.mark.parametrize("ids,targets,error,message", [
    ([1, 12, 3], [0, 1, 2], IndexError, "index out of range in self"),
    ([1, 2, 3], [0, 5, 1], IndexError, "Target 5 is out of bounds."),
])
def test_a_compiled_step_checks_values_in_its_program_and_writes_nothing(ids, targets, error, message):
    emb, head, opt, step = _classifier()
    compiled = tapegrad.compile(step)
    good_ids, good_targets = tapegrad.tensor([1, 2, 3]), tapegrad.tensor([0, 1, 2])
    for _ in range(3):
        compiled(good_ids, good_targets)
    programs = compiled._compiled.compiled
    before = _state(emb, head, opt)
    with pytest.raises(error, match=message):
        compiled(tapegrad.tensor(ids), tapegrad.tensor(targets))
    assert compiled._compiled.compiled == programs, "the check ran in Python, not in the program"
    for a, b in zip(before, _state(emb, head, opt)):
        np.testing.assert_array_equal(a, b)
    loss = compiled(good_ids, good_targets)   # the state is intact: training goes on
    assert np.isfinite(loss.item())


def test_a_compiled_probability_check_reports_nan_as_pytorch():
    w = tapegrad.ones(2, requires_grad=True)

    @tapegrad.compile
    def loss(p, y):
        out = tapegrad.nn.functional.binary_cross_entropy(p * w, y)
        out.backward()
        return out
    y = tapegrad.tensor([1.0, 0.0])
    for _ in range(3):
        loss(tapegrad.tensor([0.7, 0.2]), y)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        loss(tapegrad.tensor([float("nan"), 0.2]), y)


# ---- batches taken from a checked dataset --------------------------------------------------------------

def _batch_forms(lib, data):
    """Ways a loop takes a batch of class indices from a dataset: (name, batch)."""
    return {
        "slice": lambda i: data[i:i + 6],
        "stack of slices": lambda i: lib.stack([data[i:i + 3], data[i + 3:i + 6]]),
        "cat of slices": lambda i: lib.cat([data[i:i + 2], data[i + 4:i + 6]]),
        "strided view": lambda i: data[i + 1:i + 13:2],
        "index_select": lambda i: data.index_select(0, lib.tensor([i, i + 1, i + 5])),
        "flip of a slice": lambda i: data[i:i + 6].flip(0),
    }


@pytest.mark.parametrize("form", sorted(_batch_forms(tapegrad, None)))
def test_a_bad_element_outside_the_batch_is_not_an_error(torch, form):
    """The dataset's one bad target lies outside the first batches and inside the last: PyTorch checks
    only what the op reads, and so does the whole-dataset shortcut (it falls back to the batch)."""
    values = np.arange(40) % 4
    values[30] = 9
    results = {}
    for lib in (tapegrad, torch):
        F, data = lib.nn.functional, lib.tensor(values)
        take = _batch_forms(lib, data)[form]

        def loss(batch, F=F, lib=lib):   # class scores for every target: (N, 4) or (N, 4, d)
            return F.cross_entropy(lib.zeros(batch.shape[0], 4, *batch.shape[1:]), batch).item()
        results[lib] = [loss(take(i)) for i in (0, 7, 16)]
        with pytest.raises(IndexError, match="Target 9 is out of bounds"):
            loss(take(25 if form != "index_select" else 29))
    assert results[tapegrad] == pytest.approx(results[torch])


@pytest.mark.parametrize("form", sorted(_batch_forms(tapegrad, None)))
def test_batches_of_a_checked_dataset_stay_pending(form):
    """Checking a batch sliced from a dataset that passed reads nothing: no program runs for it, so the
    batch is computed inside the step's program (one XLA execution a step)."""
    from xla_events import counting
    data = tapegrad.tensor(np.arange(64) % 4)
    take = _batch_forms(tapegrad, data)[form]
    tapegrad.nn.functional.embedding(data, tapegrad.ones(4, 2))   # the dataset is checked (and passes)
    with counting() as xla:
        for i in (0, 3, 9, 21):
            batch = take(i)
            tapegrad.nn.functional.embedding(batch, tapegrad.ones(4, 2))
            tapegrad.nn.functional.one_hot(batch, 4)
    assert xla.executions == 0


def test_a_dataset_written_in_place_is_checked_again(torch):
    for lib in (tapegrad, torch):
        data = lib.tensor(np.arange(20) % 4)
        F = lib.nn.functional
        F.cross_entropy(lib.zeros(4, 4), data[2:6])
        data[3] = 7
        with pytest.raises(IndexError, match="Target 7 is out of bounds"):
            F.cross_entropy(lib.zeros(4, 4), data[2:6])
        F.cross_entropy(lib.zeros(4, 4), data[8:12])


def test_a_converted_batch_is_checked_by_its_own_values(torch):
    """A cast changes values (1.5 -> 1), so the float dataset's verdict does not carry over."""
    for lib in (tapegrad, torch):
        data = lib.tensor([0.0, 1.5, 4.2, 2.0])
        lib.nn.functional.cross_entropy(lib.zeros(2, 4), data[:2].long())
        with pytest.raises(IndexError, match="Target 4 is out of bounds"):
            lib.nn.functional.cross_entropy(lib.zeros(2, 4), data[1:3].long())
