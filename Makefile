# Lens: entry points for people and CI. The two that matter (README.md):
#   make run    installs what is missing, builds, and runs Lens
#   make test   installs what is missing, builds, and runs every test (C++, Python,
#               PostgreSQL, sanitizers incl. TSan on the store's concurrency suite,
#               fuzzing); fails if anything fails
# Other targets: build, bench, image, install PREFIX=..., clean. CMake does the real work; this file only
# sequences it. Variables: BUILD, ASAN_BUILD, TSAN_BUILD, JOBS, FUZZ_SECONDS, TEST_DISK_GIB, PREFIX,
# CMAKE_ARGS, IMAGE_BUILD, IMAGE_TAG.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
# Stages run one after another; ninja and ctest parallelise inside them.
.NOTPARALLEL:
.DEFAULT_GOAL := build

BUILD        ?= build
ASAN_BUILD   ?= build-asan
TSAN_BUILD   ?= build-tsan
IMAGE_BUILD  ?= build-image
IMAGE_TAG    ?= ghcr.io/lens-observability/lens:0.1.0
JOBS         ?= 2
FUZZ_SECONDS ?= 12
# What a clean `make test` writes (the ASan and TSan build trees), in GiB: checked before it starts.
TEST_DISK_GIB ?= 6
PREFIX       ?= /usr/local
CMAKE_ARGS   ?=

LENS  := $(BUILD)/daemons/lens/lens
TIMES := $(BUILD)/stage-times.txt

# Recipe helpers: `$(START); <commands>; $(call DONE,<stage>)` prints the stage's wall time and
# records it in $(TIMES) for the summary at the end of `make test`.
START = mkdir -p $(BUILD); start=$$(date +%s)
DONE  = printf '== %-26s %5ss\n' '$(1)' $$(( $$(date +%s) - start )) | tee -a $(TIMES)

.PHONY: run test build bench image install clean deps configure test-release test-asan test-tsan fuzz

deps:
	@$(START); scripts/install-deps.sh; $(call DONE,deps)

# The main build: Release, everything that `make test` checks.
configure: deps
	@$(START); cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DLENS_BUILD_TESTS=ON -DLENS_BUILD_BENCHMARKS=ON -DLENS_BUILD_BINDINGS=ON \
	  -DLENS_BUILD_DAEMONS=ON $(CMAKE_ARGS) >$(BUILD)/configure.log \
	  || { cat $(BUILD)/configure.log; exit 1; }; $(call DONE,configure)

build: configure
	@$(START); cmake --build $(BUILD) -j $(JOBS); $(call DONE,build)

# `lens up`: the whole of Lens on this machine in the foreground (node agent, flows, containers,
# jobs, telemetry, and the dashboard with the REST API at http://127.0.0.1:8080/). Ctrl-C stops
# it; the next start continues the same store. UP_ARGS adds flags (e.g. UP_ARGS="--logs f.log").
UP_ARGS ?=
run: configure
	@$(START); cmake --build $(BUILD) -j $(JOBS) --target lens_cli; $(call DONE,build lens)
	$(LENS) up $(UP_ARGS)

# `make test` builds one instrumented configuration with everything (clang, AddressSanitizer +
# UndefinedBehaviorSanitizer: liblens, daemons, tests, the Python module, benchmarks, fuzzers) and
# runs every suite in it once, at full size; then the concurrent suites in a small ThreadSanitizer
# build, then the fuzzers. No test runs twice.
test:
	@mkdir -p $(ASAN_BUILD); rm -f $(TIMES); start_all=$$(date +%s); \
	scripts/disk-check.sh $(ASAN_BUILD) $(TEST_DISK_GIB) || true; \
	status=passed; \
	$(MAKE) --no-print-directory test-asan test-tsan fuzz || status=FAILED; \
	[ $$status = passed ] || scripts/disk-check.sh $(ASAN_BUILD) $(TEST_DISK_GIB) || true; \
	echo; scripts/test-report.sh $(ASAN_BUILD) 10 || true; \
	echo; echo "make test: $$status; stage times:"; cat $(TIMES); \
	printf '== %-26s %5ss\n' total $$(( $$(date +%s) - start_all )); \
	[ $$status = passed ]

