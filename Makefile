# The two commands: `make demo` and `make test`. Both create .venv and install what they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# Python keeps the bytecode of what it compiles (rankscope's own sources, and the test modules pytest rewrites): with
# PYTHONDONTWRITEBYTECODE set, each of the suite's hundreds of processes (test workers, servers, Ray workers,
# subprocesses) compiled them again, a second or more each
unexport PYTHONDONTWRITEBYTECODE

.PHONY: test demo lint typecheck pytest bench bench-core clean system-deps catalog

# Debian packages the browser and PostgreSQL tests need (skipped when already present); a CJK font so
# that Chinese HTML reports render in headless Chromium
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
system-deps:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || ! ls /usr/share/fonts/truetype/wqy/wqy-microhei.ttc >/dev/null 2>&1; then \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium chromium-driver postgresql fonts-wqy-microhei >/dev/null; \
	fi

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# pip compiles every module to bytecode as it installs (half of the install's time): leaving it to the first import
# cost make test twice as much (Ray workers, servers and CLI subprocesses compiling the same modules at once)
INSTALL := $(PIP) install -q

# torch first, from the CPU wheel on local disk, so sentence-transformers does not pull a CUDA build
$(VENV)/.torch: | $(PY)
	$(INSTALL) "torch==2.13.0"
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.torch | $(PY)
	$(INSTALL) -e ".[test,pandas,bm25,dense,e5,report,server,monitor,langchain,llamaindex,haystack,llm,ray]"
	touch $@

$(VENV)/.installed-demo: pyproject.toml $(VENV)/.torch | $(PY)
	$(INSTALL) -e ".[pandas,bm25,dense,e5,report]"
	touch $@

# lint-imports: the layers of docs/architecture.md, declared in pyproject.toml ([tool.importlinter])
lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check src tests bench scripts conftest.py
	$(VENV)/bin/lint-imports

typecheck: $(VENV)/.installed-test
	$(VENV)/bin/mypy

# one worker per core and one more: a third of the suite's time is spent waiting (servers, browsers, Ray, sockets),
# which the extra worker fills (2 cores: 7 min -> 5 min); a file's tests stay on one worker (module fixtures: a Ray
# cluster, a service, a doc page)
WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
pytest: $(VENV)/.installed-test system-deps
	$(VENV)/bin/pytest -n $(WORKERS) --dist loadfile --durations=20

test: lint typecheck pytest

demo: $(VENV)/.installed-demo
	$(VENV)/bin/rankscope demo

# The message catalog (docs/architecture.md, "Messages"): extract the English of the code and the templates (babel.cfg)
# into rankscope.pot, merge it into each language's .po (a changed English message becomes fuzzy and is said in
# English until its translation is looked at), compile the .mo the package reads.  Babel only: run `make test` (or
# pip install babel) first.
LOCALE := src/rankscope/locale
PYBABEL := $(VENV)/bin/pybabel
catalog:
	$(PYBABEL) extract -F babel.cfg -k NC_:1c,2 --no-location --sort-output --omit-header -o $(LOCALE)/rankscope.pot .
	$(PYBABEL) update -i $(LOCALE)/rankscope.pot -d $(LOCALE) -D rankscope --ignore-pot-creation-date --ignore-obsolete --width 120
	$(PYBABEL) compile -d $(LOCALE) -D rankscope

# every speed target of the Python front end against its peer, side by side (about a minute, 10M-row files included)
bench: $(VENV)/.installed-test
	$(PY) bench/bench_targets.py

# the 10M-row tool comparison (rankscope, pytrec_eval, ranx; several minutes)
bench-core: $(VENV)/.installed-test
	$(PY) bench/bench_core.py

clean:
	rm -rf $(VENV) demo-out .mypy_cache .pytest_cache .ruff_cache
