#include "testing/fuzz/mutate.h"

namespace plir::fuzz {

std::string Mutate(std::string s, std::mt19937_64& rng, const std::vector<std::string>& pool,
                   const MutateOptions& options) {
  const int kinds = options.custom ? 8 : 7;
  int edits = 1 + static_cast<int>(rng() % static_cast<uint64_t>(options.max_edits));
  for (int e = 0; e < edits; ++e) {
    size_t pos = s.empty() ? 0 : rng() % s.size();
    switch (rng() % kinds) {
      case 0:
        if (!s.empty()) s[pos] = static_cast<char>(rng());
        break;
      case 1:
        if (options.tokens.empty())
          s.insert(pos, 1, static_cast<char>(rng()));
        else
          s.insert(pos, options.tokens[rng() % options.tokens.size()]);
        break;
      case 2:
        if (!s.empty()) s.erase(pos, 1 + rng() % static_cast<uint64_t>(options.max_erase));
        break;
      case 3:
        s.resize(pos);
        break;
      case 4:
        if (!pool.empty()) {
          const std::string& other = pool[rng() % pool.size()];
          if (!other.empty()) s.insert(pos, other.substr(rng() % other.size(), rng() % 64));
        }
        break;
      case 5:
        if (s.size() > 2) s.insert(pos, s.substr(rng() % s.size(), rng() % 32));
        break;
      case 6:
        s.append(rng() % 16, static_cast<char>(rng()));
        break;
      default:
        options.custom(&s, pos, rng);
    }
  }
  return s;
}

const std::vector<std::string>& PlirTextTokens() {
  static const std::vector<std::string> kTokens = {"(",
                                                   ")",
                                                   "{",
                                                   "}",
                                                   "[",
                                                   "]",
                                                   ",",
                                                   ";",
                                                   "=",
                                                   "%",
                                                   "@",
                                                   "\"",
                                                   ".",
                                                   "<",
                                                   ">",
                                                   "->",
                                                   "dataflow",
                                                   "output",
                                                   "if",
                                                   "else",
                                                   "const",
                                                   "Tensor",
                                                   "x\"",
                                                   "-",
                                                   "1e400",
                                                   "\\",
                                                   "\n",
                                                   "//",
                                                   "#",
                                                   "nn.relu(",
                                                   "match_cast(",
                                                   "Shape[",
                                                   "Prim[",
                                                   "Object",
                                                   "sinfo_args=[",
                                                   "attrs {",
                                                   "def @",
                                                   "extern @",
                                                   "shape[(",
                                                   "prim[",
                                                   "+",
                                                   "*",
                                                   "value=",
                                                   "strided_slice(",
                                                   "fn(",
                                                   "Callable[(",
                                                   ", pure=false]",
                                                   "%f(",
                                                   "fn() { %x }"};
  return kTokens;
}

const std::vector<std::string>& JsonTokens() {
  static const std::vector<std::string> kTokens = {
      "{",   "}",    "[",       "]",   ",",    ":",    "\"", "-1", "0", "18446744073709551615",
      "1e3", "null", "\\u0000", "4.5", "true", "[0,0]"};
  return kTokens;
}

}  // namespace plir::fuzz
