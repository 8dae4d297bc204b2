#!/usr/bin/env bash
# Runs one pytest file on Debian's /usr/bin/python3 with the built plir
# package first on PYTHONPATH. pytest's exit 5 ("no tests collected")
# fails like any other non-zero status.
#
# Under --config=asan the extension and the plugins are instrumented but
# python3 is not: libasan is preloaded into it (with libstdc++, which
# python3 does not link: ASan's __cxa_throw interceptor needs it at start,
# or every C++ exception the extension throws aborts), and leak checking is
# off (the interpreter itself keeps memory until exit).
set -uo pipefail
test_file="$1"
root="${TEST_SRCDIR:-$PWD/..}/${TEST_WORKSPACE:-plir}"
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
export PLIR_TEST_ROOT="$root"
export PYTHONDONTWRITEBYTECODE=1
so="$root/python/plir/_plir.so"
if [ ! -e "$so" ]; then echo "run_pytest: $so is missing" >&2; exit 1; fi
if readelf -d "$so" 2>/dev/null | grep -q 'libasan'; then
  asan=$(gcc -print-file-name=libasan.so)
  export LD_PRELOAD="$asan $(gcc -print-file-name=libstdc++.so)"
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
  echo "run_pytest: the extension is built with AddressSanitizer; preloading $asan"
fi
cd "$root"
/usr/bin/python3 -m pytest -q -p no:cacheprovider "$test_file"
rc=$?
if [ "$rc" -eq 5 ]; then echo "run_pytest: no tests ran in $test_file" >&2; exit 1; fi
exit "$rc"
