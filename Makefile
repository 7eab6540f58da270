# Two commands do all the setup on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test eval bench backtest lint typecheck clean compat-openclaw

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo/run_demo.py

test: $(STAMP)
	$(BIN)/ruff check src tests bench examples compat
	$(BIN)/ruff format --check src tests bench examples compat
	$(BIN)/mypy
	$(BIN)/pytest

eval: $(STAMP)
	$(BIN)/dreaming eval --adversarial --online --ledger .eval/results.tsv

bench: $(STAMP)
	$(BIN)/python -m bench

# Does dreaming improve decisions? A weekly walk-forward backtest of each shipped dataset (NASDAQ, S&P 500, WTI crude),
# on scratch copies under .backtest/, and one table of the baseline and dreaming committees (examples/backtest/).
backtest: $(STAMP)
	$(BIN)/python examples/backtest/run.py

# Ground truth from the real OpenClaw 2026.9.6 (Node 24 and openclaw under .cache/openclaw/, not needed by `make test`):
# regenerate tests/memory/recall/golden/openclaw-2026.9.6/ and check that Python and OpenClaw share one state DB.
# An existing venv is used as it is (`make compat-openclaw VENV=/path/to/venv`); a missing one is made.
compat-openclaw: $(if $(wildcard $(BIN)/python),,$(STAMP))
	$(BIN)/python compat/openclaw/install.py
	$(BIN)/python compat/openclaw/run.py goldens
	$(BIN)/python compat/openclaw/run.py interop

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
