"""PLIR compiles as Bazel actions: plir_pipeline, plir_sharded_pipeline, onnx_model.

Each model compiles in exactly one action whose inputs are declared: the
model, the pipeline YAML and the files it includes (`pipeline_deps`), the
plugin .so files, and plir-opt itself (the binary only, not its runfiles:
its bundled plugins are not inputs, and `--hermetic-plugins` keeps plir-opt
from looking for them). A pipeline that reads anything else fails in the
sandbox, naming the file. The action cache key is the digests of those
inputs, so a changed plugin reruns exactly the models whose rules list it.
Usable out of tree: `load("@plir//tools:pipeline.bzl", "plir_pipeline")`.

The tools build in the target configuration (`cfg = "target"`), as the
tests' plir-opt does: the zoo then shares every compiled object with
`bazel test //...` instead of building PLIR a second time for the exec
configuration. Remote execution on a cluster of another platform would
switch them to `cfg = "exec"` (docs/scale-out.md).
"""

_EXT = {"text": ".plir", "binary": ".plirb", "json": ".json"}

# $1 plir-opt, $2 the timing report; then SHA PATH pairs up to "--"; then
# plir-opt's arguments. stderr of a successful run is the --time-passes
# report (and any warnings); of a failed run, the error. No crash
# reproducer: an action writes nothing outside its outputs (run plir-opt
# by hand on the same files to get one).
_RUN = """set -eu
opt=$1; timing=$2; shift 2
while [ "$1" != "--" ]; do
  got=$(sha256sum "$2" | cut -d' ' -f1)
  if [ "$got" != "$1" ]; then
    echo "plir_pipeline: plugin $2 has sha256 $got, not the pinned $1 (plugin_sha256)" >&2
    exit 1
  fi
  shift 2
done
shift
if ! "$opt" "$@" --hermetic-plugins --no-reproducer --time-passes 2> "$timing"; then
  cat "$timing" >&2
  exit 1
fi
"""

def _pins(ctx):
    """SHA PATH pairs for every pinned plugin; fails on a pin of an unlisted one."""
    listed = {f.path: True for f in ctx.files.plugins}
    out = []
    for target, sha in ctx.attr.plugin_sha256.items():
        if len(sha) != 64 or sha.lower() != sha or [c for c in sha.elems() if c not in "0123456789abcdef"]:
            fail("plugin_sha256: %s: the pin must be 64 lowercase hex digits, not '%s'" % (target.label, sha))
        for f in target.files.to_list():
            if f.path not in listed:
                fail("plugin_sha256: %s is pinned but not in plugins" % target.label)
            out += [sha, f.path]
    return out

def _run_pipeline(ctx, src, out, timing, mnemonic, progress):
    args = ctx.actions.args()
    args.add(ctx.file._opt)
    args.add(timing)
    args.add_all(_pins(ctx))
    args.add("--")
    args.add(src)
    args.add("--pipeline", ctx.file.pipeline)
    for p in ctx.files.plugins:
        args.add("--plugin", p)
    args.add("--emit", ctx.attr.emit)
    if ctx.attr.check_execution:
        args.add("--check-execution")
    args.add_all(ctx.attr.opts)
    args.add("-o", out)
    # --define=plir_cache_salt=S gives every pipeline action a new cache key
    # (and only them): tools/zoo_checks.sh remote uses it to make the first
    # build execute and upload them.
    salt = ctx.var.get("plir_cache_salt", "")
    ctx.actions.run_shell(
        command = _RUN,
        arguments = [args],
        env = {"PLIR_CACHE_SALT": salt} if salt else {},
        inputs = [src, ctx.file.pipeline, ctx.file._opt] + ctx.files.pipeline_deps + ctx.files.plugins,
        outputs = [out, timing],
        mnemonic = mnemonic,
        progress_message = progress,
    )

def _plir_pipeline_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + _EXT[ctx.attr.emit])
    timing = ctx.actions.declare_file(ctx.label.name + ".time-passes.txt")
    _run_pipeline(ctx, ctx.file.src, out, timing, "PlirPipeline", "plir-opt %s (%s)" % (ctx.label, ctx.file.pipeline.basename))
    return [
        DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out])),
        OutputGroupInfo(timing = depset([timing])),
    ]

