# accelconf developer tasks. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install schemas bench versions vsix clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Two installs into the same venv: the library with its runtime dependencies only (what `demo`,
# `install` and `schemas` need), and the test extras on top (torch==2.13.0 CPU, accelerate,
# deepspeed, jsonschema, pytest...: only `test` and `bench` need them).
LIB_STAMP := $(VENV)/.installed-lib

$(LIB_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $(LIB_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP) $(LIB_STAMP)

install: $(LIB_STAMP)

demo: $(LIB_STAMP)
	@echo "== accelconf validate examples/ (mistakes.yaml has errors on purpose) =="
	-$(BIN)/accelconf validate examples/*.yaml examples/*.json
	@echo
	@echo "== accelconf fmt --diff examples/ (comments kept, only spelling changes) =="
	$(BIN)/accelconf fmt --diff examples/*.yaml
	@echo
	@echo "== accelconf to-env examples/fsdp2.yaml =="
	-$(BIN)/accelconf to-env examples/fsdp2.yaml

test: $(STAMP)
	-bash tools/install-nvim.sh $(VENV) >/dev/null 2>&1
	$(BIN)/python -m pytest -q -p no:cacheprovider

schemas: $(LIB_STAMP)
	$(BIN)/accelconf schema --write schemas/

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# Every accelerate minor release 0.20-1.15 against its own launcher (installed once under the venv).
versions: $(STAMP)
	$(BIN)/python tests/oracle/matrix.py --write bench/VERSIONS.md --jobs 2

# Node >= 20 and npm; Python only to regenerate the schemas the extension bundles.
vsix: schemas
	bash editors/vscode/build.sh

clean:
	rm -rf $(VENV) build dist *.egg-info
