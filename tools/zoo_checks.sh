#!/usr/bin/env bash
# The model zoo's build checks (issue 24; docs/scale-out.md), each counted
# from Bazel's execution log (tools/exec_log.py). .ci/run runs each as one
# step; a developer can run any of them:
#
#   tools/zoo_checks.sh rebuild     a second build of //examples/model_zoo:all runs 0 actions
#   tools/zoo_checks.sh touch       a changed fuse_ops plugin reruns exactly the 16 models that load it
#   tools/zoo_checks.sh bad-input   undeclared include / undeclared plugin / wrong pin fail, naming it
#   tools/zoo_checks.sh remote      nginx remote cache round trip: every pipeline action a remote hit
#   tools/zoo_checks.sh dead-cache  a dead remote cache: the build falls back, within the timeout
#   tools/zoo_checks.sh shard-1m    1M ops in 1,000 functions: 4 shards merged == the unsharded run
#
# Several checks may be given at once; each ends with "zoo_checks: ok: NAME"
# or "zoo_checks: FAILED: NAME". rebuild, touch, bad-input and dead-cache
# use this workspace's output base (and leave it as they found it); remote
# uses scratch output bases and no disk cache, so that the developer's own
# caches are never wiped.
set -uo pipefail
cd "$(dirname "$0")/.."
ws=$(pwd)
zoo=//examples/model_zoo:all
log() { echo "zoo_checks: $*"; }
tmp=$(mktemp -d)
cleanup_dirs=("$tmp")
cleanup() {
  for ob in "${output_bases[@]:-}"; do
    [ -n "$ob" ] && [ -d "$ob" ] && bazel --output_base="$ob" shutdown > /dev/null 2>&1
  done
  [ -n "${cache_dir:-}" ] && tools/remote_cache/nginx_cache.sh stop "$cache_dir"
  [ -n "${blackhole_pid:-}" ] && kill "$blackhole_pid" 2> /dev/null
  rm -rf "${cleanup_dirs[@]}"
}
output_bases=()
trap cleanup EXIT
trap 'exit 130' INT TERM

exec_count() { tools/exec_log.py "$@"; }

check_rebuild() {
  bazel build "$zoo" > "$tmp/b1.log" 2>&1 || { cat "$tmp/b1.log"; return 1; }
  bazel build "$zoo" --execution_log_json_file="$tmp/x2.json" > "$tmp/b2.log" 2>&1 ||
    { cat "$tmp/b2.log"; return 1; }
  read -r n _ < <(exec_count "$tmp/x2.json")
  log "second build of $zoo: $n actions"
  [ "$n" -eq 0 ] || { exec_count "$tmp/x2.json" --list; return 1; }
}

check_touch() {
  # "Touching" the plugin: fuse_ops built at -O0 is a different .so (the
  # per-file option reaches only its own compile actions). Its models are
  # the 16 onnx_* ones (O2-fuse.yaml); no other model lists it.
  local touch='--per_file_copt=plugins/fuse_ops/.*@-O0' rc=0
  bazel build "$zoo" > "$tmp/b1.log" 2>&1 || { cat "$tmp/b1.log"; return 1; }
  bazel build "$zoo" "$touch" --execution_log_json_file="$tmp/x.json" > "$tmp/b2.log" 2>&1 ||
    { cat "$tmp/b2.log"; return 1; }
  exec_count "$tmp/x.json" --mnemonic PlirPipeline --list | sort > "$tmp/reran"
  local n others
  n=$(wc -l < "$tmp/reran")
  others=$(grep -vc '//examples/model_zoo:onnx_' "$tmp/reran")
  log "fuse_ops touched: $n pipeline actions reran ($others not of an onnx_ model); spawns: $(exec_count "$tmp/x.json" | cut -d' ' -f1)"
  [ "$n" -eq 16 ] && [ "$others" -eq 0 ] || { cat "$tmp/reran"; rc=1; }
  # Every one of the 16 models that load it, once.
  [ "$(sed 's/ (.*//' "$tmp/reran" | sort -u | wc -l)" -eq 16 ] || rc=1
  # Back as it was (from the disk cache).
  bazel build "$zoo" > "$tmp/b3.log" 2>&1 || { cat "$tmp/b3.log"; return 1; }
  return $rc
}

