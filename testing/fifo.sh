# Sourced by shell tests: write to a FIFO that a background reader drains.
#
# write_to_fifo FIFO OUT ERR CMD...: starts `cat FIFO > OUT` in the
# background and runs CMD (which writes to FIFO) with its standard error in
# ERR, and sets rc to CMD's exit code. The tools rightly refuse a FIFO that
# no process has open for reading, and the background reader may not have
# reached its open() when CMD starts; so CMD runs again, up to 100 times
# 0.1 s apart, while it gives that refusal. A reader blocked in open()
# counts as a reader, so the second try finds it. The reader gives up after
# 30 s: a CMD that never opens the FIFO cannot leave the test waiting
# forever.
write_to_fifo() {
  local fifo="$1" out="$2" err="$3" reader i
  shift 3
  timeout 30 cat "$fifo" > "$out" &
  reader=$!
  for i in $(seq 100); do
    "$@" 2> "$err"; rc=$?
    grep -q "is a FIFO that no process has open for reading" "$err" || break
    sleep 0.1
  done
  wait "$reader"
}
