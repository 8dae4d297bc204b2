#!/usr/bin/env bash
# bench/shard.sh: the model zoo and a sharded 1M-op module as Bazel actions,
# timed at --jobs=1 and --jobs=2 (docs/scale-out.md, bench/RESULTS.md).
#
#   bench/shard.sh
#
# Each timing deletes the outputs of the actions it measures and rebuilds
# them with no disk cache (--disk_cache=), so that they run here: the zoo's
# 54 pipeline actions; the 4 shard actions plus the merge of the 1M-op,
# 1,000-function module; and its unsharded run (one action). Then the same
# zoo rebuild served by the disk cache, for the cache-hit figure.
set -euo pipefail
cd "$(dirname "$0")/.."
zoo=//examples/model_zoo
bazel build "$zoo:all" "$zoo:shard_1m" "$zoo:unsharded_1m" > /dev/null 2>&1
bin=$(bazel info bazel-bin 2> /dev/null)/examples/model_zoo
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (other agents building)"

# The zoo's pipeline outputs (not their sources): NAME.plir|.plirb|.json
# next to NAME.time-passes.txt.
zoo_outputs() {
  for t in "$bin"/*.time-passes.txt; do
    n=${t%.time-passes.txt}
    case "$(basename "$n")" in unsharded_*) continue ;; esac
    for e in plir plirb json; do [ -f "$n.$e" ] && echo "$n.$e"; done
    echo "$t"
  done
}

timed() {  # timed LABEL COUNT BAZEL-ARGS...: prints seconds and per-second
  local label=$1 count=$2
  shift 2
  local t0 t1
  t0=$(date +%s.%N)
  bazel build "$@" > /tmp/shard_bench.log 2>&1 || { cat /tmp/shard_bench.log; exit 1; }
  t1=$(date +%s.%N)
  python3 -c "import sys; t=$t1-$t0; print('%-44s %7.2f s  %6.1f /s' % ('$label', t, $count / t))"
}

for jobs in 1 2; do
  rm -f $(zoo_outputs)
  timed "zoo, 54 pipeline actions, --jobs=$jobs" 54 --disk_cache= --jobs=$jobs "$zoo:all"
done
rm -f $(zoo_outputs)
timed "zoo, 54 pipeline actions, disk-cache hits" 54 "$zoo:all"

for jobs in 1 2; do
  rm -f "$bin"/shard_1m.shards/out-* "$bin"/shard_1m.plirb
  timed "1M ops, 4 shards + merge, --jobs=$jobs" 1 --disk_cache= --jobs=$jobs "$zoo:shard_1m"
done
rm -f "$bin"/unsharded_1m.*
timed "1M ops, unsharded (one action), --jobs=1" 1 --disk_cache= --jobs=1 "$zoo:unsharded_1m"
cmp "$bin/shard_1m.plirb" "$bin/unsharded_1m.plirb" && echo "merged == unsharded: byte-identical"
echo "sizes (bytes): input $(stat -c %s "$bin/shard_1m_src.plirb"), output $(stat -c %s "$bin/shard_1m.plirb")"
(cd "$bin/shard_1m.shards" && for f in in-*.plirb out-*.plirb; do echo "  $f $(stat -c %s "$f")"; done)
echo "pass time per shard (--time-passes Total):"
for t in "$bin"/shard_1m.shards/out-*.time-passes.txt "$bin"/unsharded_1m.time-passes.txt; do
  echo "  $(basename "$t"): $(grep -m1 'Total:' "$t")"
done
