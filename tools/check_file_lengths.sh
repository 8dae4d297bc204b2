#!/usr/bin/env bash
# Issue 19's rule: no source file under ir/, passes/, runtime/ or plugins/
# is over 900 lines (tests included). Prints each file over the limit and
# exits 1 if there is one. Run by .ci/run.
#
#   tools/check_file_lengths.sh [LIMIT]     default 900
set -euo pipefail
cd "$(dirname "$0")/.."
limit="${1:-900}"
status=0
while IFS= read -r -d '' f; do
  n=$(wc -l < "$f")
  if [ "$n" -gt "$limit" ]; then
    echo "check_file_lengths: $f: $n lines (limit $limit)"
    status=1
  fi
done < <(find ir passes runtime plugins -type f \( -name '*.cc' -o -name '*.h' \) -print0 2> /dev/null)
[ $status -eq 0 ] && echo "check_file_lengths: no file under ir/ passes/ runtime/ plugins/ over $limit lines"
exit $status
