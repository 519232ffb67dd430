"""Functions for the spawn tests in tests/test_multiprocessing.py (no tapegrad import: children start fast)."""
import os


def write_rank(i, folder, word):
    with open(os.path.join(folder, f"rank{i}"), "w") as f:
        f.write(f"{word} {i}")


def fail_on_one(i):
    if i == 1:
        raise KeyError("rank one failed")


def exit_three(i):
    raise SystemExit(3 if i == 0 else 0)
