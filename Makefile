# The two things a newcomer runs (see README "Quick start"):
#   make demo   set up a virtualenv and run `gpuscale demo`
#   make test   set up, install the system packages the tests use, and run every check
# Everything is installed from PyPI and Debian's registry; nothing is assumed on the machine
# beyond python3 (>= 3.11) with venv.

VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)

.PHONY: demo test check unit integration conformance lint-code system-deps bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $@

demo: $(STAMP)
	$(VENV)/bin/gpuscale demo

system-deps:
	scripts/install-system-deps.sh

lint-code: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

conformance: $(STAMP)
	scripts/conformance.sh $(PY)

test: system-deps $(STAMP) lint-code conformance
	$(PY) -m pytest

bench: $(STAMP)
	@echo "benchmarks: see benchmarks/README.md"

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