_COMMON_ATTRS = {
    "src": attr.label(allow_single_file = True, mandatory = True, doc = "The model (.plir, .plirb or .json)."),
    "pipeline": attr.label(allow_single_file = [".yaml"], mandatory = True, doc = "The pipeline YAML."),
    "pipeline_deps": attr.label_list(allow_files = [".yaml"], doc = "Files the pipeline includes or extends."),
    "plugins": attr.label_list(allow_files = [".so"], doc = "Every plugin the pipeline loads (its plugins: by name)."),
    "plugin_sha256": attr.label_keyed_string_dict(
        allow_files = [".so"],
        doc = "Pins: plugin target -> SHA-256 (lowercase hex); the action fails on a mismatch.",
    ),
    "emit": attr.string(default = "text", values = ["text", "binary", "json"]),
    "check_execution": attr.bool(default = False, doc = "plir-opt --check-execution (seeded random inputs)."),
    "opts": attr.string_list(doc = "More plir-opt flags (such as --opt-level 1)."),
    "_opt": attr.label(default = Label("//cli:plir-opt"), allow_single_file = True, cfg = "target"),
}

plir_pipeline = rule(
    implementation = _plir_pipeline_impl,
    attrs = _COMMON_ATTRS,
    doc = """Runs `plir-opt SRC --pipeline PIPELINE` as one action.

Outputs NAME.plir (or .plirb, .json by `emit`), and in the output group
`timing` NAME.time-passes.txt, the --time-passes report.""",
)

def _plir_sharded_pipeline_impl(ctx):
    n = ctx.attr.shards
    ext = _EXT[ctx.attr.emit]
    split = [ctx.actions.declare_file("%s.shards/in-%d.plirb" % (ctx.label.name, k)) for k in range(n)]
    args = ctx.actions.args()
    args.add("split", ctx.file.src)
    for f in split:
        args.add("-o", f)
    ctx.actions.run(
        executable = ctx.file._shard,
        arguments = [args],
        inputs = [ctx.file.src],
        outputs = split,
        mnemonic = "PlirShardSplit",
        progress_message = "plir-shard split %s into %d" % (ctx.label, n),
    )
    done = []
    timings = []
    for k in range(n):
        out = ctx.actions.declare_file("%s.shards/out-%d.plirb" % (ctx.label.name, k))
        timing = ctx.actions.declare_file("%s.shards/out-%d.time-passes.txt" % (ctx.label.name, k))
        _run_pipeline(ctx, split[k], out, timing, "PlirPipeline", "plir-opt %s shard %d of %d" % (ctx.label, k, n))
        done.append(out)
        timings.append(timing)
    merged = ctx.actions.declare_file(ctx.label.name + ext)
    args = ctx.actions.args()
    args.add("merge")
    args.add_all(done)
    args.add("-o", merged)
    ctx.actions.run(
        executable = ctx.file._shard,
        arguments = [args],
        inputs = done,
        outputs = [merged],
        mnemonic = "PlirShardMerge",
        progress_message = "plir-shard merge %s" % ctx.label,
    )
    return [
        DefaultInfo(files = depset([merged]), runfiles = ctx.runfiles(files = [merged])),
        OutputGroupInfo(timing = depset(timings), shards = depset(split + done)),
    ]

_SHARDED_ATTRS = dict(_COMMON_ATTRS)
_SHARDED_ATTRS["shards"] = attr.int(mandatory = True, doc = "Number of shards (one action each).")
_SHARDED_ATTRS["_shard"] = attr.label(default = Label("//cli:plir-shard"), allow_single_file = True, cfg = "target")

plir_sharded_pipeline = rule(
    implementation = _plir_sharded_pipeline_impl,
    attrs = _SHARDED_ATTRS,
    doc = """A pipeline of function passes on one module split by function.

`plir-shard split` writes `shards` binary shards (one action), each shard
runs the pipeline in its own action, and `plir-shard merge` joins them (one
action) into NAME.plir (or by `emit`): the bytes the unsharded run gives,
as long as the pipeline's passes are function passes. Shards and their
timing reports are in the output groups `shards` and `timing`.""",
)

def _onnx_model_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + _EXT[ctx.attr.emit])
    args = ctx.actions.args()
    args.add(ctx.file.src)
    args.add("--weights-as-constants")
    args.add("-o", out)
    ctx.actions.run(
        executable = ctx.file._import,
        arguments = [args],
        inputs = [ctx.file.src],
        outputs = [out],
        mnemonic = "PlirImportOnnx",
        progress_message = "plir-import-onnx %s" % ctx.label,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

onnx_model = rule(
    implementation = _onnx_model_impl,
    attrs = {
        "src": attr.label(allow_single_file = [".onnx"], mandatory = True),
        "emit": attr.string(default = "text", values = ["text", "binary", "json"]),
        "_import": attr.label(default = Label("//frontends/onnx:plir-import-onnx"), allow_single_file = True, cfg = "target"),
    },
    doc = "Imports an ONNX model with plir-import-onnx (weights bound as constants) in one action.",
)
