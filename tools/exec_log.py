#!/usr/bin/python3
"""Counts the spawns of a Bazel --execution_log_json_file.

  exec_log.py LOG [--mnemonic M] [--list] [--require-remote-hits]

Prints "SPAWNS HITS" (spawns of mnemonic M, default all; how many of them
were remote cache hits); --list prints each spawn's progress message
instead. --require-remote-hits exits 1, naming them, if any counted spawn
was not a remote cache hit. The log is a stream of JSON objects (Bazel 4).
"""
import json
import sys


def spawns(path):
    text = open(path, encoding="utf-8").read()
    dec = json.JSONDecoder()
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return
        obj, i = dec.raw_decode(text, i)
        yield obj


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path = argv[0]
    mnemonic = None
    listing = "--list" in argv
    require = "--require-remote-hits" in argv
    if "--mnemonic" in argv:
        mnemonic = argv[argv.index("--mnemonic") + 1]
    try:
        chosen = [s for s in spawns(path) if mnemonic is None or s.get("mnemonic") == mnemonic]
    except (OSError, ValueError) as e:
        print("exec_log.py: %s: %s" % (path, e), file=sys.stderr)
        return 1
    hits = [s for s in chosen if s.get("remoteCacheHit")]
    if listing:
        for s in chosen:
            print(s.get("progressMessage", "?"))
    else:
        print(len(chosen), len(hits))
    if require:
        misses = [s for s in chosen if not s.get("remoteCacheHit")]
        for s in misses:
            print("not a remote cache hit: %s" % s.get("progressMessage", "?"), file=sys.stderr)
        return 1 if misses else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
