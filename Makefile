# inferstack — one entry point for set-up, synth, tests and the benchmark. Every target installs what is missing.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
CHECKOV_VENV := .venv-checkov
CONFIG ?= inferstack.yaml
#: pytest-xdist for `make test` and `make bench`: two workers (the machine's two cores), each test file on one worker so
#: its module fixtures (synthesized apps, the checkov scans) are built once. PYTEST_WORKERS= runs serially.
PYTEST_WORKERS ?= -n 2 --dist loadfile

# Hermetic CDK/jsii: no telemetry, no version checks, no IMDS probing, no Node EOL banner.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export CDK_DISABLE_CLI_TELEMETRY := true
export CDK_DISABLE_VERSION_CHECK := 1
export AWS_EC2_METADATA_DISABLED := true

.PHONY: install synth test lint format bench docs schema crds flags images upstream lock clean

install: $(VENV)/.installed node_modules/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "==> [set-up 1/2] Python packages into $(VENV) (first run: about 1 min; 0.9 GB, aws-cdk-lib is most of it)"
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $@

# checkov (the second scanner of the test suite) in its own venv: it downgrades boto3/botocore beside ours.
$(CHECKOV_VENV)/.installed: requirements-checkov.txt
	@test -x $(CHECKOV_VENV)/bin/python || $(PYTHON) -m venv $(CHECKOV_VENV)
	@echo "==> [test set-up] checkov into $(CHECKOV_VENV) (first run: about 1 min)"
	$(CHECKOV_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-checkov.txt
	@touch $@

node_modules/.installed: package.json package-lock.json
	@echo "==> [set-up 2/2] the CDK CLI (npm ci, about 15 s)"
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

## synth: synthesize the platform of $(CONFIG) into cdk.out and print a summary
synth: install
	@echo "==> cdk synth of $(CONFIG) (the rules, then the stacks and cdk-nag; about 15 s, the first run after set-up longer)"
	npx cdk synth --quiet -c config=$(CONFIG)
	$(PY) -m inferstack.cli summary cdk.out

## test: ruff, then the whole test suite (quality gates included, checkov too)
test: install $(CHECKOV_VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@echo "==> pytest on both cores (pytest-xdist, a test file per worker: about 4 min), and beside it the wheel in a"
	@echo "    fresh venv with its dependencies from the index (scripts/check_wheel.py, about 35 s; its report follows)"
	@log=$$(mktemp); $(PY) scripts/check_wheel.py > "$$log" 2>&1 & wheel=$$!; \
	  $(PY) -m pytest $(PYTEST_WORKERS); tests=$$?; wait $$wheel; packaged=$$?; cat "$$log"; rm -f "$$log"; \
	  test $$tests -eq 0 -a $$packaged -eq 0

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

## bench: cold `cdk synth` of the default app vs a bare EKS app, alternating (medians, ratios), then the test
## suite's wall time (both budgets); SUITE=0 skips the suite
bench: install
	$(PY) bench/synth_bench.py --runs $${RUNS:-5} $$( [ "$${SUITE:-1}" = 0 ] && echo --no-suite ) \
	  --pytest-args="$(PYTEST_WORKERS)"

## docs: build the docs site from the docstrings into docs/_build (the API reference, one page per workload kind:
## its fields, defaults and rules); the test suite builds it too (tests/test_docs.py)
docs: install
	$(PY) scripts/build_docs.py docs/_build

## schema: regenerate inferstack.schema.json (JSON Schema of the config, for editors)
schema: install
	$(PY) -m inferstack.cli schema > inferstack.schema.json

## crds: recompile the vendored CRD schemas from ../shared/crds
crds: install
	$(PY) scripts/compile_crds.py

## flags: regenerate the vendored vLLM serve flag lists from ../shared/upstream/engines
flags: install
	$(PY) scripts/vendor_engine_flags.py
	$(PY) scripts/vendor_ray_fields.py

## images: re-lock the model-sync image (inferstack/images/model-sync) from the catalog's base image and packages
images: install
	$(PY) scripts/lock_model_sync_image.py

## upstream: copy the upstream references the conformance tests use (../shared/upstream → tests/upstream)
upstream: install
	$(PY) scripts/vendor_upstream.py

## lock: re-freeze requirements.txt from the current venv (after a deliberate upgrade)
lock:
	{ echo "# Exact pins of every Python package (direct and transitive) the app, tests and tooling use."; \
	  echo "# Regenerate after a deliberate upgrade: make lock"; \
	  $(VENV)/bin/pip freeze --all | grep -v -E "^(pip|wheel)=="; } > requirements.txt

clean:
	rm -rf cdk.out bench/out docs/_build .pytest_cache .ruff_cache