check_bad_input() {
  local rc=0 target want
  for pair in "bad_undeclared_include:common/cleanup.yaml" \
    "bad_undeclared_plugin:fuse_ops" \
    "bad_pin:not the pinned 0000000000000000"; do
    target=//examples/model_zoo:${pair%%:*}
    want=${pair#*:}
    if bazel build "$target" > "$tmp/bad.log" 2>&1; then
      log "FAIL: $target built"; rc=1
    elif ! grep -q "$want" "$tmp/bad.log"; then
      log "FAIL: $target failed without naming '$want':"; cat "$tmp/bad.log"; rc=1
    else
      log "$target fails: $(grep -m1 "$want" "$tmp/bad.log")"
    fi
  done
  return $rc
}

# A scratch build: its own output base, no disk cache, no convenience
# symlinks in the workspace.
scratch_bazel() {
  local ob=$1
  shift
  local cmd=$1
  shift
  bazel --output_base="$ob" "$cmd" --disk_cache= --symlink_prefix=/ "$@"
}

check_remote() {
  cache_dir=$tmp/cache
  local port ob1=$tmp/ob1 ob2=$tmp/ob2 t0 t1 t2 rc=0
  # The cache reads through to this workspace's disk cache (read only), as
  # a team's cache holds what others built: PLIR's compile actions are
  # hits, not a second build from source. The pipeline actions get a new
  # key (a fresh salt): the first build must execute and upload every one,
  # the second (nothing local left) must get every one from the cache.
  local seed
  seed=$(sed -n 's/^build --disk_cache=//p' .bazelrc | tail -1)
  seed=${seed/#\~/$HOME}
  [ -d "$seed/ac" ] || seed=
  port=$(tools/remote_cache/nginx_cache.sh start "$cache_dir" $seed) || return 1
  log "nginx remote cache on 127.0.0.1:$port (tools/remote_cache/nginx.conf.in), reading through to ${seed:-nothing}"
  local flags=(--remote_cache="http://127.0.0.1:$port" --remote_timeout=30
    --define=plir_cache_salt="$(date +%s%N)-$$")
  output_bases+=("$ob1" "$ob2")
  t0=$(date +%s)
  scratch_bazel "$ob1" build "${flags[@]}" "$zoo" --execution_log_json_file="$tmp/r1.json" \
    > "$tmp/r1.log" 2>&1 || { tail -30 "$tmp/r1.log"; return 1; }
  t1=$(date +%s)
  local bin1
  bin1=$(scratch_bazel "$ob1" info "${flags[@]}" bazel-bin 2> /dev/null)
  (cd "$bin1/examples/model_zoo" && find . -maxdepth 1 -type f ! -name '*.params' -print0 |
    sort -z | xargs -0 sha256sum) > "$tmp/sums1"
  read -r n1 h1 < <(exec_count "$tmp/r1.json" --mnemonic PlirPipeline)
  read -r all1 allh1 < <(exec_count "$tmp/r1.json")
  log "first build: $((t1 - t0)) s; $n1 pipeline actions executed and uploaded ($h1 were hits), $allh1 of $all1 actions in all hits; $(du -sh "$cache_dir/store" | cut -f1) uploaded"
  [ "$h1" -eq 0 ] || { log "FAIL: the salted pipeline actions should all have run"; rc=1; }
  # Wipe the first build's local state: output base and (no) disk cache.
  bazel --output_base="$ob1" shutdown > /dev/null 2>&1
  rm -rf "$ob1"
  t1=$(date +%s)
  scratch_bazel "$ob2" build "${flags[@]}" "$zoo" --execution_log_json_file="$tmp/r2.json" \
    > "$tmp/r2.log" 2>&1 || { tail -30 "$tmp/r2.log"; return 1; }
  t2=$(date +%s)
  local bin2
  bin2=$(scratch_bazel "$ob2" info "${flags[@]}" bazel-bin 2> /dev/null)
  (cd "$bin2/examples/model_zoo" && find . -maxdepth 1 -type f ! -name '*.params' -print0 |
    sort -z | xargs -0 sha256sum) > "$tmp/sums2"
  read -r n2 h2 < <(exec_count "$tmp/r2.json" --mnemonic PlirPipeline)
  read -r all2 allh2 < <(exec_count "$tmp/r2.json")
  log "after wiping: $((t2 - t1)) s; remote cache hits: $h2 of $n2 pipeline actions ($allh2 of $all2 actions in all)"
  exec_count "$tmp/r2.json" --mnemonic PlirPipeline --require-remote-hits > /dev/null || rc=1
  [ "$n2" -ge 50 ] && [ "$n2" -eq "$n1" ] || { log "FAIL: expected the $n1 pipeline actions of the cold build"; rc=1; }
  if cmp -s "$tmp/sums1" "$tmp/sums2" && [ -s "$tmp/sums1" ]; then
    log "outputs byte-identical: $(wc -l < "$tmp/sums1") files of examples/model_zoo"
  else
    log "FAIL: outputs differ"; diff "$tmp/sums1" "$tmp/sums2" | head; rc=1
  fi
  return $rc
}

check_dead_cache() {
  # A port where nothing listens, then a server that accepts and never
  # answers: each build falls back to running its actions here, with a
  # warning, within the bounded --remote_timeout (and no retries). Run in
  # this workspace's output base with a fresh salt, so that one pipeline
  # action must consult the cache; then rebuilt as it was.
  local t0 t1 rc=0 port target=//examples/model_zoo:chain_200
  local dead=(--disk_cache= --remote_timeout=5 --remote_retries=0)
  bazel build "$target" > "$tmp/d0.log" 2>&1 || { cat "$tmp/d0.log"; return 1; }
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  t0=$(date +%s)
  bazel build "${dead[@]}" --remote_cache="http://127.0.0.1:$port" "$target" \
    --define=plir_cache_salt="dead-$(date +%s%N)" > "$tmp/d1.log" 2>&1 ||
    { log "FAIL: the build failed with the cache refusing connections"; tail -20 "$tmp/d1.log"; rc=1; }
  t1=$(date +%s)
  log "remote cache refusing connections: the build fell back and ended in $((t1 - t0)) s: $(grep -m1 -A1 -i 'warning' "$tmp/d1.log" | tr '\n' ' ' | cut -c1-200)"
  grep -q '1 processwrapper-sandbox' "$tmp/d1.log" || { log "FAIL: the action did not run here"; rc=1; }
  /usr/bin/python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
conns = []
while True:
    conns.append(s.accept()[0])
' > "$tmp/bh.port" &
  blackhole_pid=$!
  for _ in $(seq 50); do [ -s "$tmp/bh.port" ] && break; sleep 0.1; done
  port=$(cat "$tmp/bh.port")
  t0=$(date +%s)
  bazel build "${dead[@]}" --remote_cache="http://127.0.0.1:$port" "$target" \
    --define=plir_cache_salt="silent-$(date +%s%N)" > "$tmp/d2.log" 2>&1 ||
    { log "FAIL: the build failed with a silent cache"; tail -20 "$tmp/d2.log"; rc=1; }
  t1=$(date +%s)
  log "remote cache that never answers (--remote_timeout=5): the build fell back and ended in $((t1 - t0)) s: $(grep -m1 -A1 -i 'warning' "$tmp/d2.log" | tr '\n' ' ' | cut -c1-200)"
  grep -q '1 processwrapper-sandbox' "$tmp/d2.log" || { log "FAIL: the action did not run here"; rc=1; }
  kill "$blackhole_pid" 2> /dev/null
  blackhole_pid=
  bazel build "$target" > "$tmp/d3.log" 2>&1 || { cat "$tmp/d3.log"; return 1; }
  return $rc
}

check_shard_1m() {
  # 1M ops in 1,000 functions (bench/workloads.h's chain), split into 4
  # shards (one pipeline action each) and merged, against the unsharded run
  # of the same function passes.
  local bin
  bazel build //examples/model_zoo:shard_1m //examples/model_zoo:unsharded_1m > "$tmp/s.log" 2>&1 ||
    { tail -30 "$tmp/s.log"; return 1; }
  bin=$(bazel info bazel-bin 2> /dev/null)/examples/model_zoo
  log "1M ops, 1,000 functions: shards $(cd "$bin/shard_1m.shards" && stat -c '%n %s' in-*.plirb | tr '\n' ' ')bytes; input $(stat -c %s "$bin/shard_1m_src.plirb") bytes"
  cmp "$bin/shard_1m.plirb" "$bin/unsharded_1m.plirb" ||
    { log "FAIL: merged shards differ from the unsharded run"; return 1; }
  log "merged shards byte-identical to the unsharded run ($(stat -c %s "$bin/shard_1m.plirb") bytes)"
}

[ $# -gt 0 ] || { sed -n '2,18p' "$0"; exit 2; }
status=0
for check in "$@"; do
  case "$check" in
  shard-1m) check_shard_1m ;;
  rebuild) check_rebuild ;;
  touch) check_touch ;;
  bad-input) check_bad_input ;;
  remote) check_remote ;;
  dead-cache) check_dead_cache ;;
  *) sed -n '2,18p' "$0"; exit 2 ;;
  esac
  if [ $? -eq 0 ]; then log "ok: $check"; else log "FAILED: $check"; status=1; fi
done
exit $status
