# The two commands (see README): `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Hermes Agent pins openai, pydantic and httpx below what [all] installs: its tests run in a venv of their own
HERMES_VENV := .venv-hermes
HERMES_STAMP := $(HERMES_VENV)/.installed
# CrewAI pins pydantic, openai and mcp below what [all] installs: its tests run in a venv of their own too
CREWAI_VENV := .venv-crewai
CREWAI_STAMP := $(CREWAI_VENV)/.installed

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade "pip>=25.1"
	# torch for the dev group only (the embedder reference tests, Mem0's huggingface embedder in the benchmarks;
	# the package itself needs no torch): this exact release is a CPU wheel on local disk, anything else a CUDA build
	$(BIN)/python -m pip install -q "torch==2.13.0"
	$(BIN)/python -m pip install -q -e ".[all]" --group dev
	# the dashboard's browser test drives Debian's chromium (installed when root; else it skips, saying why)
	command -v chromium >/dev/null || [ "$$(id -u)" != 0 ] || (apt-get update -q && apt-get install -y -q chromium) \
		|| echo "warning: chromium not installed - tests/adapters/web/test_browser.py will skip"
	touch $(STAMP)

$(HERMES_STAMP): pyproject.toml
	test -x $(HERMES_VENV)/bin/python || $(PY) -m venv $(HERMES_VENV)
	$(HERMES_VENV)/bin/python -m pip install -q --upgrade "pip>=25.1"
	$(HERMES_VENV)/bin/python -m pip install -q -e ".[hermes,embed,postgres]" --group hermes-tests
	touch $(HERMES_STAMP)

$(CREWAI_STAMP): pyproject.toml
	test -x $(CREWAI_VENV)/bin/python || $(PY) -m venv $(CREWAI_VENV)
	$(CREWAI_VENV)/bin/python -m pip install -q --upgrade "pip>=25.1"
	$(CREWAI_VENV)/bin/python -m pip install -q -e ".[crewai,embed,postgres]" --group crewai-tests
	touch $(CREWAI_STAMP)

install: $(STAMP) $(HERMES_STAMP) $(CREWAI_STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

# the main suite (its Hermes and CrewAI examples and cross-adapter tests call .venv-hermes' / .venv-crewai's python),
# then tests/adapters/hermes in .venv-hermes and tests/adapters/crewai in .venv-crewai (skipped, saying why, in the
# main venv)
test: $(STAMP) $(HERMES_STAMP) $(CREWAI_STAMP)
	AGENTBASE_HERMES_PYTHON=$(CURDIR)/$(HERMES_VENV)/bin/python AGENTBASE_CREWAI_PYTHON=$(CURDIR)/$(CREWAI_VENV)/bin/python \
		$(BIN)/python -m pytest -q
	AGENTBASE_REQUIRE_HERMES=1 $(HERMES_VENV)/bin/python -m pytest -q tests/adapters/hermes
	AGENTBASE_REQUIRE_CREWAI=1 $(CREWAI_VENV)/bin/python -m pytest -q tests/adapters/crewai

# the whole suite again with every fixture-provided database on a throwaway PostgreSQL + pgvector
# (tests/postgres/plugin.py; docs/postgres.md "Tests"); `make test` already runs the store contract suite
# and tests/postgres on both backends (.ci/run runs `make test` only: docs/postgres.md "Tests")
test-postgres: $(STAMP)
	AGENTBASE_TEST_BACKEND=postgres $(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m benchmarks run

bench-scale: $(STAMP)
	$(BIN)/python -m benchmarks scale --sizes 10000,100000

# the same loads on PostgreSQL + pgvector (a throwaway server, durable settings): results/scale-postgres.json
bench-scale-postgres: $(STAMP)
	$(BIN)/python -m benchmarks scale --backend postgres --sizes 10000,100000

# ~25 min on 2 cores, a 3.6 GB scratch file, ~9 GB RAM
bench-1m: $(STAMP)
	$(BIN)/python -m benchmarks scale --sizes 1000000

stress: $(STAMP)
	$(BIN)/python -m benchmarks.stress

.PHONY: install demo test test-postgres bench bench-scale bench-scale-postgres bench-1m stress
