"""The zoo's generated models: one action of gen_model each."""

def _generated_model_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ctx.attr.ext)
    args = ctx.actions.args()
    args.add("--kind", ctx.attr.kind)
    args.add("--bindings", ctx.attr.bindings)
    if ctx.attr.per_function:
        args.add("--per-function", ctx.attr.per_function)
    args.add("--seed", ctx.attr.seed)
    args.add("-o", out)
    ctx.actions.run(
        executable = ctx.file._gen,
        arguments = [args],
        outputs = [out],
        mnemonic = "PlirGenModel",
        progress_message = "gen_model %s" % ctx.label,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

generated_model = rule(
    implementation = _generated_model_impl,
    attrs = {
        "kind": attr.string(mandatory = True, values = ["chain", "resnet", "transformer", "random"]),
        "bindings": attr.int(mandatory = True),
        "per_function": attr.int(default = 0),
        "seed": attr.int(default = 1),
        "ext": attr.string(default = ".plir", values = [".plir", ".plirb", ".json"]),
        # The target configuration, as tools/pipeline.bzl's tools (no second
        # build of the IR core for the exec configuration).
        "_gen": attr.label(default = Label("//examples/model_zoo:gen_model"), allow_single_file = True, cfg = "target"),
    },
)
