"""Explore without shrinking: run many programs, group the differences, print the shortest of each group, reduced.

    cd tests && python -m fuzz --examples 300 --seed 1 [--higher-order]

Prints the share of programs that raised (in torch), the time taken, and one shortest program per
kind of difference (differences are grouped by their first line with numbers and names folded).
"""
import argparse
import re
import time
import warnings

from hypothesis import HealthCheck, Phase, given, seed, settings

import tapegrad

from . import Program, differences, programs, run


def _signature(problem):
    first = problem.splitlines()[0]
    return re.sub(r"\bt\d+\b", "tN", re.sub(r"-?\d+(\.\d+)?", "#", first))[:160]


def _differences(program, torch):
    return differences(run(program, tapegrad), run(program, torch))


def reduce(program, key, torch):
    """Drop steps one at a time while the first difference keeps its signature (names may dangle: then
    the program raises NameError in both libraries and the removal is not kept)."""
    steps = list(program.steps)
    changed = True
    while changed:
        changed = False
        for i in range(len(steps) - 1, -1, -1):
            trial = Program(steps[:i] + steps[i + 1:], program.tensors, program.retained)
            found = _differences(trial, torch)
            if found and _signature(found[0]) == key:
                steps, changed = trial.steps, True
    return Program(steps, program.tensors, program.retained)


def explore(examples, seed_value):
    import torch
    stats = {"programs": 0, "raised": 0}
    groups = {}

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def check(program):
        theirs = run(program, torch)
        ours = run(program, tapegrad)
        stats["programs"] += 1
        stats["raised"] += theirs.error is not None
        found = differences(ours, theirs)
        if found:
            key = _signature(found[0])
            best = groups.get(key)
            if best is None or len(program.steps) < len(best[0].steps):
                groups[key] = (program, found)

    start = time.perf_counter()
    check()
    elapsed = time.perf_counter() - start
    print(f"{stats['programs']} programs in {elapsed:.1f} s; torch raised in {stats['raised']} "
          f"({stats['raised'] / max(1, stats['programs']):.0%}); {len(groups)} kinds of difference")
    for key, (program, found) in groups.items():
        program = reduce(program, key, torch)
        found = _differences(program, torch)
        print("=" * 100)
        print(key)
        print("\n".join(found))
        print(repr(program))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--higher-order", action="store_true", help="write double-backward steps too")
    args = parser.parse_args()
    if args.higher_order:
        import fuzz
        fuzz.HIGHER_ORDER = True
    warnings.simplefilter("ignore")
    explore(args.examples, args.seed)
