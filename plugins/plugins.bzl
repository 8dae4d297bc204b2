"""The list of in-tree plugins, installed next to plir-opt (bazel-bin/plugins)."""

IN_TREE_PLUGIN_NAMES = [
    "canonicalize_bindings",
    "cast_transformed_params",
    "common_subexpression_elimination",
    "dead_code_elimination",
    "fold_constant",
    "fuse_ops",
    "lazy_transform_params",
    "lift_transform_params",
    "normalize",
    "to_basic_block_normal_form",
]

IN_TREE_PLUGINS = ["//plugins/%s:libplir_%s.so" % (n, n) for n in IN_TREE_PLUGIN_NAMES]
