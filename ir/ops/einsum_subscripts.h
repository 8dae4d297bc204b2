// Einsum subscripts ("ij,jk->ik", "...ii->...i", "bij,bjk"), parsed against
// the operands' ranks: shared by einsum's type inference (ir/ops/linalg.cc)
// and its kernel (kernels/linalg.cc).
#ifndef PLIR_IR_OPS_EINSUM_SUBSCRIPTS_H_
#define PLIR_IR_OPS_EINSUM_SUBSCRIPTS_H_

#include <algorithm>
#include <string>
#include <vector>

#include "ir/status.h"

namespace plir::internal {

// Labels are ints in ASCII order: 'A'..'Z' -> 0..25, 'a'..'z' -> 26..51; the ellipsis's
// dimensions are 52, 53, ... (right-aligned across operands, broadcast).
struct EinsumSpec {
  std::vector<std::vector<int>> inputs;  // labels of each operand's dimensions
  std::vector<int> output;               // labels of the result's dimensions
  int num_labels = 0;                    // 52 + the ellipsis's dimensions
};

inline StatusOr<EinsumSpec> ParseEinsum(const std::string& subscripts,
                                        const std::vector<int>& ranks) {
  const std::string op = "einsum";
  std::string s;
  for (char c : subscripts)
    if (c != ' ') s += c;
  if (s.size() > 4096) return InvalidArgument(op + ": subscripts too long");
  std::string lhs = s, rhs;
  bool explicit_out = false;
  if (size_t arrow = s.find("->"); arrow != std::string::npos) {
    lhs = s.substr(0, arrow);
    rhs = s.substr(arrow + 2);
    explicit_out = true;
    if (rhs.find("->") != std::string::npos)
      return InvalidArgument(op + ": more than one '->' in \"" + subscripts + "\"");
  }
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    terms.push_back(
        lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size())
    return InvalidArgument(op + ": \"" + subscripts + "\" has " + std::to_string(terms.size()) +
                           " operand terms for " + std::to_string(ranks.size()) + " operands");
  auto label = [](char c) {
    return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : -1;
  };
  // Letters and whether the term has an ellipsis.
  auto parse_term = [&](const std::string& t, std::vector<int>* letters_before,
                        std::vector<int>* letters_after, bool* ell) -> Status {
    *ell = false;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '.') {
        if (*ell || t.compare(i, 3, "...") != 0)
          return InvalidArgument(op + ": bad ellipsis in \"" + subscripts + "\"");
        *ell = true;
        i += 2;
        continue;
      }
      int l = label(t[i]);
      if (l < 0)
        return InvalidArgument(op + ": bad character '" + std::string(1, t[i]) + "' in \"" +
                               subscripts + "\"");
      (*ell ? letters_after : letters_before)->push_back(l);
    }
    return Status::Ok();
  };
  EinsumSpec spec;
  int ell_dims = 0;
  std::vector<std::vector<int>> before(terms.size()), after(terms.size());
  std::vector<bool> has_ell(terms.size());
  for (size_t k = 0; k < terms.size(); ++k) {
    bool e;
    PLIR_RETURN_IF_ERROR(parse_term(terms[k], &before[k], &after[k], &e));
    has_ell[k] = e;
    int letters = static_cast<int>(before[k].size() + after[k].size());
    if (ranks[k] >= 0) {
      if ((!e && letters != ranks[k]) || (e && letters > ranks[k]))
        return InvalidArgument(op + ": term \"" + terms[k] + "\" does not match operand " +
                               std::to_string(k) + " of rank " + std::to_string(ranks[k]));
      if (e) ell_dims = std::max(ell_dims, ranks[k] - letters);
    }
  }
  if (ell_dims > 64) return InvalidArgument(op + ": too many dimensions");
  spec.num_labels = 52 + ell_dims;
  for (size_t k = 0; k < terms.size(); ++k) {
    std::vector<int> l = before[k];
    if (has_ell[k]) {
      int n = ranks[k] - static_cast<int>(before[k].size() + after[k].size());
      for (int i = 0; i < n; ++i) l.push_back(52 + ell_dims - n + i);
    }
    l.insert(l.end(), after[k].begin(), after[k].end());
    spec.inputs.push_back(std::move(l));
  }
  if (explicit_out) {
    std::vector<int> b, a;
    bool e;
    PLIR_RETURN_IF_ERROR(parse_term(rhs, &b, &a, &e));
    spec.output = b;
    if (e)
      for (int i = 0; i < ell_dims; ++i) spec.output.push_back(52 + i);
    spec.output.insert(spec.output.end(), a.begin(), a.end());
    std::vector<bool> seen(spec.num_labels, false), used(spec.num_labels, false);
    for (const auto& in : spec.inputs)
      for (int l : in) used[l] = true;
    for (int l : spec.output) {
      if (seen[l])
        return InvalidArgument(op + ": a label repeats in the output of \"" + subscripts + "\"");
      if (!used[l])
        return InvalidArgument(op + ": an output label of \"" + subscripts + "\" is in no operand");
      seen[l] = true;
    }
  } else {
    std::vector<int> count(spec.num_labels, 0);
    for (const auto& in : spec.inputs)
      for (int l : in) ++count[l];
    for (int i = 0; i < ell_dims; ++i) spec.output.push_back(52 + i);
    for (int l = 0; l < 52; ++l)
      if (count[l] == 1) spec.output.push_back(l);
  }
  return spec;
}

}  // namespace plir::internal

#endif  // PLIR_IR_OPS_EINSUM_SUBSCRIPTS_H_
