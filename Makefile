# `make demo` and `make test` each create .venv and install what they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SHARED ?= ../shared

.PHONY: demo test parity bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,demo]"
	touch $@

demo: $(VENV)/.installed
	$(PY) -m tapegrad.demo

test: $(VENV)/.installed
	$(PY) -m pytest -n 2 tests
	@if [ -d "$(SHARED)/parity" ]; then $(MAKE) --no-print-directory parity; fi

parity: $(VENV)/.installed
	PYTHON_TORCH=$(abspath $(PY)) PYTHON_TAPEGRAD=$(abspath $(PY)) $(PY) $(SHARED)/parity/difftest.py --show $(SHARED)/parity/seed_*.py

bench: $(VENV)/.installed
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
