# Two commands do all the setup on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test eval bench lint typecheck clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo/run_demo.py

test: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/mypy
	$(BIN)/pytest

eval: $(STAMP)
	$(BIN)/dreaming eval --adversarial --online --ledger .eval/results.tsv

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
