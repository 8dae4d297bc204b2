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

packages=(
  bazel-bootstrap    # Bazel 4.2.3, offline-capable
  g++
  libyaml-cpp-dev    # YAML pipelines
  libgtest-dev       # tests
  libbenchmark-dev   # bench/
  libcli11-dev       # command-line parsing
  libsimdjson-dev    # JSON loading
  libssl-dev         # SHA-256 of plugin files (libcrypto)
  libre2-dev         # regular expressions of pipeline steps (functions: REGEX)
  libseccomp-dev     # the plugin child's seccomp filter (driver/sandbox.cc)
  libonnx-dev        # frontends/onnx: ONNX protobuf, checker, version converter
  libprotobuf-dev    # frontends/onnx (libonnx-dev does not pull it in)
  libonnx-testdata   # frontends/onnx:node_tests (ONNX's backend node tests)
  libopenblas-dev    # kernels/: cblas sgemm/dgemm behind conv and matmul (pthreads build)
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

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages already installed"
fi

if [ "${1:-}" = "--no-run" ]; then exit 0; fi

echo "setup: main job: tools/main_job.sh ${SETUP_MODEL:-mobilenet_v2}"
tools/main_job.sh "${SETUP_MODEL:-mobilenet_v2}"
