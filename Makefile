# `make demo` and `make test` each create .venv and install what they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SHARED ?= ../shared
DIFFTEST := $(abspath $(SHARED))/parity/difftest.py

.PHONY: demo test parity bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,demo]"
	touch $@

demo: $(VENV)/.installed
	$(PY) -m tapegrad.demo

# The parity step is part of `make test`: a missing ../shared/parity fails the run, it is never skipped.
# It runs beside the suite (its own processes, its output shown after the suite's), so that both cores
# stay busy to the end; either failing fails the run.
test: $(VENV)/.installed
	@$(MAKE) --no-print-directory parity > .parity.log 2>&1 & parity=$$!; \
	TAPEGRAD_DIFFTEST=$(DIFFTEST) $(PY) -m pytest -n 2 --dist worksteal tests; suite=$$?; \
	wait $$parity; checked=$$?; cat .parity.log; rm -f .parity.log; \
	test $$suite -eq 0 && test $$checked -eq 0

parity: $(VENV)/.installed
	@test -f "$(DIFFTEST)" || { echo "error: the shared parity harness $(DIFFTEST) is missing;" \
		"check out the shared directory next to the repository or run make SHARED=/path/to/shared" >&2; exit 1; }
	PYTHON_TORCH=$(abspath $(PY)) PYTHON_TAPEGRAD=$(abspath $(PY)) $(PY) $(DIFFTEST) --show $(abspath $(SHARED))/parity/seed_*.py

bench: $(VENV)/.installed
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
