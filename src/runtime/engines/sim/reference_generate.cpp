// Reference semantics of generators: TCI (iota over the valid region in row-major order),
// TTRI (triangular 0/1 mask) and TRANDOM, a counter-based generator: element i of the
// valid region (row-major) is splitmix64(seed * 0x9E3779B97F4A7C15 + counter + i), so a
// run is reproducible from (seed, counter) alone and independent of the tile shape's
// padding. Floats take the top p bits (p = 24 fp32, 11 fp16, 8 bf16: the significand) as
// k / 2^p, exact and in [0, 1); integers wrap the 64 bits.
#include <cmath>

#include "pypto/runtime/reference.h"

namespace pypto::runtime {

namespace {

uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void tci(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const ScalarValue s = call.ins.at(0).scalar;
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) {
      const int64_t i = r * dst.valid_cols + c;
      if (dst.is_float()) dst.set_d(r, c, s.as_double() + static_cast<double>(i));
      else dst.set_i(r, c, s.as_int() + i);
    }
}

// attrs {"upper": true} keeps c - r >= diagonal; the default (lower) keeps c - r <= diagonal.
void ttri(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const int64_t diagonal = call.ins.at(0).scalar.as_int();
  auto it = call.instr.attrs.find("upper");
  const bool upper = it != call.instr.attrs.end() && std::holds_alternative<bool>(it->second) && std::get<bool>(it->second);
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) {
      const bool one = upper ? c - r >= diagonal : c - r <= diagonal;
      dst.set_i(r, c, one ? 1 : 0);
    }
}

void trandom(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const uint64_t seed = static_cast<uint64_t>(call.ins.at(0).scalar.as_int());
  const uint64_t counter = static_cast<uint64_t>(call.ins.at(1).scalar.as_int());
  // Floats: the top p bits as k / 2^p, p the significand width of dst's dtype, so that the
  // value is exact in the dtype and below 1 (24 bits rounded to fp16 could give 1.0).
  const int bits = dst.dtype == DataType::FP16 ? 11 : dst.dtype == DataType::BF16 ? 8 : 24;
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) {
      const uint64_t i = static_cast<uint64_t>(r * dst.valid_cols + c);
      const uint64_t z = splitmix64(seed * 0x9E3779B97F4A7C15ull + counter + i);
      if (dst.is_float()) dst.set_d(r, c, std::ldexp(static_cast<double>(z >> (64 - bits)), -bits));
      else dst.set_i(r, c, static_cast<int64_t>(z));
    }
}

}  // namespace

void add_generate_instrs(ReferenceTable& t) {
  t["TCI"] = tci;
  t["TTRI"] = ttri;
  t["TRANDOM"] = trandom;
}

}  // namespace pypto::runtime
