# `make run` starts one broker on 127.0.0.1:9092 (`pykbroker --dev`); `make test` runs the whole suite.
# Both set up everything they need on a fresh machine (.venv, Python packages, system packages).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.test-installed

BENCH_STAMP := $(VENV)/.bench-installed

COMPAT_STAMP := $(VENV)/.compat-installed

LINT_STAMP := $(VENV)/.lint-installed

FUZZ_MINUTES ?= 10

MINUTES ?= 60

.PHONY: run test fuzz lint protocol-types compat system-deps bench bench-quick bench-scale bench-scale-quick soak codec-bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	$(PY) -m compileall -q pykbroker  # a first start reads bytecode: compiling on start costs memory and time
	touch $@

$(TEST_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install -q -e '.[test,spark]'
	touch $@

run: $(STAMP)
	$(VENV)/bin/pykbroker --dev

$(COMPAT_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install -q -e '.[compat]'
	touch $@

# The compatibility suite: every client x scenario against a pykbroker it starts.
compat: $(COMPAT_STAMP) system-deps
	$(PY) -m compat

# Debian packages the tests use: kcat (a librdkafka client) and ZooKeeper (cluster mode).
system-deps:
	@bash .ci/install-system-deps

test: $(TEST_STAMP) system-deps
	$(PY) -m pytest -q -n 2 --dist loadscope

# The request fuzzer of tests/fuzz for FUZZ_MINUTES minutes (the suite runs it for about one);
# FUZZ_SEED picks other requests. `make fuzz FUZZ_MINUTES=30`
fuzz: $(TEST_STAMP)
	FUZZ_MINUTES=$(FUZZ_MINUTES) $(PY) -m pytest -q --timeout=0 tests/fuzz/test_fuzz_requests.py

$(LINT_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install -q -e '.[lint]'
	touch $@

# The lint gate over pykbroker/: ruff's lint rules and format check, mypy (the venv's, so that it
# sees anyio's types; [tool.mypy] in pyproject.toml names the files), the message declarations
# being up to date with the schemas, and the layering rules.
lint: $(LINT_STAMP)
	$(VENV)/bin/ruff check pykbroker
	$(VENV)/bin/ruff format --check pykbroker
	$(VENV)/bin/mypy
	$(PY) -m pykbroker.protocol.stubs --check
	$(PY) -m pytest -q tests/test_layering.py

# The static declarations of the message classes (pykbroker/protocol/message_types.pyi), written
# from the schemas in protocol/messages/: run after changing them, and commit the result.
protocol-types: $(STAMP)
	$(PY) -m pykbroker.protocol.stubs

codec-bench: $(STAMP)
	$(PY) bench/codec_bench.py

$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install -q -e '.[bench]'
	touch $@

# Throughput, startup and memory beside Kafka 3.9.0 and tansu, plus the codec figures: bench/results/latest.md
bench: $(BENCH_STAMP)
	$(PY) -m bench

bench-quick: $(BENCH_STAMP)
	$(PY) -m bench --quick

# Thousands of partitions beside Kafka 3.9.0 (../shared/realkafka): docs/benchmarks.md, "Scale"
bench-scale: $(BENCH_STAMP)
	$(PY) -m bench scale

bench-scale-quick: $(BENCH_STAMP)
	$(PY) -m bench scale --quick

# MINUTES of steady load on one broker and a three-broker cluster at once, memory, descriptors,
# threads and latency sampled: bench/results/soak-<date>.md and its plots (docs/operations.md, "Soak")
soak: $(BENCH_STAMP) system-deps
	$(PY) -m bench.soak --minutes $(MINUTES)

clean:
	rm -rf $(VENV) build *.egg-info data
