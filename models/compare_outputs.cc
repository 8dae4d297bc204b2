// compare-outputs: compares a run's outputs with the expected ones,
// elementwise, and prints the max absolute and relative error per tensor.
//
//   compare-outputs GOT.safetensors EXPECTED.safetensors [--rtol R] [--atol-frac A]
//                   [--label TEXT]
//
// Each expected tensor is matched by name in GOT (by position when GOT has
// none of that name and both files hold the same number of tensors); dtype
// and shape must be equal. An element passes when
//
//   |got - exp| <= rtol * |exp| + atol_frac * max|exp|     (defaults 1e-3, 1e-4)
//
// max|exp| being over that tensor; a NaN on either side fails. Exit status:
// 0 when every element passes, 1 on a mismatch or a bad file (named), 2 on a
// usage error.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "interpreter/safetensors.h"

namespace plir {
namespace {

std::string Shape(const SafetensorsEntry& e) {
  std::string s = std::string(DataTypeName(e.dtype)) + "[";
  for (size_t i = 0; i < e.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(e.shape[i]);
  return s + "]";
}

int Fail(const std::string& msg) {
  std::cerr << "compare-outputs: " << msg << "\n";
  return 1;
}

int Compare(const std::string& got_path, const std::string& exp_path, double rtol, double atol_frac,
            const std::string& label) {
  auto got = SafetensorsReader::Open(got_path);
  if (!got.ok()) return Fail(got.status().message());
  auto exp = SafetensorsReader::Open(exp_path);
  if (!exp.ok()) return Fail(exp.status().message());
  const auto& ge = (*got)->entries();
  const auto& ee = (*exp)->entries();
  if (ee.empty()) return Fail(exp_path + " holds no tensor");
  bool ok = true;
  for (size_t k = 0; k < ee.size(); ++k) {
    const SafetensorsEntry& e = ee[k];
    int64_t gi = (*got)->header().Find(e.name);
    if (gi < 0 && ge.size() == ee.size()) gi = static_cast<int64_t>(k);
    if (gi < 0)
      return Fail(got_path + " has no tensor '" + e.name + "' (and " + std::to_string(ge.size()) +
                  " tensors where " + exp_path + " has " + std::to_string(ee.size()) + ")");
    const SafetensorsEntry& g = ge[gi];
    if (g.dtype != e.dtype || g.shape != e.shape)
      return Fail(got_path + ": tensor '" + g.name + "' is " + Shape(g) + ", but expected '" +
                  e.name + "' is " + Shape(e));
    auto gt = (*got)->Read(gi);
    if (!gt.ok()) return Fail(gt.status().message());
    auto et = (*exp)->Read(k);
    if (!et.ok()) return Fail(et.status().message());
    int64_t n = et->NumElements();
    double max_exp = 0;
    for (int64_t i = 0; i < n; ++i) max_exp = std::max(max_exp, std::fabs(et->GetDouble(i)));
    double max_abs = 0, max_rel = 0, worst = 0;
    int64_t bad = 0, worst_i = -1;
    for (int64_t i = 0; i < n; ++i) {
      double x = gt->GetDouble(i), y = et->GetDouble(i);
      double err = std::fabs(x - y);
      double bound = rtol * std::fabs(y) + atol_frac * max_exp;
      if (std::isnan(x) || std::isnan(y)) err = INFINITY;
      max_abs = std::max(max_abs, err);
      if (y != 0) max_rel = std::max(max_rel, err / std::fabs(y));
      double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0);
      if (ratio > worst || worst_i < 0) worst = ratio, worst_i = i;
      if (!(err <= bound)) ++bad;
    }
    char line[512];
    std::snprintf(line, sizeof line,
                  "%s%s: %lld elements, max|exp| %.4g, max abs err %.3g, max rel err %.3g, "
                  "worst err/bound %.3g at %lld, %lld outside the tolerance",
                  label.empty() ? "" : (label + ": ").c_str(), e.name.c_str(),
                  static_cast<long long>(n), max_exp, max_abs, max_rel, worst,
                  static_cast<long long>(worst_i), static_cast<long long>(bad));
    std::cout << line << "\n";
    if (bad) {
      std::snprintf(line, sizeof line, "  at %lld: got %.9g, expected %.9g",
                    static_cast<long long>(worst_i), gt->GetDouble(worst_i),
                    et->GetDouble(worst_i));
      std::cout << line << "\n";
      ok = false;
    }
  }
  std::cout << (ok ? "PASS" : "FAIL") << " (|got-exp| <= " << rtol << "*|exp| + " << atol_frac
            << "*max|exp|)\n";
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace plir

int main(int argc, char** argv) {
  CLI::App app{"compare-outputs: elementwise comparison of two safetensors files"};
  std::string got, exp, label;
  double rtol = 1e-3, atol_frac = 1e-4;
  app.add_option("got", got, "the run's outputs")->required();
  app.add_option("expected", exp, "the expected outputs")->required();
  app.add_option("--rtol", rtol, "relative tolerance (default 1e-3)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--atol-frac", atol_frac,
                 "absolute tolerance as a fraction of max|expected| (default 1e-4)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--label", label, "prefix of each printed line");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return plir::Compare(got, exp, rtol, atol_frac, label);
  } catch (const std::exception& e) {
    std::cerr << "compare-outputs: internal error: " << e.what() << "\n";
    return 1;
  }
}
