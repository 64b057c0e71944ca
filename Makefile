VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --quiet --disable-pip-version-check
PYTEST_ARGS ?=
CLIENT := clients/typescript

.PHONY: venv redis-server chromium java go node wrk valgrind client client-test test run bench bench-compiled lint openapi \
	compiled pure test-compiled

venv: $(VENV)/.installed

# A venv left half-made (made without Debian's python3-venv, so without pip, or whose Python
# no longer runs) is removed before make looks at the stamps below, so it is built again.
ifneq ($(wildcard $(VENV)),)
ifneq ($(shell $(PY) -c 'import pip' >/dev/null 2>&1 && echo ok),ok)
$(info $(VENV) has no working Python or pip: building it again)
$(shell rm -rf $(VENV))
endif
endif

# $(call apt-install,CHECK,PACKAGES): when the shell command CHECK fails, install PACKAGES
# from Debian (as root, or through sudo), without the packages they only recommend.
define apt-install
	@$(1) >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then sudo=; \
	  elif command -v sudo >/dev/null 2>&1; then sudo=sudo; \
	  else echo "$(2) is missing; install it as root: apt-get install --no-install-recommends $(2)" >&2; \
	    exit 1; fi; \
	  $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends $(2); }
endef

# Reinstall only when pyproject.toml is newer than the stamp. `serve` has what serving
# needs; `.installed` adds the test tools. pip speaks only of warnings and errors.
# Debian's python3 makes a venv with pip only with python3-venv (ensurepip).
$(VENV)/.serve: pyproject.toml
	$(call apt-install,python3 -c 'import ensurepip',python3-venv)
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PIP) install -e .
	@touch $@

$(VENV)/.installed: $(VENV)/.serve
	@$(PIP) install -e '.[test]'
	@touch $@

# redis-cli too: the Redis Cluster tests join their nodes with `redis-cli --cluster create`.
redis-server:
	$(call apt-install,command -v redis-server,redis-server)
	$(call apt-install,command -v redis-cli,redis-tools)

# Node and npm for the TypeScript client (Debian's packages when missing).
node:
	$(call apt-install,command -v npm,nodejs npm)

# The client's npm packages, exactly as package-lock.json pins them.
$(CLIENT)/node_modules/.installed: $(CLIENT)/package-lock.json | node
	cd $(CLIENT) && npm ci --no-audit --no-fund
	touch $@

# Headless browser for the play page's tests (driven by Playwright, which downloads nothing).
# Its recommended packages (cups, avahi, upower, a sandbox helper…) are not needed headless.
chromium:
	$(call apt-install,command -v chromium,chromium)

# Java for OpenAPI Generator, whose jar the generated-client tests run (Debian's JRE).
java:
	$(call apt-install,command -v java,default-jre-headless)

# Go and the one package the go client OpenAPI Generator makes imports (vendored by
# tests/service/test_go_client.py from its Debian package: no module proxy is needed).
go:
	$(call apt-install,command -v go,golang-go)
	$(call apt-install,test -d /usr/share/gocode/src/gopkg.in/validator.v2,golang-gopkg-validator.v2-dev)

# The Python suite twice: on the pure-Python engine, then on its mypyc build (test-compiled).
test: venv redis-server chromium java go wrk $(CLIENT)/node_modules/.installed
	$(PY) -m pytest -n 2 $(PYTEST_ARGS)
	$(MAKE) --no-print-directory test-compiled
	cd $(CLIENT) && npm test
	$(VENV)/bin/ruff check .

# Quiet unless something fails: gunicorn's and the service's warnings and errors only, no
# access log; gunicorn.conf.py says where to go once it listens (127.0.0.1 unless HOST says
# otherwise). LOG_LEVEL=info and ACCESS_LOG=- bring the rest back.
run: $(VENV)/.serve
	@LOG_LEVEL=$${LOG_LEVEL:-warning} $(VENV)/bin/gunicorn -c gunicorn.conf.py \
	  --access-logfile $${ACCESS_LOG:-/dev/null} service.wsgi:app

# The benchmarks' peers, OpenSpiel and RLCard, come with the optional `bench` extra.
$(VENV)/.bench-installed: $(VENV)/.installed
	@$(PIP) install -e '.[test,bench]'
	@touch $@

# wrk, the C load generator of the HTTP benchmarks (a test checks its gate, bench/post.lua).
wrk:
	$(call apt-install,command -v wrk,wrk)

# valgrind, whose cachegrind counts the instructions of engine work (python -m bench.instructions).
valgrind:
	$(call apt-install,command -v valgrind,valgrind)

# Every benchmark in one table, the engine's playouts also on its mypyc build (python -m
# bench runs make compiled, then make pure).
bench: venv redis-server wrk $(VENV)/.bench-installed
	$(PY) -m bench

# The engine's figures on its mypyc build, then the pure engine again (even on a failure);
# BENCH_ENGINE_ARGS go to bench.engine (python -m bench passes its own).
bench-compiled: compiled
	$(PY) -m bench.engine $(BENCH_ENGINE_ARGS); status=$$?; $(MAKE) --no-print-directory pure; exit $$status

# The optional compiled engine (docs/operations.md): mypyc, installed with mypy into the
# venv, builds a C extension beside each engine module it compiles (compile_engine.py says
# which stay interpreted), and Python imports those first. `pure` deletes them: the
# pure-Python engine again. A C compiler and Python's headers come from Debian if missing.
MYPY := mypy==2.4.1

$(VENV)/.mypyc-installed: $(VENV)/.installed
	@$(PIP) install '$(MYPY)'
	@touch $@

compiled: $(VENV)/.mypyc-installed
	$(call apt-install,command -v cc,gcc)
	$(call apt-install,test -f "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h",python3-dev)
	$(PY) compile_engine.py

pure:
	find engine -name '*.so' -delete
	rm -rf build/mypyc

# The whole suite on the compiled engine, which is then removed again (even on a failure).
test-compiled: compiled
	$(PY) -m pytest -n 2 $(PYTEST_ARGS); status=$$?; $(MAKE) --no-print-directory pure; exit $$status

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
