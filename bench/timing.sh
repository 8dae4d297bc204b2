# Shared by the bench scripts that time whole processes (sourced, not run).
#
# ms CMD...   runs CMD (output discarded) and prints its wall time in
#             microseconds (the name is historical: median divides by 1000)
# median      reads space- or newline-separated microsecond figures on
#             standard input and prints their median in milliseconds (.1);
#             empty fields (a leading space) are not figures
ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" > /dev/null
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000))
}
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'; }
