# Every target does its own set-up: a fresh clone needs only `make demo` or `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install test mutation demo bench fuzz lessons-report corrections-report privacy-report danger-report simulations experiment record-agents clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q

# Mutation testing of commons/core/ and commons/node/ with mutmut (docs/mutation.md); not part of
# `make test`. A reproducible sample of MUTATION_SAMPLE mutants (0: all ~21,000) drawn by
# MUTATION_SEED, run at the lowest priority; the table is printed and .bench/mutation.json written.
MUTATION_SAMPLE ?= 200
MUTATION_SEED ?= 1
mutation: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[mutation]'
	mkdir -p .bench
	nice -n 19 $(BIN)/python -m tests.mutation --sample $(MUTATION_SAMPLE) --seed $(MUTATION_SEED) --out .bench/mutation.json

demo: $(STAMP)
	$(BIN)/commons demo

# Benchmarks are not tests: they measure, print their figures and write them to .bench/ (with a
# record of each run: when, mode, load, processor, commit); docs/benchmarks.md is then made from
# .bench/ alone (tests/benchmarks/table.py). BENCH_QUICK=1: each bench's quick run, which the table
# says; BENCHES="bench_recall bench_sleep": only those (the table keeps the others' last figures).
BENCHES ?=
bench: $(STAMP)
	@status=0; $(BIN)/python -m tests.benchmarks.run $(BENCHES) || status=$$?; \
	$(BIN)/python -m tests.benchmarks.table && exit $$status

# What the lessons say, measured on ../shared/transcripts, tests/fixtures/lessons and the demo
# sessions: informative failure lines, lessons naming what worked, bare echoes, correction precision.
# Do the lessons name what really fixed the failure? Every labelled set beside the repository
# (LESSONS_SETS to choose), replayed and scored by ../shared/lessons-bench/score.py (docs/organism.md).
lessons-report: $(STAMP)
	$(BIN)/python -m commons.ingest.lessons_bench

# Corrections found in context against each labelled set's census of person messages (held-out sets apart).
corrections-report: $(STAMP)
	$(BIN)/python -m commons.ingest.corrections_bench

# Privacy at every door: the corpus planted in transcripts, formats caught per door (lessons, memory
# folder, report, recall, MCP, export) and false positives; the table in docs/privacy.md.
privacy-report: $(STAMP)
	$(BIN)/python -m tests.benchmarks.bench_privacy_doors

# Dangerous fixes at every door: the corpus of tests/fixtures/danger replayed as met in two
# sessions each; shared, published, rendered as advice, refused from peers, safe look-alikes kept
# (the figures in docs/trust.md, "Dangerous steps").
danger-report: $(STAMP)
	$(BIN)/python -m tests.benchmarks.bench_danger

# Fuzzing the decoders of peers' bytes (records, gossip messages, box-stream): 10^6 inputs each by
# default (FUZZ_INPUTS=...), about a minute; prints crashes and invalid-accepted counts, exits 1 on any.
FUZZ_INPUTS ?= 1000000
fuzz: $(STAMP)
	mkdir -p .bench
	$(BIN)/python -m tests.fuzzing --inputs $(FUZZ_INPUTS) --json > .bench/fuzz.json || (cat .bench/fuzz.json; exit 1)
	@$(BIN)/python -c "import json; r=json.load(open('.bench/fuzz.json')); [print(f\"{x['decoder']:16} {x['inputs']} inputs: {x['crash']} crashes, {x['invalid-accepted']} invalid accepted, {x['accepted']} accepted, {x['refused']} refused ({x['seconds']} s)\") for x in r['results']]"

# The N-agent experiment (issues #17, #29; design paper §7.5): scripted agents on real daemons, every
# arm (control, trusted, peer review, placebo, placebo trusted) for each of EXPERIMENT_SEEDS seeds in
# parallel processes; prints one JSON summary (mean and 95% interval per figure, the goals, every
# seed's run) to .bench/experiment.json and regenerates docs/experiment.md from it, with where each
# arm's errors went and the labelled real sets replayed beside it (--history). Each seed's result is
# kept in .bench/experiment-seeds.jsonl as it ends; a run cut short is summarised with
# `python -m simulations.experiment --from-seeds .bench/experiment-seeds.jsonl --history --doc docs/experiment.md`.
# One seed alone, with its tables and plots: python -m simulations.experiment --seed 7 --doc FILE.
# The real history alone: python -m simulations.experiment.history.
EXPERIMENT_SEEDS ?= 1-20
EXPERIMENT_ARGS ?=
experiment: $(STAMP)
	mkdir -p .bench
	rm -f .bench/experiment-seeds.jsonl
	$(BIN)/python -m simulations.experiment --seeds $(EXPERIMENT_SEEDS) --history --keep-seeds .bench/experiment-seeds.jsonl $(EXPERIMENT_ARGS) --json --doc docs/experiment.md > .bench/experiment.json
	@$(BIN)/python -c "import json; r=json.load(open('.bench/experiment.json')); print(json.dumps({'wall_s': r['wall_s'], 'goals': r['goals']}, indent=2))"

# Real sessions of Claude Code, Codex and Gemini CLI (installed from npm into a scratch folder) against
# a fake model on loopback, written to tests/fixtures/agents/<agent>-<version>/ (tests/agents/record.py).
# Not part of `make test`: the tests read the committed fixtures. RECORD_ARGS="codex --version codex=0.172.0".
RECORD_ARGS ?=
record-agents: $(STAMP)
	$(BIN)/python -m tests.agents.record $(RECORD_ARGS)

clean:
	rm -rf $(VENV) .bench .pytest_cache .hypothesis mutants

# Every scenario at 10,000 nodes; figures and plots into docs/ (docs/simulations.md says how).
SIMULATIONS := spread revoke churn partition sybil reconcile
SIM_NODES ?= 10000
# spread and revoke at each size and engine for docs/simulations.md's "Scale" (10^5: the model engine)
SIM_SCALE ?= 1000:real 10000:model 100000:model
simulations: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[plot]'
	mkdir -p .bench/simulations/scale
	@set -e; for s in $(SIMULATIONS); do \
		echo "== $$s"; \
		$(BIN)/python -m simulations $$s --nodes $(SIM_NODES) --seed 1 --json > .bench/simulations/$$s.json; \
	done
	@set -e; for s in spread revoke; do for run in $(SIM_SCALE); do \
		nodes=$${run%%:*}; engine=$${run##*:}; echo "== $$s at $$nodes nodes ($$engine engine)"; \
		nice -n 10 $(BIN)/python -m simulations $$s --nodes $$nodes --engine $$engine --seed 1 --json \
			> .bench/simulations/scale/$$s-$$nodes-$$engine.json; \
	done; done
	$(BIN)/python -m simulations.report .bench/simulations docs
