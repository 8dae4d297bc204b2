// Helpers for fast, copy-on-change rewriters: a pass that walks a function
// directly (instead of through ExprMutator) and rebuilds only what changed,
// sharing every unchanged node.
#ifndef PLIR_IR_REWRITE_H_
#define PLIR_IR_REWRITE_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace plir {

// The outcome of rewriting one node: unchanged (share the original),
// changed (the replacement was written out), or a shape the rewriter does
// not handle (the caller falls back to ExprMutator).
enum class RewriteResult : uint8_t { kSame, kChanged, kUnsupported };

// Rewrites the elements of `list` in order with
// `fn(const T& element, T* replacement) -> RewriteResult`, stopping at the
// first kUnsupported. `*out` is filled copy-on-change: from the first
// changed element on it holds the elements before it, then each element or
// its replacement; with `copy_all` (the caller changed something else of
// the node already) it holds every element from the start. Returns kChanged
// iff some element changed.
template <typename T, typename Fn>
RewriteResult RewriteEach(std::span<const T> list, std::vector<T>* out, Fn&& fn,
                          bool copy_all = false) {
  bool changed = false;
  if (copy_all) out->reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    T x;
    RewriteResult r = fn(list[i], &x);
    if (r == RewriteResult::kUnsupported) return r;
    if (r == RewriteResult::kChanged && !changed && !copy_all) {
      out->reserve(list.size());
      out->assign(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (r == RewriteResult::kChanged) changed = true;
    if (changed || copy_all) out->push_back(r == RewriteResult::kChanged ? std::move(x) : list[i]);
  }
  return changed ? RewriteResult::kChanged : RewriteResult::kSame;
}

}  // namespace plir

#endif  // PLIR_IR_REWRITE_H_
