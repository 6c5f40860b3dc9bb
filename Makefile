# The two commands a newcomer needs (see README.md):
#   make demo   set up the runtime only, then run the end-to-end story (write, load, filter, read)
#   make test   set up everything (tests, reference tools, torch, Dask, QGIS, Chromium), then run
#               lint, type checks and the whole test suite
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup setup-runtime demo test lint typecheck pytest bench clean

setup:
	bash scripts/setup.sh dev

setup-runtime:
	bash scripts/setup.sh runtime

demo: setup-runtime
	$(PY) -m taco_gdal.demo

lint:
	$(VENV)/bin/ruff check taco_gdal tests bench plugins
	$(VENV)/bin/ruff format --check taco_gdal tests bench plugins
	$(VENV)/bin/lint-imports

typecheck:
	$(VENV)/bin/mypy

pytest:
	$(PY) -m pytest -q -p no:cacheprovider -n auto --maxprocesses 4 --dist loadfile

test: setup lint typecheck pytest

bench: setup
	$(PY) -m bench.run_all

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
