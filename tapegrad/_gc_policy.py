"""Python's cyclic garbage collector, tuned for a tape of Python objects.

PyTorch records its graph in C++; tapegrad records it as Python objects (pending values, nodes, tuples),
thousands per step for a long tape, which live until the step ends and are then freed by reference
counting: they form no cycles (a 400-step RNN, an MLP with Adam and a no_grad evaluation loop leave no
cyclic garbage, checked with gc.collect()). Yet surviving two young collections promotes them to the
oldest generation, and CPython runs a full collection, which walks every object of the process, once
the promoted objects reach a quarter of the old ones and ten middle collections have passed. With jax
(and a PyTorch or matplotlib import) the process holds 100-300 thousand objects, and a full collection
costs ~100 ms on 2 CPU cores: the 400-step unrolled RNN spent 30-50 ms of each ~90 ms step in them.

So importing tapegrad raises the oldest generation's threshold from CPython's default 10 to 100 (ten
times rarer full collections: the RNN step falls to ~50 ms); young collections and reclaiming cycles
are unchanged, cyclic garbage that reaches the oldest generation waits longer. A threshold the program
set itself is kept, and TAPEGRAD_GC=default keeps CPython's.
"""
import gc
import os

FULL_COLLECTION_THRESHOLD = 100
_CPYTHON_DEFAULT = 10


def apply():
    if os.environ.get("TAPEGRAD_GC", "") == "default":
        return
    young, middle, old = gc.get_threshold()
    if old == _CPYTHON_DEFAULT:
        gc.set_threshold(young, middle, FULL_COLLECTION_THRESHOLD)
