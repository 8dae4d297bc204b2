"""Runs every code block of docs/python.md, in order, in a scratch directory.

Python blocks share one namespace; sh blocks run with bash -euo pipefail
and plir-opt on PATH; a block right after `<!-- file: NAME -->` is written
to NAME instead. Any other block fails the test (so none goes unchecked).
"""

import os
import re
import subprocess
import sys

from conftest import path

FENCE = re.compile(r"^```(\w*)\s*$")
FILE = re.compile(r"^<!-- file: (\S+) -->\s*$")


def blocks(text):
    lines = text.splitlines()
    out, i, pending = [], 0, None
    while i < len(lines):
        m = FILE.match(lines[i])
        if m:
            pending = m.group(1)
            i += 1
            continue
        m = FENCE.match(lines[i])
        if m:
            lang, body, i = m.group(1), [], i + 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append((lang, pending, "\n".join(body) + "\n", i))
            pending = None
        elif lines[i].strip():
            pending = None
        i += 1
    return out


def test_tutorial_blocks_run(tmp_path, monkeypatch):
    doc = open(path("docs/python.md")).read()
    found = blocks(doc)
    assert len(found) >= 10
    plir_opt = os.path.dirname(os.path.realpath(path("cli/plir-opt")))
    env = dict(os.environ, PATH=plir_opt + ":" + os.environ["PATH"])
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__tutorial__"}
    ran = 0
    for lang, file, body, line in found:
        where = "docs/python.md block ending at line %d" % line
        if file:
            (tmp_path / file).write_text(body)
        elif lang == "python":
            exec(compile(body, where, "exec"), namespace)
            ran += 1
        elif lang == "sh":
            r = subprocess.run(["bash", "-euo", "pipefail", "-c", body], env=env, capture_output=True, text=True)
            assert r.returncode == 0, "%s failed:\n%s\n%s" % (where, r.stdout, r.stderr)
            ran += 1
        else:
            raise AssertionError("%s: a ```%s block that is neither run nor written to a file" % (where, lang))
    assert ran >= 6
    sys.stdout.write("tutorial: %d blocks\n" % len(found))
