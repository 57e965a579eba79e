# The two commands that matter: `make conformance` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TARGET ?=
PROFILE ?= all
WORKERS ?= 2
LATENCY ?=
JITTER ?= 15ms
LOAD_SCALE ?= 0.25
LOAD_CAMPAIGNS := burst refill shedding admission hold catalog minute simulated mixed soak
LOAD_SINGLE := admission hold
REPORTS ?= reports
# Redocly CLI (npm), pinned, installed into .tools/ by the Makefile; runs offline after install.
REDOCLY_VERSION := 2.77.0
TOOLS := .tools
REDOCLY := $(TOOLS)/node_modules/.bin/redocly
REDOCLY_STAMP := $(TOOLS)/.redocly-$(REDOCLY_VERSION)

.PHONY: install lock lint openapi-lint browser check test conformance killrate variants certify foreign latency bench bench-workers compare load load-smoke load-sensitivity load-distributed dist dist-check clean

# Installed from requirements.lock (every package pinned, with hashes: a verdict moves only with
# the server), then the project itself without its dependencies. The wheel keeps ranges.
$(STAMP): pyproject.toml requirements.lock
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --require-hashes -r requirements.lock
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

install: $(STAMP)

# Recompute requirements.lock from pyproject.toml (keeps the pins it can; UPGRADE=1 takes the
# newest releases the ranges allow). uv does the resolving; it is installed for this only.
UV_VERSION := 0.13.9
lock: $(STAMP)
	$(BIN)/pip install -q 'uv==$(UV_VERSION)'
	$(BIN)/uv pip compile pyproject.toml --extra dev --extra load --generate-hashes --universal \
		--python-version 3.11 -o requirements.lock $(if $(UPGRADE),--upgrade) -q

lint: $(STAMP)
	$(BIN)/ruff format --check src tests loadtests benchmarks
	$(BIN)/ruff check src tests loadtests benchmarks
	$(BIN)/mypy

# Debian's chromium for the report's browser self-test (tests/harness/test_report_browser.py);
# Playwright drives it (pip, [dev]); no browser is downloaded. Without apt-get: one message.
browser:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		echo "make browser: installing Debian's chromium (apt-get)"; \
		$$SUDO apt-get update -qq >/dev/null && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
		echo "make browser: no apt-get here: install chromium as /usr/bin/chromium yourself"; \
	fi

# The OpenAPI document through an external linter (redocly.yaml says which rules and why).
$(REDOCLY_STAMP):
	@command -v npm >/dev/null 2>&1 || { echo "make openapi-lint: npm not found: install Node.js 20.19+ and npm"; exit 2; }
	npm install --prefix $(TOOLS) --no-audit --no-fund --no-save --loglevel=error @redocly/cli@$(REDOCLY_VERSION)
	touch $@

openapi-lint: $(REDOCLY_STAMP)
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true timeout 60 \
		$(REDOCLY) lint spec/openapi.yaml --config redocly.yaml --format summary

# The inner loop (under 90 s here): format, lint, types, the self-tests that start no server
# (the sandbox's own tests run it in process), and one slice of the suite against the embedded
# sandbox. `make test` is the whole proof.
CHECK_TESTS := tests/sandbox $(filter-out %/test_client_cli.py %/test_client_sandbox.py,$(wildcard tests/client/test_*.py)) \
	$(addprefix tests/harness/,test_architecture.py test_docs_citations.py test_checks.py test_common_rules.py \
	test_expect_status.py test_verdicts.py test_results.py test_redact.py test_requirements_file.py \
	test_schema_check.py test_change_catalogue.py test_certify_core.py test_certify_state_judges.py \
	test_properties_rules.py test_load_core.py test_pacing.py test_requirement_proofs.py test_killrate.py)
CHECK_SLICE ?= CAT-*

# The self-tests start a few hundred Python processes (sandboxes, command lines, whole suite
# runs); each would compile the project and pytest's rewritten test modules again if the caller's
# environment forbids bytecode files (PYTHONDONTWRITEBYTECODE), so these two targets allow them.
check test: export PYTHONDONTWRITEBYTECODE :=

check: $(STAMP)
	$(BIN)/ruff format --check src tests loadtests benchmarks
	$(BIN)/ruff check src tests loadtests benchmarks
	$(BIN)/mypy
	$(BIN)/pytest -q -n 2 --dist loadfile $(CHECK_TESTS)
	$(BIN)/delivery-conformance run --no-properties --requirement '$(CHECK_SLICE)' --report-dir $(REPORTS)/check

# The self-tests that time the real clock (the load campaigns, the suite behind a paced 40 ms
# proxy, an independent client's refresh timers) leave the processor mostly idle, so they are a
# session of their own beside the two workers of every other self-test, and they come first: the
# other session runs at niceness 10. Their verdicts depend on timing (a load generator that falls
# behind makes its run invalid). Every process of both sessions stays in make's session, so
# Linux's autogroups schedule them as one group and the niceness holds (a child in a session of
# its own would be a group of its own, out of its reach). The lints (format, lint, types, the
# OpenAPI document) run beside them too, at niceness 10; every output follows, and `make test`
# fails when any of the three fails. `make lint` alone fails fast.
TIMED_TESTS := $(addprefix tests/harness/,test_load_smoke.py test_load_distributed.py test_latency.py \
	test_certify_independent.py)
TEST_MARKS := not load_full and not latency_full

