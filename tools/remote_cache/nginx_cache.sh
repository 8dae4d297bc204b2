#!/usr/bin/env bash
# A local Bazel remote cache: Debian's nginx (nginx-core, http_dav_module)
# on 127.0.0.1 on a free port, configured by tools/remote_cache/nginx.conf.in.
#
#   tools/remote_cache/nginx_cache.sh start DIR [SEED]   prints the port; state in DIR
#   tools/remote_cache/nginx_cache.sh stop DIR           stops that nginx
#
# DIR holds the config, the logs, the pid and the store (DIR/store/ac,
# DIR/store/cas). Use: bazel build --remote_cache=http://127.0.0.1:PORT.
# SEED, a Bazel disk cache directory, backs the store read-only: a GET
# that misses the store is answered from SEED (as a team's shared cache
# would hold what others built); PUTs go to the store only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:-}
dir=${2:-}
seed=${3:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

case "$cmd" in
start)
  command -v nginx > /dev/null || [ -x /usr/sbin/nginx ] || {
    echo "nginx_cache: nginx is not installed (apt-get install nginx-core)" >&2; exit 1; }
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
  mkdir -p "$dir/store/ac" "$dir/store/cas" "$dir/tmp"
  dir=$(cd "$dir" && pwd)
  user=""
  [ "$(id -u)" -eq 0 ] && user="user root;"  # workers write the store as its owner
  for attempt in 1 2 3 4 5; do
    port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    if [ -n "$seed" ]; then
      [ -d "$seed/ac" ] && [ -d "$seed/cas" ] || { echo "nginx_cache: $seed is not a Bazel disk cache" >&2; exit 1; }
      seed_on="" seed_dir=$(cd "$seed" && pwd)
    else
      seed_on="# " seed_dir=/nonexistent
    fi
    sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|g" -e "s|@USER@|$user|" \
      -e "s|@SEED@|$seed_on|g" -e "s|@SEED_DIR@|$seed_dir|g" \
      "$here/nginx.conf.in" > "$dir/nginx.conf"
    "$nginx" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" < /dev/null > "$dir/nginx.out" 2>&1 &
    echo $! > "$dir/pid"
    # Ready when a PUT and a GET round-trip (at most 5 s).
    for _ in $(seq 50); do
      if curl -sf -m 2 -X PUT --data-binary ping "http://127.0.0.1:$port/cas/ready" > /dev/null 2>&1 &&
        [ "$(curl -sf -m 2 "http://127.0.0.1:$port/cas/ready")" = ping ]; then
        rm -f "$dir/store/cas/ready"
        echo "$port" > "$dir/port"
        echo "$port"
        exit 0
      fi
      kill -0 "$(cat "$dir/pid")" 2> /dev/null || break
      sleep 0.1
    done
    kill "$(cat "$dir/pid")" 2> /dev/null || true
    wait "$(cat "$dir/pid")" 2> /dev/null || true
  done
  echo "nginx_cache: nginx did not start; $dir/error.log says:" >&2
  cat "$dir/error.log" "$dir/nginx.out" >&2 2> /dev/null || true
  exit 1
  ;;
stop)
  [ -f "$dir/pid" ] || exit 0
  pid=$(cat "$dir/pid")
  if kill -0 "$pid" 2> /dev/null; then
    kill -TERM "$pid" 2> /dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2> /dev/null || true
  fi
  rm -f "$dir/pid"
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2
  exit 2
  ;;
esac
