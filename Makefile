VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: venv redis-server test run bench lint openapi

venv: $(VENV)/.installed

# Reinstall only when pyproject.toml is newer than the stamp.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[test]'
	touch $@

redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then sudo=; \
	  elif command -v sudo >/dev/null 2>&1; then sudo=sudo; \
	  else echo "redis-server is missing; install it as root: apt-get install -y redis-server" >&2; exit 1; fi; \
	  $$sudo apt-get update && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server; }

test: venv redis-server
	$(PY) -m pytest -n 2 $(PYTEST_ARGS)
	$(VENV)/bin/ruff check .

run: venv
	$(VENV)/bin/gunicorn -c gunicorn.conf.py service.wsgi:app

# The benchmarks' peer, OpenSpiel, comes with the optional `bench` extra.
$(VENV)/.bench-installed: $(VENV)/.installed
	$(PY) -m pip install -e '.[test,bench]'
	touch $@

bench: venv redis-server $(VENV)/.bench-installed
	$(PY) -m bench

lint: venv
	$(VENV)/bin/ruff check .

# Through a temporary file, so a failing generator never leaves a truncated spec.
openapi: venv
	$(PY) -m service.openapi > openapi.yaml.tmp && mv openapi.yaml.tmp openapi.yaml
