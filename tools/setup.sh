#!/usr/bin/env bash
# Installs what PLIR needs on Debian 12 (idempotent), then runs the main job:
# the lazy-params pipeline (plugins loaded at run time) on a sample model.
#
#   tools/setup.sh            install, build, and run the main job
#   tools/setup.sh --no-run   install only
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

echo "setup: main job: plir-opt examples/models/conv_weights_layout.plir --pipeline configs/lazy-params.yaml"
bazel run //runtime:plir-opt -- examples/models/conv_weights_layout.plir \
  --pipeline configs/lazy-params.yaml --time-passes
