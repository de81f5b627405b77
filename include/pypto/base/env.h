// The environment variables that change what the native engine compiles (and so the key of
// its kernel cache), one record each: the compile driver folds their values into the cache
// key (src/engines/native/native_compile.cpp), so a kernel compiled under one value is never
// reused under another, in the process or on disk.
#pragma once
#include <string>
#include <vector>

namespace pypto {

struct CacheKeyEnvVar {
  const char* name;
  const char* summary;
};

// Every variable of the registry (docs/isa.md lists them).
const std::vector<CacheKeyEnvVar>& cache_key_env_vars();

// "NAME=value;" for each registered variable that is set (read now, not cached).
std::string cache_key_env();

// PYPTO_NATIVE_ISA: the target the native engine compiles for. "native" (unset or empty:
// -march=native), "avx512_bf16" (x86-64-v4 + AVX512_BF16, no AMX: vdpbf16ps for every BF16
// block), "avx512" (x86-64-v4: AVX-512F/BW/DQ/VL, no AVX512_BF16 / AMX), "avx2"
// (x86-64-v3: AVX2 + FMA + F16C) or "scalar" (x86-64: SSE2 only). Lower targets than the
// CPU's force the lower fast paths (tests run every path the machine has). Returns the
// value; an unknown value is a user error naming the variable and the accepted values.
std::string native_isa();
// The compiler flag of native_isa() ("-march=native", "-march=x86-64-v4", ...).
std::string native_isa_flag();

}  // namespace pypto