# The Release configuration's own suites (what `make build` built), for a quick local check.
test-release:
	@$(START); ctest --test-dir $(BUILD) --output-on-failure --no-tests=error -j $(JOBS); \
	$(call DONE,ctest (release))

# ASan keeps freed memory in a quarantine (256 MiB by default) to catch use after free: a process
# that allocates and frees a lot grows by that much, which the attack suite's memory bounds would
# take for a leak. 4 MiB (64 KiB per thread) still catches a use soon after a free.
ASAN_TEST_OPTIONS ?= quarantine_size_mb=4:thread_local_quarantine_size_kb=64
# Everything under AddressSanitizer + UndefinedBehaviorSanitizer: GoogleTest suites, the Python
# suite (the module loads the sanitizer runtime through LD_PRELOAD), the install test, the
# libFuzzer targets' regression runs. Test code compiles at -O0 with one precompiled header,
# liblens's areas in unity batches.
test-asan: deps
	@$(START); mkdir -p $(ASAN_BUILD); cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DLENS_SANITIZE=address,undefined -DLENS_BUILD_FUZZERS=ON -DLENS_UNITY_BUILD=ON \
	  -DLENS_BUILD_TESTS=ON -DLENS_BUILD_BINDINGS=ON -DLENS_BUILD_BENCHMARKS=ON \
	  $(CMAKE_ARGS) >$(ASAN_BUILD)/configure.log \
	  || { cat $(ASAN_BUILD)/configure.log; exit 1; }; $(call DONE,configure (asan))
	@$(START); cmake --build $(ASAN_BUILD) -j $(JOBS); $(call DONE,build (asan))
	@$(START); rm -rf $(ASAN_BUILD)/test-results; \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/cmake/lsan-suppressions.txt \
	  ASAN_OPTIONS=$(ASAN_TEST_OPTIONS) ctest --test-dir $(ASAN_BUILD) --output-on-failure --no-tests=error -j $(JOBS) \
	    --output-junit ctest-junit.xml; \
	$(call DONE,ctest (asan))

# ThreadSanitizer on the concurrent suites only (concurrent store writers and readers, on SQLite and
# on PostgreSQL; the node agent's loop against concurrent readers; the flow monitor's drain thread
# against readers and the flow probe's event reader; the HTTP server's loop and workers under the
# attack suite; informers, leader electors and the controller's writer against their handlers and
# readers; the jobs' scheduler threads and parallel agent reads; the telemetry disk queue's
# appenders against its consumer, the forwarder's sender, the logs path's concurrent ingest and the
# local scrape's thread against the processor; lens-tuner's checks against /metrics and
# lens-multicluster's parallel member reads against its publisher and /metrics; the NVML replay's calls
# against a machine swapped under them; lens-api's insight
# metrics thread against its scrapes; the container tracker's Docker event stream against
# cross-thread cancellation), JOBS at a time. The container
# event stream's suites are not here: their gRPC server and client hand memory over inside Debian's
# uninstrumented libgrpc, which TSan reports as races in grpcpp's inline code. Longest first:
# building the rest under TSan would double the build time and test nothing new.
TSAN_TESTS := cluster_controller_test multicluster_service_test http_server_limits_test \
              flow_probe_test telemetry_queue_test kube_informer_test kube_leader_test \
              containers_docker_tracker_test telemetry_logs_test store_concurrency_test \
              tuner_service_test agent_node_agent_test jobs_scheduler_test telemetry_store_test \
              flow_monitor_test jobs_agents_test api_service_test nvml_replay_test \
              http_client_test
