// The registry of environment variables pypto reads (include/pypto/base/env.h).
#include "pypto/base/env.h"

#include <cstdlib>

#include "pypto/base/error.h"

namespace pypto {

const std::vector<EnvVar>& env_vars() {
  static const std::vector<EnvVar> vars = {
      {"PYPTO_NATIVE_ISA",
       "the target native kernels are compiled for: native (default), avx512_bf16, avx512, avx2 or scalar (docs/isa.md)",
       true},
      {"PYPTO_ENGINE", "the engine RunConfig() runs on when engine= is not given: native (default) or sim", false},
      {"PYPTO_CACHE_DIR",
       "where compiled kernels are cached (default: $XDG_CACHE_HOME/pypto, else ~/.cache/pypto; `pypto doctor` prints it)",
       false},
      {"XDG_CACHE_HOME", "the kernel cache is $XDG_CACHE_HOME/pypto when PYPTO_CACHE_DIR is not set", false},
      {"PYPTO_CACHE", "0: compile kernels into a temporary directory, never into the cache", false},
      {"PYPTO_INCLUDE_DIR",
       "the pypto headers kernels are compiled against (default: the installed package's include/, else the source tree's)",
       false},
      {"PYPTO_PROGRESS_AFTER",
       "seconds of compiling before the progress line shows on a terminal's stderr (default 1; 0: at once)", false},
      {"PYPTO_FULL_TRACEBACK", "1: errors keep pypto's own traceback frames (for a bug report)", false},
      {"PYPTO_DIST_TRANSPORT",
       "embedded or mpi: the transport of distributed programs (default: mpi when started by mpirun, else embedded)",
       false},
      {"PYPTO_BENCH_MODEL_SIZE", "small: `python -m benchmarks` runs the model layers' --small configuration", false},
  };
  return vars;
}

std::vector<EnvVar> cache_key_env_vars() {
  std::vector<EnvVar> out;
  for (const auto& v : env_vars())
    if (v.cache_key) out.push_back(v);
  return out;
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
