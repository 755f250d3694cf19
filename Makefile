# The two entry points of the README: `make demo` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench models clean pi-check

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/referee demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n 2

# Fit the readers' models (vision/models/) from vision/train/recipes.json in a venv of its own,
# so that PyTorch never enters the test or demo environment.
TRAIN_VENV := .venv-train
$(TRAIN_VENV)/.installed: pyproject.toml vision/train/constraints.txt
	$(PYTHON) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/pip install --quiet --upgrade pip
	$(TRAIN_VENV)/bin/pip install --quiet -c vision/train/constraints.txt -e ".[train]"
	touch $@

models: $(TRAIN_VENV)/.installed
	$(TRAIN_VENV)/bin/referee train

bench: $(STAMP)
	$(BIN)/referee bench engine

# hardware/install.sh and the engine and vision tests in arm64 Debian Bookworm and Trixie roots
# under emulation (as root, tens of minutes: not part of `make test`; docs/firmware.md).
pi-check:
	hardware/pi-check.sh

clean:
	rm -rf $(VENV) $(TRAIN_VENV) out
