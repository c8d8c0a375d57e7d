# syncguard: build, annotate, test and benchmark every policy.
# The two commands the README starts with:
#   make examples   build every policy and print what each check decides on the bundled scenarios
#   make test       the whole test suite (what CI runs through .ci/run)

CARGO      ?= cargo
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Size pass over each module (Debian's binaryen); deterministic, keeps every export.
WASM_OPT   := wasm-opt -Oz --enable-bulk-memory --enable-sign-ext --enable-mutable-globals --enable-nontrapping-float-to-int
TARGET     := wasm32-wasip1
WASM_DIR   := target/$(TARGET)/release
SYNCGUARD  := target/host/syncguard
# The benchmark's own binary (bench/runner, built on the command's library, not shipped):
# `make bench`, `make bench-scan`.
BENCH      := target/host/syncguard-bench
# Every policy folder: one per check of src/registry.rs, and the all-in-one (policies/syncguard).
POLICIES   := $(sort $(patsubst policies/%/Cargo.toml,%,$(wildcard policies/*/Cargo.toml)))
# The cargo package of a policy folder ($(1)), from its Cargo.toml.
package_of = $(shell sed -n 's/^name = "\(.*\)"/\1/p' policies/$(1)/Cargo.toml | head -1)
MODULES    := $(foreach p,$(POLICIES),policies/$(p)/policy.wasm)
ANNOTATED  := $(foreach p,$(POLICIES),policies/$(p)/annotated-policy.wasm)
# Policies that ship (have a metadata.yml): what push, artifacthub and manifests cover.
SHIPPED    := $(sort $(patsubst policies/%/metadata.yml,%,$(wildcard policies/*/metadata.yml)))
# make push REGISTRY=host/path [INSECURE_REGISTRY=host:port]
REGISTRY   ?=
INSECURE_REGISTRY ?=
PUSH_FLAGS := $(if $(INSECURE_REGISTRY),--insecure-registry $(INSECURE_REGISTRY))
# The version annotation of a metadata.yml ($(1)), for tags.
version_of = $$(sed -n 's/^[[:space:]]*io\.kubewarden\.policy\.version:[[:space:]]*//p' $(1) | tr -d "\"' ")

ifneq ($(filter push,$(MAKECMDGOALS)),)
ifeq ($(REGISTRY),)
$(error usage: make push REGISTRY=host/path [INSECURE_REGISTRY=host:port])
endif
endif

# The playground: the core checks built with wasm-bindgen for the browser, a static site.
PLAYGROUND_TARGET := wasm32-unknown-unknown
PLAYGROUND_DIR    := target/playground
WASM_BINDGEN_VERSION := $(shell sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' playground/Cargo.toml)

.PHONY: all setup build cli policies annotate examples test unit answers json-schema e2e-tests lint bench bench-scan bench-policy-server fmt clean \
	push artifacthub manifests fuzz playground playground-setup playground-tests

all: build

## setup: install what the build and the tests need, each tool only when its command is missing
## (tools/setup.sh lists them; Node.js and npm are taken from wherever they come when present)
setup:
	@rustup target list --installed 2>/dev/null | grep -qx $(TARGET) || rustup target add $(TARGET)
	@bash tools/setup.sh
	@$(MAKE) --no-print-directory playground-setup

# The wasm target of the playground and the wasm-bindgen CLI of exactly the version its
# wasm-bindgen crate pins (the two must match), each installed only when missing. Without
# --locked when the CLI's own lock file names a crate version the registry no longer serves.
playground-setup:
	@rustup target list --installed 2>/dev/null | grep -qx $(PLAYGROUND_TARGET) || rustup target add $(PLAYGROUND_TARGET)
	@# The editor's packages, exactly as playground/editor/package-lock.json pins them (again
	@# only when the lock file changed); the build itself then needs no network.
	@[ playground/editor/node_modules/.package-lock.json -nt playground/editor/package-lock.json ] || \
	  (cd playground/editor && npm ci --ignore-scripts --no-audit --no-fund)
	@[ "$$(wasm-bindgen --version 2>/dev/null)" = "wasm-bindgen $(WASM_BINDGEN_VERSION)" ] || \
	  $(CARGO) install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --locked || \
	  $(CARGO) install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION)

## cli: the syncguard command (wasmtime host), built for speed
cli:
	$(CARGO) build --locked --profile host -p syncguard-cli

## policies: every policy module (each check's and the all-in-one's), size-tuned, copied to
## policies/<name>/policy.wasm (replaced only when it changed: the command embeds policies/ and
## rebuilds when it changes)
policies: setup
	$(CARGO) build --locked --release --target $(TARGET) $(foreach p,$(POLICIES),-p $(call package_of,$(p))) -p syncguard-noop -p syncguard-read-floor -p syncguard-sdk-floor -p syncguard-lookup-floor
	@mkdir -p target/modules
	@for p in $(POLICIES); do \
	  crate=$$(sed -n 's/^name = "\(.*\)"/\1/p' policies/$$p/Cargo.toml | head -1 | tr - _); \
	  $(WASM_OPT) $(WASM_DIR)/$$crate.wasm -o target/modules/$$p.wasm || exit 1; \
	  cmp -s target/modules/$$p.wasm policies/$$p/policy.wasm || cp target/modules/$$p.wasm policies/$$p/policy.wasm; \
	done
	$(WASM_OPT) $(WASM_DIR)/syncguard_noop.wasm -o bench/noop/policy.wasm
	$(WASM_OPT) $(WASM_DIR)/syncguard_read_floor.wasm -o bench/read-floor/policy.wasm
	$(WASM_OPT) $(WASM_DIR)/syncguard_sdk_floor.wasm -o bench/sdk-floor/policy.wasm
	$(WASM_OPT) $(WASM_DIR)/syncguard_lookup_floor.wasm -o bench/lookup-floor/policy.wasm

## annotate: embed metadata.yml and README.md in each module, as kwctl annotate does
annotate: cli policies
	@mkdir -p target/modules
	@for p in $(POLICIES); do \
	  $(SYNCGUARD) annotate -m policies/$$p/metadata.yml -u policies/$$p/README.md \
	    -o target/modules/$$p.annotated.wasm policies/$$p/policy.wasm || exit 1; \
	  cmp -s target/modules/$$p.annotated.wasm policies/$$p/annotated-policy.wasm || \
	    cp target/modules/$$p.annotated.wasm policies/$$p/annotated-policy.wasm; \
	done

## build: every module and its annotated form, then the command again so that `syncguard scan`
## embeds the annotated modules (cli/build.rs includes policies/*/annotated-policy.wasm)
build: annotate
	$(CARGO) build --locked --profile host -p syncguard-cli

## push: every policy to $(REGISTRY)/<name>:v<version> (the all-in-one is $(REGISTRY)/syncguard)
push: build
	@for p in $(SHIPPED); do \
	  v=$(call version_of,policies/$$p/metadata.yml); \
	  $(SYNCGUARD) push $(PUSH_FLAGS) policies/$$p/annotated-policy.wasm registry://$(REGISTRY)/$$p:v$$v || exit 1; \
	done

## artifacthub: regenerate every artifacthub-pkg.yml from metadata.yml, README.md and questions-ui.yml
artifacthub: cli
	@for p in $(SHIPPED); do \
	  q=policies/$$p/questions-ui.yml; \
	  $(SYNCGUARD) artifacthub --metadata-path policies/$$p/metadata.yml --readme-path policies/$$p/README.md \
	    $$( [ -f $$q ] && echo --questions-path $$q ) --output policies/$$p/artifacthub-pkg.yml || exit 1; \
	done

## manifests: regenerate every policies/<name>/policy.yaml (ClusterAdmissionPolicy, default settings)
manifests: cli
	@for p in $(SHIPPED); do \
	  $(SYNCGUARD) scaffold manifest --metadata-path policies/$$p/metadata.yml --type ClusterAdmissionPolicy \
	    --allow-context-aware --output policies/$$p/policy.yaml || exit 1; \
	done

## examples: the main job: build everything, then evaluate every bundled scenario through the built modules
examples: build playground
	$(CARGO) run --locked --quiet --profile host -p e2e-tests --bin scenarios
	@echo
	@echo "The playground (every check in the browser) is built in $(PLAYGROUND_DIR)/: serve it with any"
	@echo "static file server and open it, e.g. python3 -m http.server -d $(PLAYGROUND_DIR) 8000, then"
	@echo "http://127.0.0.1:8000/ (browsers do not load WebAssembly modules from file:// pages)."

## playground: the static site in target/playground/ (index.html, its script and the .wasm)
playground: playground-setup
	@# As a cdylib alone, so that it is linked with LTO (see the all-in-one's note in Cargo.toml).
	$(CARGO) rustc --locked --profile playground-wasm --target $(PLAYGROUND_TARGET) -p syncguard-playground --crate-type cdylib
	@rm -rf $(PLAYGROUND_DIR) && mkdir -p $(PLAYGROUND_DIR)
	wasm-bindgen --target web --no-typescript --out-dir $(PLAYGROUND_DIR) \
	  target/$(PLAYGROUND_TARGET)/playground-wasm/syncguard_playground.wasm
	@# No wasm-opt pass here: Debian's binaryen (108) turns wasm-bindgen's externref table into a
	@# funcref table, and the module then fails to start in the browser.
	@# The module is loaded by a worker (worker.js), where import maps do not apply: its imports
	@# of the waPC host functions name wapc.js itself.
	sed -i 's|from "wapc"|from "./wapc.js"|' $(PLAYGROUND_DIR)/syncguard_playground.js
	cp playground/www/index.html playground/www/playground.js playground/www/worker.js playground/www/playground.css \
	  playground/www/wapc.js $(PLAYGROUND_DIR)/
	@# The editor (CodeMirror 6), bundled by esbuild from the pinned packages.
	cd playground/editor && node_modules/.bin/esbuild editor.js --bundle --format=esm --minify \
	  --legal-comments=external --log-level=warning --outfile=../../$(PLAYGROUND_DIR)/editor.js

## playground-tests: the playground's verdicts against `syncguard scan`'s on every fixture, and
## the built page in headless chromium over WebDriver
playground-tests: build playground
	$(CARGO) test --locked --profile host -p syncguard-playground

## unit: the native tests of the core (every check and its fixtures), of the shared scan crate and
## of the test kit
unit:
	$(CARGO) test --locked -p syncguard -p syncguard-scan -p syncguard-testkit

## answers: record every fixture's exact answer again (policies/*/test_data/answers.snap, which
## `make unit` compares byte for byte), after a change meant to alter answers; review the diff
answers:
	INSTA_UPDATE=always INSTA_FORCE_PASS=1 $(CARGO) test --locked -p syncguard --test fixtures

## e2e-tests: the built modules through the engine (syncguard run, or kwctl when KWCTL is set),
## the command's own tests and the benchmark's (its generated trees scan clean)
e2e-tests: build
	$(CARGO) test --locked --profile host -p e2e-tests -p syncguard-cli -p syncguard-bench

## json-schema: write docs/scan-output.schema.json again from the types `syncguard scan --format
## json` serialises (a test of `make e2e-tests` compares the two); review the diff
json-schema: build
	SYNCGUARD_WRITE_SCHEMA=1 $(CARGO) test --locked --profile host -p syncguard-cli --test scan json_output_follows_its_documented_schema

## lint: formatting and clippy (the fuzz targets' too), warnings are errors
lint:
	$(CARGO) fmt --all --check
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml --check
	$(CARGO) clippy --locked --workspace --all-targets -- -D warnings
	@# The fuzz targets are their own workspace: checked here so they never rot between fuzz runs.
	$(CARGO) clippy --locked --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings
	$(CARGO) clippy --locked --release --target $(TARGET) -p syncguard -p syncguard-all-in-one -- -D warnings

## bench-scan: `syncguard scan` throughput over a generated tree of 10,000 manifests
## (target/bench-tree), one JSON line on stdout: files, documents, evaluations, jobs, seconds,
## documentsPerSecond
bench-scan: build
	$(CARGO) build --locked --profile host -p syncguard-bench
	$(BENCH) scan

## bench-policy-server: every policy module and the no-op, read and SDK floors in a real
## policy-server (the binary in POLICY_SERVER; skipped, not failed, when unset), each on the
## payloads its rules match (a Deployment, Kube-OVN's and the Prometheus operator's CRDs, that
## CRD's UPDATE, a Helm hook Job, a ConfigMap with owner markers, an audited Prometheus custom resource),
## lookups answered by a stand-in API server on 127.0.0.1: p50 and p90 per request from 4
## concurrent clients against the no-op module, then the instructions the server executes per
## request, counted under Debian's valgrind (installed when missing), each against its goal
## (`BENCH_ARGS="--only syncguard --payloads deployment --rounds 0"` counts a few cases)
bench-policy-server: build
	@command -v valgrind >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q valgrind || \
	  { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q valgrind; }
	$(CARGO) build --locked --profile host -p syncguard-bench
	$(BENCH) policy-server $(BENCH_ARGS)

## test: everything CI checks
test: build lint unit e2e-tests playground-tests

fmt:
	$(CARGO) fmt --all
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml

clean:
	$(CARGO) clean
	rm -f $(MODULES) $(ANNOTATED) bench/noop/policy.wasm bench/read-floor/policy.wasm bench/sdk-floor/policy.wasm bench/lookup-floor/policy.wasm

## bench: one run, one table (and target/bench.json): sizes, cold start, warm validate beside
## the floors and beside the single-check modules of d811579 (built once into
## target/bench-d811579 with the same wasm-opt pass), scan throughput, the 5,000-CRD lookup,
## sync-drift on a custom resource of the Prometheus CRD (fetched through the host), and the goals
bench: build
	$(CARGO) build --locked --profile host -p syncguard-bench
	$(BENCH) --wasm-opt "$(WASM_OPT)"

## fuzz: every check of the registry and the all-in-one, each for FUZZ_SECONDS, through the one
## cargo-fuzz target (fuzz/fuzz_targets/policy.rs, SYNCGUARD_FUZZ_TARGET picks the check), each with
## its own corpus seeded from the fixtures. Inputs that break an invariant are copied to
## fuzz/regressions/<target>/ (replayed by the tests) and the run fails. Installs cargo-fuzz when
## missing; runs on a stable toolchain without a sanitizer (RUSTC_BOOTSTRAP allows the coverage
## flags libFuzzer needs).
## make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="crd-schema-fields ..."] [FUZZ_MAX_LEN=65536]
FUZZ_SECONDS ?= 60
FUZZ_MAX_LEN ?= 65536
FUZZ_TARGETS ?=
fuzz:
	@command -v cargo-fuzz >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked
	rm -rf target/fuzz/seeds
	$(CARGO) run --locked --quiet --profile host -p e2e-tests --bin fuzz-seeds -- target/fuzz/seeds $(FUZZ_MAX_LEN)
	@failed=; for t in $${FUZZ_TARGETS:-$$(ls target/fuzz/seeds)}; do \
	  mkdir -p fuzz/corpus/$$t fuzz/artifacts/$$t; rm -f fuzz/artifacts/$$t/*; \
	  echo "== fuzz $$t for $(FUZZ_SECONDS)s"; \
	  SYNCGUARD_FUZZ_TARGET=$$t RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run --sanitizer none policy \
	    $(CURDIR)/fuzz/corpus/$$t $(CURDIR)/target/fuzz/seeds/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAX_LEN) -timeout=10 -rss_limit_mb=4096 \
	    -artifact_prefix=$(CURDIR)/fuzz/artifacts/$$t/ || failed="$$failed $$t"; \
	  for f in fuzz/artifacts/$$t/crash-* fuzz/artifacts/$$t/timeout-* fuzz/artifacts/$$t/oom-*; do \
	    [ -f "$$f" ] || continue; mkdir -p fuzz/regressions/$$t; cp "$$f" fuzz/regressions/$$t/; \
	    echo "   kept $$f as fuzz/regressions/$$t/$$(basename $$f)"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: invariants broken in:$$failed (inputs under fuzz/regressions/)"; exit 1; fi

## well-known: rebuilds crd-kind-collision's table of well-known API groups from local clones of its
## sources (names only, each source's commit recorded) and its copy of the Public Suffix List:
## make well-known SOURCES=<dir holding <owner>+<repo> clones, see refresh-well-known.py>
.PHONY: well-known
well-known:
	@test -n "$(SOURCES)" || { echo "usage: make well-known SOURCES=<dir of clones, see tools/refresh-well-known.py>" >&2; exit 2; }
	@mkdir -p target
	python3 tools/refresh-well-known.py "$(SOURCES)" --psl target/public_suffix_list.txt > target/well_known_groups.tsv
	mv target/well_known_groups.tsv src/checks/crd_kind_collision/well_known_groups.tsv
	mv target/public_suffix_list.txt src/checks/crd_kind_collision/public_suffix_list.txt

## builtin-schemas: rebuilds object-validation's table of the built-in kinds' schemas (Kubernetes'
## OpenAPI v3 documents of every minor from 1.24, as kubernetes-sigs/kubectl-validate vendors them,
## with its corrections; its commit recorded) from a git clone or bare mirror of that repository:
## make builtin-schemas KUBECTL_VALIDATE=<dir> [KUBECTL_VALIDATE_REV=<commit>]
.PHONY: builtin-schemas
builtin-schemas:
	@test -n "$(KUBECTL_VALIDATE)" || { echo "usage: make builtin-schemas KUBECTL_VALIDATE=<kubernetes-sigs/kubectl-validate git dir> [KUBECTL_VALIDATE_REV=<commit>]" >&2; exit 2; }
	@mkdir -p target
	python3 tools/derive-builtin-schemas.py "$(KUBECTL_VALIDATE)" --rev "$(or $(KUBECTL_VALIDATE_REV),HEAD)" > target/builtin_schemas.tsv
	mv target/builtin_schemas.tsv src/checks/object_validation/builtin_schemas.tsv

## api-fields: rebuilds sync-drift's tables of how the API server writes each field of the built-in
## kinds back (omitempty, omitzero, form, leaf, keeps-null; every source's commit recorded) from
## git clones or bare mirrors of k8s.io/api, k8s.io/apimachinery, k8s.io/apiextensions-apiserver
## and, for APIService, k8s.io/kube-aggregator (left out without AGGREGATOR):
## make api-fields API=<dir> APIMACHINERY=<dir> APIEXTENSIONS=<dir> [AGGREGATOR=<dir>]
.PHONY: api-fields
api-fields:
	@test -n "$(API)" -a -n "$(APIMACHINERY)" -a -n "$(APIEXTENSIONS)" || { echo "usage: make api-fields API=<k8s.io/api git dir> APIMACHINERY=<dir> APIEXTENSIONS=<dir> [AGGREGATOR=<dir>]" >&2; exit 2; }
	@mkdir -p target
	python3 tools/derive-api-fields.py "$(API)" "$(APIMACHINERY)" "$(APIEXTENSIONS)" \
	  $(if $(AGGREGATOR),--aggregator "$(AGGREGATOR)") --fields target/api_fields.tsv --kinds target/api_kinds.tsv \
	  --statuses target/api_status.tsv
	mv target/api_fields.tsv src/checks/sync_drift/api_fields.tsv
	mv target/api_kinds.tsv src/checks/sync_drift/api_kinds.tsv
	mv target/api_status.tsv src/checks/sync_drift/api_status.tsv