test: $(STAMP) $(REDOCLY_STAMP) browser
	@mkdir -p $(REPORTS)
	@$(BIN)/pytest -q -p no:cacheprovider --durations=5 -m "$(TEST_MARKS)" $(TIMED_TESTS) \
		> $(REPORTS)/timed-tests.log 2>&1 & timed=$$!; \
	nice -n 10 $(MAKE) --no-print-directory lint openapi-lint > $(REPORTS)/lint.log 2>&1 & lint=$$!; \
	nice -n 10 $(BIN)/pytest -q -n 2 --dist loadfile --durations=15 -m "$(TEST_MARKS)" \
		$(addprefix --ignore=,$(TIMED_TESTS)) tests/harness tests/sandbox tests/client; main=$$?; \
	wait $$timed; timed=$$?; wait $$lint; lint=$$?; \
	echo "--- the self-tests that time the real clock ($(TIMED_TESTS)), run beside the session above:"; \
	cat $(REPORTS)/timed-tests.log; \
	echo "--- make lint openapi-lint, run beside them:"; \
	cat $(REPORTS)/lint.log; \
	test $$main -eq 0 && test $$timed -eq 0 && test $$lint -eq 0

conformance: $(STAMP)
	$(BIN)/delivery-conformance run $(if $(TARGET),--target $(TARGET)) --report-dir $(REPORTS)

killrate: $(STAMP)
	$(BIN)/delivery-conformance killrate --report-dir $(REPORTS)

# The false-positive rate: the whole suite against each legal variant of the sandbox, one
# sandbox and one run per variant (docs/sandbox.md > Legal variants); every run must exit 0.
variants: $(STAMP)
	$(BIN)/delivery-conformance variants --jobs 2 --report-dir $(REPORTS)

# The whole suite against a server built from spec/openapi.yaml, 10 seeds per mode (valid and
# broken answers), two runs at a time: every run exit 1, no error of the tool, widest charge
# printed (~50 min: answers that never agree cost each comparison its whole Freshness bound).
foreign: $(STAMP)
	$(BIN)/python tests/harness/foreign_server.py --seeds 10 --modes valid,broken --jobs 2 \
		--work $(REPORTS)/foreign

# The whole suite against the embedded sandbox behind a 40 ms +- 15 ms proxy, paced and unpaced,
# three times in a row (~25 min): every run 0 failed, 0 errors (read from results.json).
latency: $(STAMP)
	$(BIN)/pytest -q -m latency_full tests/harness/test_latency.py
	$(BIN)/python -m benchmarks.latency_suite --runs 3 --out $(REPORTS)/bench/latency_suite.json

# Client certification in full (~65 min): both populations, the reference client and the
# independent Node client (tests/harness/independent_clients/node), each through the whole
# scenario catalogue three times, then every broken variant and every break of both (make test
# runs the quick form).
certify: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python tests/harness/broken_clients/killrate.py \
		--population all --set fast --clean-runs 3 --jobs 2 --out $(REPORTS)/certify-killrate.md

bench: $(STAMP)
	$(BIN)/python -m benchmarks $(if $(TARGET),--target $(TARGET))

# Run time against `run --workers N` behind 40 and 150 ms (also the last part of `make bench`).
bench-workers: $(STAMP)
	$(BIN)/python -m benchmarks.workers

compare: $(STAMP)
	$(BIN)/python -m benchmarks compare

# Every campaign at full scale (PROFILE=all), or one; LATENCY=40ms puts the latency proxy between.
load: $(STAMP)
	@status=0; for p in $(if $(filter all,$(PROFILE)),$(LOAD_CAMPAIGNS),$(PROFILE)); do \
	  w=$(WORKERS); case " $(LOAD_SINGLE) " in *" $$p "*) w=0;; esac; \
	  $(BIN)/python -m loadtests.run $$p $(if $(TARGET),--target $(TARGET)) --workers $$w \
	    $(if $(LATENCY),--latency $(LATENCY) --jitter $(JITTER)) --report-dir $(REPORTS) \
	    || status=1; done; exit $$status

# One campaign with its Locust master and workers on separate hosts: network namespaces of this
# machine joined by veth pairs, torn down at the end (root only; docs/load.md > Distributed runs).
DIST_CAMPAIGN ?= tenants
DIST_WORKERS ?= 2
DIST_SCALE ?= 0.05
TENANTS ?=
load-distributed: $(STAMP)
	$(BIN)/python -m loadtests.distributed $(DIST_CAMPAIGN) --workers $(DIST_WORKERS) \
	  --limits-scale $(DIST_SCALE) $(if $(TENANTS),--tenants $(TENANTS)) --report-dir $(REPORTS)

# Every case of the load smoke, the load_full ones that make test leaves out included (~7 min).
load-smoke: $(STAMP)
	$(BIN)/pytest -q tests/harness/test_load_smoke.py

# Subtle faults through their campaigns, then every campaign clean five times in a row.
load-sensitivity: $(STAMP)
	$(BIN)/python -m loadtests.sensitivity --limits-scale $(LOAD_SCALE) --workers $(WORKERS) \
	  $(if $(LATENCY),--latency $(LATENCY) --jitter $(JITTER)) --report-dir $(REPORTS)

# Wheel + sdist in dist/; the wheel carries spec/ and the suites as package data (setup.py).
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

# The installed form in full (slow, several minutes): a new venv, the wheel with its dependencies
# from the package index, then a run from an empty folder (make test has a fast form: test_wheel).
dist-check: dist
	rm -rf build/dist-check && $(PY) -m venv build/dist-check/venv
	build/dist-check/venv/bin/pip install -q dist/delivery_conformance-*.whl
	mkdir -p build/dist-check/empty && cd build/dist-check/empty && \
		../venv/bin/delivery-conformance run --no-properties --report-dir reports

clean:
	rm -rf $(VENV) $(TOOLS) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
