"""The vector fp16 / bf16 conversions of the optimised library (include/pypto/isa/optimized/
half.h) against the scalar codec of pypto/base/fp16.h (the reference library's), bit for bit:
every fp16 / bf16 pattern widened, and fp32 patterns across the whole range narrowed, for
each code path: portable (4 lanes, no F16C), AVX2 + F16C (8 lanes) and AVX-512 (16 lanes),
where this CPU runs them."""

import os
import shutil
import subprocess

import pytest
from pypto import _core

PROGRAM = r"""
#include <cstdio>
#include "pypto/isa/optimized/tile_ops.h"
using namespace pto_opt;
int main() {
  long bad = 0;
  for (unsigned h0 = 0; h0 < 65536; h0 += W) {
    unsigned short in[W];
    for (int i = 0; i < W; ++i) in[i] = h0 + i;
    vf a = ld(reinterpret_cast<const f16*>(in)), b = ld(reinterpret_cast<const bf16*>(in));
    for (int i = 0; i < W; ++i) {
      float ra = pypto::fp16_to_float(in[i]), rb = pypto::bf16_to_float(in[i]);
      if (!(a[i] == ra || (a[i] != a[i] && ra != ra))) ++bad;  // F16C quiets signalling NaNs
      if (pypto::float_bits(b[i]) != pypto::float_bits(rb)) ++bad;
    }
  }
  for (unsigned long u0 = 0; u0 < (1ul << 32); u0 += 4099ul * W) {
    float in[W];
    for (int i = 0; i < W; ++i) in[i] = pypto::float_from_bits((unsigned)(u0 + i * 4099ul));
    f16 o1[W];
    bf16 o2[W];
    st(o1, ld(in));
    st(o2, ld(in));
    for (int i = 0; i < W; ++i) {
      if (o1[i].bits != pypto::float_to_fp16(in[i])) ++bad;
      if (o2[i].bits != pypto::float_to_bf16(in[i])) ++bad;
    }
  }
  std::printf("W=%d bad=%ld\n", W, bad);
  return bad != 0;
}
"""


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return set(next(line for line in f if line.startswith("flags")).split())
    except (OSError, StopIteration):
        return set()


@pytest.mark.parametrize("march,lanes,needs", [("x86-64", 4, set()), ("haswell", 8, {"avx2", "f16c"}),
                                               ("skylake-avx512", 16, {"avx512f", "f16c"})])
def test_vector_half_conversions_match_fp16_h(tmp_path, march, lanes, needs):
    cxx = shutil.which(os.environ.get("CXX", "c++"))
    if cxx is None or os.uname().machine != "x86_64":
        pytest.skip("needs an x86-64 C++ compiler")
    if not needs <= cpu_flags():
        pytest.skip(f"this CPU lacks {sorted(needs - cpu_flags())}")
    src, exe = tmp_path / "t.cpp", tmp_path / "t"
    src.write_text(PROGRAM)
    subprocess.run([cxx, "-O2", "-std=c++17", f"-march={march}", "-I", _core.native_include_dir(), str(src), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.stdout.strip() == f"W={lanes} bad=0", out.stdout
