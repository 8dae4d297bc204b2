// The PLIR SDK version. See docs/plugin-abi.md for what each part means to a
// plugin author: MAJOR changes may break source compatibility; any change to
// the IR's node layouts or the plugin ABI changes PLIR_PLUGIN_API_VERSION or
// the build fingerprint, and the loader then refuses old binaries.
#ifndef PLIR_PASSES_VERSION_H_
#define PLIR_PASSES_VERSION_H_

#define PLIR_SDK_VERSION_MAJOR 2
#define PLIR_SDK_VERSION_MINOR 0
#define PLIR_SDK_VERSION_PATCH 0
#define PLIR_SDK_VERSION "2.0.0"

#endif  // PLIR_PASSES_VERSION_H_
