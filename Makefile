VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
CLIENT := clients/typescript

.PHONY: venv redis-server chromium node wrk client client-test test run bench lint openapi

venv: $(VENV)/.installed

# Reinstall only when pyproject.toml is newer than the stamp. `serve` has what serving
# needs; `.installed` adds the test tools.
$(VENV)/.serve: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e .
	touch $@

$(VENV)/.installed: $(VENV)/.serve
	$(PY) -m pip install -e '.[test]'
	touch $@

# $(call apt-install,COMMAND,PACKAGES[,OPTIONS]): install PACKAGES from Debian when COMMAND is
# missing (as root, or through sudo), with apt-get's OPTIONS if any.
define apt-install
	@command -v $(1) >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then sudo=; \
	  elif command -v sudo >/dev/null 2>&1; then sudo=sudo; \
	  else echo "$(1) is missing; install it as root: apt-get install -y $(3) $(2)" >&2; exit 1; fi; \
	  $$sudo apt-get update && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y $(3) $(2); }
endef

# redis-cli too: the Redis Cluster tests join their nodes with `redis-cli --cluster create`.
redis-server:
	$(call apt-install,redis-server,redis-server)
	$(call apt-install,redis-cli,redis-tools)

# Node and npm for the TypeScript client (Debian's packages when missing).
node:
	$(call apt-install,npm,nodejs npm)

# The client's npm packages, exactly as package-lock.json pins them.
$(CLIENT)/node_modules/.installed: $(CLIENT)/package-lock.json | node
	cd $(CLIENT) && npm ci --no-audit --no-fund
	touch $@

# Headless browser for the play page's tests (driven by Playwright, which downloads nothing).
chromium:
	$(call apt-install,chromium,chromium)

test: venv redis-server chromium $(CLIENT)/node_modules/.installed
	$(PY) -m pytest -n 2 $(PYTEST_ARGS)
	cd $(CLIENT) && npm test
	$(VENV)/bin/ruff check .

run: $(VENV)/.serve
	$(VENV)/bin/gunicorn -c gunicorn.conf.py service.wsgi:app

# The benchmarks' peers, OpenSpiel and RLCard, come with the optional `bench` extra.
$(VENV)/.bench-installed: $(VENV)/.installed
	$(PY) -m pip install -e '.[test,bench]'
	touch $@

# wrk, the C load generator of the HTTP benchmarks.
wrk:
	$(call apt-install,wrk,wrk,--no-install-recommends)

bench: venv redis-server wrk $(VENV)/.bench-installed
	$(PY) -m bench

lint: venv
	$(VENV)/bin/ruff check .

# Through a temporary file, so a failing generator never leaves a truncated spec.
openapi: venv
	$(PY) -m service.openapi > openapi.yaml.tmp && mv openapi.yaml.tmp openapi.yaml

# openapi.yaml, then the TypeScript client's types from it (a client test fails while stale).
client: openapi $(CLIENT)/node_modules/.installed
	cd $(CLIENT) && npm run generate

# The TypeScript client's own tests: they start redis-server and gunicorn themselves.
client-test: venv redis-server $(CLIENT)/node_modules/.installed
	cd $(CLIENT) && npm test
