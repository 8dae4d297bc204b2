#!/usr/bin/env bash
# Bazel test wrapper: runs the golden runner with the arguments the
# plir_pass_plugin macro gives it.
exec "$@"
