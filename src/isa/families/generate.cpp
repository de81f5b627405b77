// The fill (TEXPANDS) and generator families. Reference semantics of generators: TCI (iota over the valid region in row-major order,
// or counting down with attrs {"descending": true}), TTRI (triangular 0/1 mask) and
// TRANDOM, the counter-based Philox4x32 generator (Salmon et al., "Parallel random numbers:
// as easy as 1, 2, 3"): inputs key0, key1, counter0..counter3 (32-bit words, counter0 the
// lowest), attrs {"rounds": R} (default 10). Element i of the valid region (row-major) is
// word i % 4 of Philox4x32-R(counter + i / 4, key), the counter a 128-bit little-endian
// integer; so a run is reproducible from (key, counter) alone and independent of the tile
// shape's padding. Integer dtypes take the 32-bit word (wrapped to the element width);
// floats take its top p bits (p = 24 fp32, 11 fp16, 8 bf16: the significand) as k / 2^p,
// exact and in [0, 1).
#include <cmath>

#include "families.h"

namespace pypto::isa::families {

namespace {

// Philox4x32-R of one 128-bit counter: R rounds, the key bumped by the Weyl constants
// between rounds.
void philox4x32(uint32_t ctr[4], uint32_t k0, uint32_t k1, int64_t rounds) {
  for (int64_t round = 0; round < rounds; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const uint64_t p0 = uint64_t{0xD2511F53u} * ctr[0];
    const uint64_t p1 = uint64_t{0xCD9E8D57u} * ctr[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    const uint32_t next[4] = {hi1 ^ ctr[1] ^ k0, lo1, hi0 ^ ctr[3] ^ k1, lo0};
    for (int w = 0; w < 4; ++w) ctr[w] = next[w];
  }
}

bool flag_attr(const TileCall& call, const char* name) {
  auto it = call.instr.attrs.find(name);
  if (it == call.instr.attrs.end()) return false;
  if (auto* b = std::get_if<bool>(&it->second)) return *b;
  if (auto* i = std::get_if<int64_t>(&it->second)) return *i != 0;
  return false;
}

void tci(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const ScalarValue s = call.ins.at(0).scalar;
  const bool descending = flag_attr(call, "descending");
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) {
      const int64_t i = descending ? -(r * dst.valid_cols + c) : r * dst.valid_cols + c;
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
  uint32_t word[6];
  for (int k = 0; k < 6; ++k) word[k] = static_cast<uint32_t>(call.ins.at(k).scalar.as_int());
  int64_t rounds = 10;
  auto it = call.instr.attrs.find("rounds");
  if (it != call.instr.attrs.end())
    if (auto* v = std::get_if<int64_t>(&it->second)) rounds = *v;
  // Floats: the top p bits as k / 2^p, p the significand width of dst's dtype, so that the
  // value is exact in the dtype and below 1 (24 bits rounded to fp16 could give 1.0).
  const int bits = dst.dtype == DataType::FP16 ? 11 : dst.dtype == DataType::BF16 ? 8 : 24;
  uint32_t block[4] = {0, 0, 0, 0};
  uint64_t block_id = ~uint64_t{0};
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) {
      const uint64_t i = static_cast<uint64_t>(r * dst.valid_cols + c);
      if (i / 4 != block_id) {
        block_id = i / 4;
        // counter + block_id over 128 bits, counter0 the lowest word.
        uint64_t carry = block_id;
        for (int w = 0; w < 4; ++w) {
          const uint64_t sum = uint64_t{word[2 + w]} + (carry & 0xFFFFFFFFu);
          block[w] = static_cast<uint32_t>(sum);
          carry = (carry >> 32) + (sum >> 32);
        }
        philox4x32(block, word[0], word[1], rounds);
      }
      const uint32_t z = block[i % 4];
      if (dst.is_float()) dst.set_d(r, c, std::ldexp(static_cast<double>(z >> (32 - bits)), -bits));
      else dst.set_i(r, c, static_cast<int64_t>(z));
    }
}

void texpands(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const ScalarValue s = call.ins.at(0).scalar;
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c)
      if (dst.is_float()) dst.set_d(r, c, s.as_double());  // rounded once to dst's dtype
      else dst.set_i(r, c, s.as_int());
}

}  // namespace

// The fill family: TEXPANDS (dst = scalar over the valid region).
void add_fill_family(std::vector<InstrDef>& t) {
  t.push_back(vector_instr("TEXPANDS", InstrFamily::kFill, "T", "S", kAny, kScalarDefault, "dst = scalar", texpands));
}

void add_generate_family(std::vector<InstrDef>& t) {
  using F = InstrFamily;
  // TRANDOM writes Philox's 32-bit words (pl.tile.random's default dtype is UINT32); moved
  // to and from global memory as such.
  const std::vector<DataType> random_dtypes = {FP32, FP16, BF16, INT32, INT16, INT8, UINT8, UINT16, UINT32};
  t.push_back(vector_instr("TCI", F::kGenerate, "T", "S", kNumeric, kScalarDefault, "dst[r, c] = s + r * valid_cols + c (iota)", tci));
  t.push_back(vector_instr("TTRI", F::kGenerate, "T", "S", kAny, kScalarDefault,
                           "dst[r, c] = 1 if c - r <= s (lower) / c - r >= s (upper) else 0", ttri));
  t.push_back(vector_instr("TRANDOM", F::kGenerate, "T", "SSSSSS", random_dtypes, kPassDefault,
      "dst = Philox4x32 (key0, key1, counter0..3; attrs{rounds}, default 10): element i is word i % 4 of block "
      "counter + i / 4; integers the 32-bit word, floats its top significand bits / 2^p in [0, 1)", trandom));
}

}  // namespace pypto::isa::families