test-tsan: deps
	@$(START); mkdir -p $(TSAN_BUILD); cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DLENS_SANITIZE=thread -DLENS_UNITY_BUILD=ON \
	  -DLENS_BUILD_TESTS=ON -DLENS_BUILD_BINDINGS=OFF -DLENS_BUILD_BENCHMARKS=OFF -DLENS_BUILD_DAEMONS=OFF \
	  $(CMAKE_ARGS) >$(TSAN_BUILD)/configure.log \
	  || { cat $(TSAN_BUILD)/configure.log; exit 1; }; $(call DONE,configure (tsan))
	@$(START); cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TESTS); $(call DONE,build (tsan))
	@$(START); scripts/tsan-tests.sh $(TSAN_BUILD) $(JOBS) $(TSAN_TESTS); $(call DONE,tests (tsan))

fuzz:
	@$(START); scripts/fuzz.sh $(ASAN_BUILD) $(FUZZ_SECONDS) $(JOBS); $(call DONE,fuzz ($(FUZZ_SECONDS)s per target))

bench: build
	@shopt -s nullglob; benches=($(BUILD)/bench/*_bench); \
	if [ $${#benches[@]} -eq 0 ]; then echo "no benchmarks in $(BUILD)/bench" >&2; exit 1; fi; \
	for b in "$${benches[@]}"; do echo "### $$b"; "$$b" --benchmark_min_time=0.2; done

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# `make image`: the runtime image of deploy/Dockerfile as an OCI archive, $(IMAGE_BUILD)/lens-image.tar,
# without a registry (docs/deploy.md): the Release daemons (the Dockerfile's flags) installed into a
# stage, a Debian base made by mmdebstrap, layers by buildah; then every daemon started from the image
# under podman + runc (--version, /healthz), and Image.RuntimePackagesAreExactlyWhatTheDaemonsLink
# against the same Release binaries. As root. Not part of `make test` (the Release build alone is
# several minutes on 2 cores).
IMAGE_TARGETS := lens lens_proto lens_cli lens_platform lens_node_agent lens_netflow lens_jobs \
                 lens_controller_daemon lens_telemetry_daemon lens_api_daemon lens_tuner_daemon \
                 lens_multicluster_daemon manifests_test
image:
	@$(START); scripts/install-deps.sh --image; $(call DONE,deps (image))
	@$(START); mkdir -p $(IMAGE_BUILD); cmake -S . -B $(IMAGE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_INSTALL_PREFIX=/usr -DLENS_BUILD_TESTS=ON -DLENS_BUILD_BENCHMARKS=OFF \
	  -DLENS_BUILD_BINDINGS=OFF -DLENS_BUILD_DAEMONS=ON -DLENS_BUILD_BPF=ON -DLENS_UNITY_BUILD=ON $(CMAKE_ARGS) \
	  >$(IMAGE_BUILD)/configure.log || { cat $(IMAGE_BUILD)/configure.log; exit 1; }; \
	  cmake --build $(IMAGE_BUILD) -j $(JOBS) --target $(IMAGE_TARGETS); $(call DONE,build (release daemons))
	@$(START); rm -rf $(IMAGE_BUILD)/stage; \
	  DESTDIR=$(CURDIR)/$(IMAGE_BUILD)/stage cmake --install $(IMAGE_BUILD) --strip --component runtime >/dev/null; \
	  SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || date +%s) \
	  scripts/build-image.sh $(IMAGE_BUILD)/stage $(IMAGE_BUILD)/lens-image.tar $(IMAGE_TAG); \
	  $(call DONE,image + smoke)
	@$(START); GTEST_FILTER='Image.*' ctest --test-dir $(IMAGE_BUILD) --output-on-failure \
	  --no-tests=error -R '^manifests_test$$'; $(call DONE,image test)
	@ls -l $(IMAGE_BUILD)/lens-image.tar

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(IMAGE_BUILD)
