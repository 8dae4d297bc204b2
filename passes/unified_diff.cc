#include "passes/unified_diff.h"

#include <algorithm>
#include <vector>

namespace plir {
namespace {

std::vector<std::string_view> SplitLines(std::string_view s) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string_view::npos) end = s.size();
    lines.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

enum class Op { kKeep, kDelete, kInsert };
struct Edit {
  Op op;
  size_t a;  // line index in a (kKeep, kDelete)
  size_t b;  // line index in b (kKeep, kInsert)
};

// Myers' O((N+M)D) shortest edit script on a[lo_a, hi_a) and b[lo_b, hi_b).
// Falls back to delete-all/insert-all past `max_d` edits.
void Myers(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b,
           size_t lo_a, size_t hi_a, size_t lo_b, size_t hi_b, std::vector<Edit>* out) {
  const int n = static_cast<int>(hi_a - lo_a), m = static_cast<int>(hi_b - lo_b);
  const int max_d = std::min(n + m, 4000);
  const int offset = max_d + 1;
  std::vector<int> v(2 * offset + 1, 0);
  std::vector<std::vector<int>> trace;
  int found_d = -1;
  for (int d = 0; d <= max_d && found_d < 0; ++d) {
    trace.push_back(v);
    for (int k = -d; k <= d; k += 2) {
      int x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                  ? v[offset + k + 1]
                  : v[offset + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && a[lo_a + x] == b[lo_b + y]) ++x, ++y;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found_d = d;
        break;
      }
    }
  }
  if (found_d < 0) {
    for (int i = 0; i < n; ++i) out->push_back({Op::kDelete, lo_a + i, lo_b});
    for (int j = 0; j < m; ++j) out->push_back({Op::kInsert, lo_a + n, lo_b + j});
    return;
  }
  std::vector<Edit> rev;
  int x = n, y = m;
  for (int d = found_d; d > 0; --d) {
    const std::vector<int>& pv = trace[d];
    int k = x - y;
    int prev_k = (k == -d || (k != d && pv[offset + k - 1] < pv[offset + k + 1])) ? k + 1 : k - 1;
    int prev_x = pv[offset + prev_k];
    int prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      --x, --y;
      rev.push_back({Op::kKeep, lo_a + x, lo_b + y});
    }
    if (x == prev_x)
      rev.push_back({Op::kInsert, lo_a + x, lo_b + prev_y});
    else
      rev.push_back({Op::kDelete, lo_a + prev_x, lo_b + y});
    x = prev_x, y = prev_y;
  }
  while (x > 0 && y > 0) {
    --x, --y;
    rev.push_back({Op::kKeep, lo_a + x, lo_b + y});
  }
  out->insert(out->end(), rev.rbegin(), rev.rend());
}

}  // namespace

std::string UnifiedDiff(std::string_view a_text, std::string_view b_text, const std::string& a_name,
                        const std::string& b_name, int context) {
  if (a_text == b_text) return "";
  auto a = SplitLines(a_text), b = SplitLines(b_text);
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre &&
         a[a.size() - 1 - suf] == b[b.size() - 1 - suf])
    ++suf;
  std::vector<Edit> edits;
  for (size_t i = 0; i < pre; ++i) edits.push_back({Op::kKeep, i, i});
  Myers(a, b, pre, a.size() - suf, pre, b.size() - suf, &edits);
  for (size_t i = 0; i < suf; ++i)
    edits.push_back({Op::kKeep, a.size() - suf + i, b.size() - suf + i});

  std::string out = "--- " + a_name + "\n+++ " + b_name + "\n";
  if (a == b) {  // the texts differ only in a trailing newline
    out += "@@ end of file @@\n\\ trailing newline differs\n";
    return out;
  }
  size_t i = 0;
  while (i < edits.size()) {
    if (edits[i].op == Op::kKeep) {
      ++i;
      continue;
    }
    // A hunk: from `context` keeps before the first change to `context`
    // keeps after the last change that is within 2*context of the next.
    size_t start = i >= static_cast<size_t>(context) ? i - context : 0;
    while (start < i && edits[start].op != Op::kKeep) ++start;
    size_t end = i;
    size_t last_change = i;
    while (end < edits.size()) {
      if (edits[end].op != Op::kKeep)
        last_change = end;
      else if (end - last_change > static_cast<size_t>(2 * context))
        break;
      ++end;
    }
    end = std::min(edits.size(), last_change + 1 + context);
    size_t a_start = edits[start].a, b_start = edits[start].b;
    size_t a_count = 0, b_count = 0;
    std::string body;
    for (size_t j = start; j < end; ++j) {
      const Edit& e = edits[j];
      if (e.op == Op::kKeep) {
        body.append(" ").append(a[e.a]).push_back('\n');
        ++a_count, ++b_count;
      } else if (e.op == Op::kDelete) {
        body.append("-").append(a[e.a]).push_back('\n');
        ++a_count;
      } else {
        body.append("+").append(b[e.b]).push_back('\n');
        ++b_count;
      }
    }
    out += "@@ -" + std::to_string(a_count ? a_start + 1 : a_start) + "," +
           std::to_string(a_count) + " +" + std::to_string(b_count ? b_start + 1 : b_start) + "," +
           std::to_string(b_count) + " @@\n" + body;
    i = end;
  }
  return out;
}

}  // namespace plir
