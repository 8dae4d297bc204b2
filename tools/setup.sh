#!/usr/bin/env bash
# Installs what PLIR needs on Debian 12 (idempotent), then runs the main job:
# a real model end to end (tools/main_job.sh): mobilenet_v2 exported from
# PyTorch with seeded random weights, imported from ONNX, optimized with
# O2 + FuseOps, run with plir-run and compared with PyTorch, its weights
# lifted into a float16 transform run eagerly and lazily (peak RSS of each,
# outputs byte-identical), and @main run on the float16 weights. Prints a
# table of times, peak RSS and errors against PyTorch.
#
#   tools/setup.sh            install, build, and run the main job
#   tools/setup.sh --no-run   install only
#   SETUP_MODEL=resnet50 tools/setup.sh   another model (resnet50, vit_b_16, bert)
set -euo pipefail
cd "$(dirname "$0")/.."

# What the main job's tools need to compile (tools/main_job.sh --build).
build_packages=(
  bazel-bootstrap    # Bazel 4.2.3, offline-capable
  g++
  libyaml-cpp-dev    # YAML pipelines
  libcli11-dev       # command-line parsing
  libsimdjson-dev    # JSON loading
  libssl-dev         # SHA-256 of plugin files (libcrypto)
  libre2-dev         # regular expressions of pipeline steps (functions: REGEX)
  libseccomp-dev     # the plugin child's seccomp filter (driver/sandbox.cc)
  libonnx-dev        # frontends/onnx: ONNX protobuf, checker, version converter
  libprotobuf-dev    # frontends/onnx (libonnx-dev does not pull it in)
  libopenblas-dev    # kernels/: cblas sgemm/dgemm behind conv and matmul (pthreads build)
)
# The rest: the main job's run and the tests.
packages=(
  libgtest-dev       # tests
  libbenchmark-dev   # bench/
  libonnx-testdata   # frontends/onnx:node_tests (ONNX's backend node tests)
  clang-format       # tools/check_format.sh (CI checks formatting)
  python3-torch        # models/: tools/export_models.py builds and runs the models (PyTorch 1.13)
  python3-torchvision  # models/: resnet50, mobilenet_v2, vit_b_16 (weights=None, no download)
  python3-onnx         # models/: torch.onnx.export writes the ONNX models with it
  time                 # tools/main_job.sh, bench/: peak RSS from /usr/bin/time
  nginx-core           # tools/remote_cache/: a Bazel HTTP remote cache (http_dav_module) for tools/zoo_checks.sh
  curl                 # tools/remote_cache/nginx_cache.sh: waits for nginx to answer
  # python/: the plir package (issue 23), built with Debian's pybind11 and
  # Python headers, tested with pytest; numpy arrays in and out.
  python3-dev
  python3-pybind11
  python3-pytest
  python3-numpy
)

# missing NAME...: the packages of NAME... not installed yet.
missing() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      echo "$p"
    fi
  done
}
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
updated=0
# install NAME...: installs those of NAME... that are missing.
install() {
  local need
  mapfile -t need < <(missing "$@")
  [ "${#need[@]}" -gt 0 ] || return 0
  echo "setup: installing ${need[*]}"
  if [ "$updated" = 0 ]; then $SUDO apt-get update -q; updated=1; fi
  $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
}

if [ "${1:-}" = "--no-run" ]; then
  install "${build_packages[@]}" "${packages[@]}"
  [ -n "$(missing "${build_packages[@]}" "${packages[@]}")" ] || echo "setup: all packages installed"
  exit 0
fi

# The build needs only the first group: it runs (2 cores, about 4 minutes
# uncached) while the second installs (mostly download and unpacking), and
# the main job starts when both are done.
install "${build_packages[@]}"
build_log=$(mktemp "${TMPDIR:-/tmp}/plir-setup-build.XXXXXX")
trap 'rm -f "$build_log"' EXIT
echo "setup: building the main job's tools (tools/main_job.sh --build) while the rest installs"
tools/main_job.sh --build > "$build_log" 2>&1 &
build_pid=$!
install_status=0
install "${packages[@]}" || install_status=$?
build_status=0
wait "$build_pid" || build_status=$?
if [ "$build_status" -ne 0 ]; then
  cat "$build_log" >&2
  echo "setup: the build failed" >&2
  exit 1
fi
if [ "$install_status" -ne 0 ]; then
  echo "setup: installing the packages failed" >&2
  exit 1
fi

echo "setup: main job: tools/main_job.sh ${SETUP_MODEL:-mobilenet_v2}"
tools/main_job.sh "${SETUP_MODEL:-mobilenet_v2}"
