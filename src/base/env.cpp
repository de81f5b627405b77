// The registry of environment variables that change the native engine's cache key.
#include "pypto/base/env.h"

#include <cstdlib>

#include "pypto/base/error.h"

namespace pypto {

const std::vector<CacheKeyEnvVar>& cache_key_env_vars() {
  static const std::vector<CacheKeyEnvVar> vars = {
      {"PYPTO_NATIVE_ISA",
       "the target native kernels are compiled for: native (default), avx512_bf16, avx512, avx2 or scalar (docs/isa.md)"},
  };
  return vars;
}

std::string cache_key_env() {
  std::string out;
  for (const auto& v : cache_key_env_vars())
    if (const char* e = std::getenv(v.name); e && *e) out += std::string(v.name) + "=" + e + ";";
  return out;
}

namespace {
struct IsaTarget {
  const char* name;
  const char* flag;
};
constexpr IsaTarget kTargets[] = {
    {"native", "-march=native"},
    {"avx512_bf16", "-march=x86-64-v4 -mavx512bf16"},
    {"avx512", "-march=x86-64-v4"},
    {"avx2", "-march=x86-64-v3"},
    {"scalar", "-march=x86-64"},
};
}  // namespace

std::string native_isa() {
  const char* e = std::getenv("PYPTO_NATIVE_ISA");
  const std::string v = e && *e ? e : "native";
  for (const auto& t : kTargets)
    if (v == t.name) {
#if !defined(__x86_64__)
      if (v != "native")
        fail(ErrorKind::kPlatform, {}, "PYPTO_NATIVE_ISA=" + v + " names an x86-64 target but this host is not x86-64",
             "unset PYPTO_NATIVE_ISA (or set it to native)");
#endif
      return v;
    }
  fail(ErrorKind::kValue, {}, "PYPTO_NATIVE_ISA=" + v + " is not a target the native engine knows",
       "set PYPTO_NATIVE_ISA to native, avx512_bf16, avx512, avx2 or scalar (or unset it)");
}

std::string native_isa_flag() {
  const std::string v = native_isa();
  for (const auto& t : kTargets)
    if (v == t.name) return t.flag;
  return "-march=native";
}

}  // namespace pypto
