// The environment variables pypto reads, one record each: what it does and whether it changes
// what the native engine compiles. Those that do are folded into the kernel cache key by the
// compile driver (src/engines/native/native_compile.cpp), so a kernel compiled under one value
// is never reused under another, in the process or on disk. docs/tools.md ("Environment
// variables") lists them; tests/structure/test_env_vars.py fails on a PYPTO_ variable that the
// code names but this registry does not.
#pragma once
#include <string>
#include <vector>

namespace pypto {

struct EnvVar {
  const char* name;
  const char* summary;
  bool cache_key;  // part of the native engine's kernel cache key
};

// Every variable of the registry, in the order docs/tools.md lists them.
const std::vector<EnvVar>& env_vars();
// The registry's variables that change the kernel cache key.
std::vector<EnvVar> cache_key_env_vars();

// "NAME=value;" for each cache-key variable that is set (read now, not cached).
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
