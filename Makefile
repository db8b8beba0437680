# padlint developer entry points.  `make demo` and `make test` work on a
# fresh machine: they create .venv and install what each needs.
#
# Two stamps: `make demo` needs only the static checker (libcst, rich,
# pathspec: no torch); `make test` and the targets that run the runtime
# checker add torch and the dev/runtime extras.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STATIC := $(VENV)/.static
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast test-engine engine-deps bench mutate corpus docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# the static checker alone
$(STATIC): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	touch $(STATIC)

# everything: tests, benchmarks, the runtime checker
$(STAMP): pyproject.toml $(STATIC)
	# torch 2.13.0 is the CPU build on this machine's disk; a bare `torch` would pull a multi-GB CUDA build
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[dev,runtime]"
	touch $(STAMP)

demo: $(STATIC)
	-$(VENV)/bin/padlint check fixtures/ --exclude 'fixtures/runtime/*'
	@echo
	@echo "(exit status 1 above is expected: the buggy fixtures have findings)"

test: $(STAMP) engine-deps
	$(PY) -m pytest -q

# The real-engine tier (pytest -m engine): vLLM's import dependencies in a cache outside the
# venv (~360 MB, 1-2 min cold, shared by every checkout; tests/runtime/engine/engine_env.py)
# and the release trees of the corpus cache.  A failure here is not fatal: the tier then
# skips with one reason.
engine-deps: $(STAMP)
	-$(PY) tests/runtime/engine/engine_env.py ensure
	-$(PY) -m tests.corpus_cache fetch 0.21.0 0.22.0 0.23.0 0.24.0 0.30.0 0.31.0 0.33.0

test-engine: $(STAMP) engine-deps
	$(PY) -m pytest -q -m engine

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not corpus and not slow"

corpus: $(STATIC)
	$(PY) -m tests.corpus_cache fetch 0.21.0 0.22.0 0.23.0 0.24.0 0.30.0 0.31.0 0.33.0 sglang==0.5.2 sglang==0.5.3 sglang==0.5.23

bench: $(STAMP)
	$(PY) benchmarks/run.py

# Delete each reset statement of the real runners one at a time; count the deletions padlint notices
# (docs/mutation.md).  Writes docs/mutation-ENGINE.md and build/mutation.json.
mutate: $(STATIC)
	$(PY) benchmarks/mutation.py -j 2 --markdown-dir docs --json build/mutation.json

docs: $(STATIC)
	$(PY) -m padlint.rules_doc --write docs/rules --readme README.md

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist
