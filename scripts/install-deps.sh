#!/usr/bin/env bash
# Installs the Debian 12 (bookworm) packages Lens needs to build, test and run.
# Idempotent: when everything is installed it only asks dpkg and exits (well under a second);
# otherwise it runs one `apt-get update` and one `apt-get install` of the missing packages.
# Uses sudo only when not root. Nothing else is downloaded, here or at build/run time.
# `--build`: only what building the library and the daemons needs (deploy/Dockerfile).
# `--image`: everything, and what `make image` needs (the image's base, layers and smoke run).
#
# To add a dependency, add its package to BUILD_PACKAGES or TEST_PACKAGES (one per line, with
# what needs it).
set -euo pipefail

BUILD_PACKAGES=(
  # toolchain
  build-essential
  cmake
  ninja-build
  pkg-config
  git
  clang                 # libFuzzer targets and the sanitizer build (make test)
  libclang-rt-14-dev    # clang's sanitizer and libFuzzer runtimes (only Recommended by clang)
  lld                   # the sanitizer build's linker (several times faster than ld.bfd)
  llvm                  # llvm-symbolizer: readable sanitizer stack traces
  # libraries
  libyaml-cpp-dev
  rapidjson-dev
  libcli11-dev
  libsqlite3-dev        # the embedded store
  libpqxx-dev           # the PostgreSQL store (libpqxx 6.4 + libpq)
  libcpp-httplib-dev    # HTTP servers (cpp-httplib 0.11, with OpenSSL for TLS)
  libcurl4-openssl-dev  # HTTP clients (kubelet, Kubernetes API)
  libgrpc++-dev         # gRPC 1.51: containerd, kubelet pod-resources, the node event stream
  libprotobuf-dev
  protobuf-compiler
  protobuf-compiler-grpc
  golang-github-containerd-containerd-dev  # containerd's API .proto files (build time only)
  libbpf-dev            # loading the eBPF TCP flow probe (libbpf 1.1)
  libsnappy-dev         # Prometheus remote write (snappy block format)
  libjs-chart.js        # Chart.js 3.9 for the dashboard, embedded in lens at build time (web/)
  bpftool               # vmlinux.h and the BPF skeleton (build time only)
)

TEST_PACKAGES=(
  # tests and benchmarks
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  postgresql            # a real PostgreSQL 15 server for the store tests (started by the tests)
  sqlite3               # the sqlite3 shell, to inspect a Lens database by hand
  openssl               # test certificates for the TLS tests
  prometheus            # a real Prometheus scraping lens-node-agent in the end-to-end test
  victoria-metrics      # VictoriaMetrics and vmagent: lens-telemetry's forward target and peer (tests, bench)
  containerd            # a private containerd + runc for the container tracking tests
  runc
  busybox-static        # the test image's only binary (built into an OCI layout tar)
  docker.io             # a private dockerd for the Docker container source tests
  prometheus-node-exporter  # the side-by-side cost comparison in bench/node_agent_bench
  iperf3                # loopback throughput with and without the flow probe (bench/flow_probe_bench)
  chromium              # headless browser loading every dashboard page (test/web/dashboard_test)
  # Python bindings and their tests
  pybind11-dev
  python3-dev
  python3-pytest
  python3-pandas        # examples/python/goodput_report.py, run by the install test
  abigail-tools         # abidiff: the installed liblens.so against its committed ABI baseline
  curl                  # the install test posts recorded requests to the scheduler extender
)

IMAGE_PACKAGES=(
  # make image: the runtime image without a registry (scripts/build-image.sh)
  mmdebstrap            # the base root file system from Debian's packages
  buildah               # layers and the OCI archive
  podman                # starts each daemon from the image
  runc                  # podman's runtime here (crun refuses a cgroup v1/v2 hybrid host)
  curl                  # the smoke run's /healthz
)

PACKAGES=("${BUILD_PACKAGES[@]}")
[ "${1:-}" != "--image" ] || PACKAGES+=("${IMAGE_PACKAGES[@]}")
if [ "${1:-}" != "--build" ]; then
  PACKAGES+=("${TEST_PACKAGES[@]}")
  # `kubectl kustomize` renders deploy/ in the manifest tests. Any kubectl will do (one from
  # Kubernetes' own packages may be installed already, and conflicts with Debian's).
  command -v kubectl >/dev/null 2>&1 || PACKAGES+=(kubernetes-client)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: not root and sudo is missing; install as root: ${missing[*]}" >&2
    exit 1
  fi
  sudo=(sudo)
fi
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
