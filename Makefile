# accelconf developer tasks. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install schemas bench vsix clean mutants

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# torch==2.13.0 (CPU) comes from the test extras only; the library itself never needs it.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
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

schemas: $(STAMP)
	$(BIN)/accelconf schema --write schemas/

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# Mutation testing of the core (not in CI; takes hours for every mutant on 2 cores). Writes
# bench/MUTANTS.md. MUTANTS="pattern ..." limits the run to mutant names matching mutmut globs,
# e.g. MUTANTS="accelconf.accelerate.fmt.* accelconf.diff.*0" (every tenth of diff's).
MUTANTS ?=
mutants: $(STAMP)
	$(BIN)/python -m pip install -q 'mutmut==3.8.1'
	-nice -n 19 $(BIN)/python tools/mutmut_run.py run --max-children 1 $(MUTANTS)
	nice -n 19 $(BIN)/python tools/mutants_import_time.py
	$(BIN)/python tools/mutants_report.py

vsix: schemas
	bash editors/vscode/build.sh

clean:
	rm -rf $(VENV) build dist *.egg-info mutants
