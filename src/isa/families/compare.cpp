// The conversion and compare/select families: TCVT with its round modes, TCMP / TCMPS
// producing a packed mask (one bit per element), and TSEL / TSELS choosing by one. The mask
// layout is defined in pypto/isa/instructions.h (packed predicate masks). Records with their
// reference functions; the native engine's paths for these are hand-written (convert_path,
// mask_path in src/engines/native/native_codegen.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "families.h"
#include "pypto/base/fp16.h"
#include "pypto/base/fp8.h"

namespace pypto::isa::families {

namespace {

// TCVT round modes. "none" means the hardware default, round to nearest even.
enum class Round { kRint, kRound, kFloor, kCeil, kTrunc, kOdd };

Round round_mode(const TileCall& call) {
  const std::string m = call.attr_string("mode", "none");
  if (m == "none" || m == "rint") return Round::kRint;
  if (m == "round") return Round::kRound;
  if (m == "floor") return Round::kFloor;
  if (m == "ceil") return Round::kCeil;
  if (m == "trunc") return Round::kTrunc;
  if (m == "odd") return Round::kOdd;
  call.fail_runtime("unknown round mode '" + m + "'", "use none, rint, round, floor, ceil, trunc or odd");
}

// x rounded to an integral value. kRound breaks ties away from zero, kRint to even, kOdd
// picks the odd neighbour of a non-integer.
double round_to_integer(double x, Round mode) {
  switch (mode) {
    case Round::kRint: return std::nearbyint(x);  // default FE_TONEAREST: ties to even
    case Round::kRound: return std::round(x);
    case Round::kFloor: return std::floor(x);
    case Round::kCeil: return std::ceil(x);
    case Round::kTrunc: return std::trunc(x);
    case Round::kOdd: {
      const double lo = std::floor(x);
      if (lo == x) return x;
      return std::fmod(lo, 2.0) != 0 ? lo : lo + 1;
    }
  }
  return x;
}

// x narrowed to the 16-bit float format `t` (FP16 or BF16) under `mode`, as bits. Finds the
// two representable neighbours of |x| and picks one; magnitudes are monotonic in the bits.
uint16_t narrow_to_half(float x, DataType t, Round mode) {
  auto encode = [t](float v) { return t == DataType::FP16 ? float_to_fp16(v) : float_to_bf16(v); };
  auto decode = [t](uint16_t b) { return t == DataType::FP16 ? fp16_to_float(b) : bf16_to_float(b); };
  const uint16_t nearest = encode(x);
  if (std::isnan(x) || std::isinf(x) || mode == Round::kRint) return nearest;
  const bool negative = std::signbit(x);
  const float ax = std::fabs(x);
  const uint16_t m = encode(ax);
  if (decode(m) == ax) return nearest;  // exact
  const uint16_t lo = decode(m) < ax ? m : static_cast<uint16_t>(m - 1);
  const uint16_t hi = static_cast<uint16_t>(lo + 1);
  uint16_t pick = lo;
  switch (mode) {
    case Round::kTrunc: pick = lo; break;
    case Round::kFloor: pick = negative ? hi : lo; break;
    case Round::kCeil: pick = negative ? lo : hi; break;
    case Round::kOdd: pick = (lo & 1) ? lo : hi; break;
    case Round::kRound: {
      // Past the largest finite value hi is infinity: measure to 2^(emax + 1) instead, so
      // that magnitudes from the largest finite value plus half an ulp up round to
      // infinity, as IEEE roundTiesToAway does.
      const double top = t == DataType::FP16 ? 65536.0 : 0x1p128;
      const double hi_value = std::isinf(decode(hi)) ? top : static_cast<double>(decode(hi));
      const double below = static_cast<double>(ax) - decode(lo), above = hi_value - ax;
      pick = below < above ? lo : hi;  // ties go up in magnitude: away from zero
      break;
    }
    case Round::kRint: break;
  }
  return static_cast<uint16_t>(pick | (negative ? 0x8000 : 0));
}

void convert(const TileCall& call, const uint8_t* src, DataType st, uint8_t* dst, DataType dt, Round mode) {
  if (!dtype_is_float(st)) {  // integer / bool source: wrap to integers, nearest float otherwise
    if (st == DataType::UINT64 && dtype_is_float(dt)) write_uint64_as_float(dst, dt, src);
    else write_int(dst, dt, read_int(src, st));
    return;
  }
  const float x = read_float(src, st);
  if (dt == DataType::FP8E4M3FN || dt == DataType::FP8E5M2) {  // one rounding from the (exact) float
    if (st == dt) *dst = *src;
    else *dst = double_to_fp8(x, dt == DataType::FP8E4M3FN ? kFp8E4M3FN : kFp8E5M2, static_cast<int>(mode));
  } else if (dt == DataType::FP16 || dt == DataType::BF16) {
    if (st == dt) std::memcpy(dst, src, 2);
    else {
      const uint16_t bits = narrow_to_half(x, dt, mode);
      std::memcpy(dst, &bits, 2);
    }
  } else if (dtype_is_float(dt) || dt == DataType::BOOL) {
    write_float(dst, dt, x);  // widening to FP32 is exact
  } else {
    // float -> integer: round under the mode, then saturate to the integer range (NaN -> 0).
    write_float(dst, dt, static_cast<float>(round_to_integer(x, mode)));
  }
}

void tcvt(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& src = call.in_tile(0);
  call.require_covers(src, dst.valid_rows, dst.valid_cols);
  const Round mode = round_mode(call);
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) convert(call, src.at(r, c), src.dtype, dst.at(r, c), dst.dtype, mode);
}

template <typename T>
bool compare(const std::string& cmp, T a, T b) {
  if (cmp == "EQ") return a == b;
  if (cmp == "NE") return a != b;
  if (cmp == "LT") return a < b;
  if (cmp == "LE") return a <= b;
  if (cmp == "GT") return a > b;
  return a >= b;  // GE
}

// Packed masks: element (r, c) is bit c % 8 of byte (r, c / 8) of the UINT8 mask tile.
bool mask_bit(const TileRef& mask, int64_t r, int64_t c) { return (*mask.at(r, c / 8) >> (c % 8)) & 1; }

// Fails unless `mask` holds the bits of a rows x cols region.
void require_mask_covers(const TileCall& call, const TileRef& mask, int64_t rows, int64_t cols) {
  const int64_t bytes = isa::mask_row_bytes(cols);
  if (rows > mask.rows || bytes > mask.cols)
    call.fail_runtime("mask tile '" + mask.name + "' (" + std::to_string(mask.rows) + "x" + std::to_string(mask.cols) +
                          " bytes) is smaller than the " + std::to_string(rows) + "x" + std::to_string(bytes) +
                          " bytes that pack a " + std::to_string(rows) + "x" + std::to_string(cols) + " region",
                      "give the mask tile at least ceil(cols / 8) columns (pl.cmp makes rows x ceil(cols / 8))");
}

// mask = a <cmp> b where b is a tile (TCMP) or a scalar (TCMPS), over a's valid region:
// rows 0..vr-1, bytes 0..ceil(vc/8)-1 of the mask are written, bits past vc are 0.
void tcmp(const TileCall& call) {
  const TileRef& mask = call.out_tile();
  const TileRef& a = call.in_tile(0);
  const std::string cmp = call.attr_string("cmp", "");
  if (cmp != "EQ" && cmp != "NE" && cmp != "LT" && cmp != "LE" && cmp != "GT" && cmp != "GE")
    call.fail_runtime("unknown comparison '" + cmp + "'", "set attrs {\"cmp\": EQ|NE|LT|LE|GT|GE}");
  const bool scalar = call.ins.at(1).kind == isa::Operand::kScalar;
  const int64_t rows = a.valid_rows, cols = a.valid_cols;
  require_mask_covers(call, mask, rows, cols);
  if (!scalar) call.require_covers(call.in_tile(1), rows, cols);
  const ScalarValue s = call.ins.at(1).scalar;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t byte = 0; byte < isa::mask_row_bytes(cols); ++byte) {
      uint8_t bits = 0;
      for (int64_t c = byte * 8; c < std::min(cols, byte * 8 + 8); ++c) {
        const bool v = a.is_float() ? compare(cmp, a.get_f(r, c), scalar ? static_cast<float>(s.as_double())
                                                                          : call.in_tile(1).get_f(r, c))
                                    : compare(cmp, a.get_i(r, c), scalar ? s.as_int() : call.in_tile(1).get_i(r, c));
        bits = static_cast<uint8_t>(bits | (v ? 1u : 0u) << (c % 8));
      }
      *mask.at(r, byte) = bits;
    }
  }
}

// TSEL: dst = mask ? a : b over dst's valid region.
void tsel(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& mask = call.in_tile(0);
  const TileRef& a = call.in_tile(1);
  const TileRef& b = call.in_tile(2);
  require_mask_covers(call, mask, dst.valid_rows, dst.valid_cols);
  for (const TileRef* t : {&a, &b}) call.require_covers(*t, dst.valid_rows, dst.valid_cols);
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) {
      const TileRef& from = mask_bit(mask, r, c) ? a : b;
      convert_element(dst.at(r, c), dst.dtype, from.at(r, c), from.dtype);
    }
}

// TSELS: dst = mask ? a : s.
void tsels(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& mask = call.in_tile(0);
  const TileRef& a = call.in_tile(1);
  const ScalarValue s = call.ins.at(2).scalar;
  require_mask_covers(call, mask, dst.valid_rows, dst.valid_cols);
  call.require_covers(a, dst.valid_rows, dst.valid_cols);
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) {
      if (mask_bit(mask, r, c)) convert_element(dst.at(r, c), dst.dtype, a.at(r, c), a.dtype);
      else if (dst.is_float()) dst.set_d(r, c, s.as_double());  // rounded once to dst's dtype
      else dst.set_i(r, c, s.as_int());
    }
}

}  // namespace

// TCVT converts between every dtype the vector unit moves, FP8 included.
const std::vector<DataType> kConvertDtypes = {FP32, FP16, BF16, INT32, INT16, INT8, UINT8, UINT16, UINT32, INT64, UINT64,
                                              BOOL, FP8E4M3FN, FP8E5M2};

void add_convert_family(std::vector<InstrDef>& t) {
  t.push_back(vector_instr("TCVT", InstrFamily::kConvert, "T", "T", kConvertDtypes, kPassDefault,
                           "dst = convert(src) with round mode none|rint|round|floor|ceil|trunc|odd", tcvt));
}

void add_compare_family(std::vector<InstrDef>& t) {
  auto add = [&](const char* name, const char* ins, const std::vector<DataType>& dt, CostFigures cost,
                 const char* summary, ReferenceFn ref, MaskUse mask) {
    InstrDef d = vector_instr(name, InstrFamily::kCompare, "T", ins, dt, cost, summary, std::move(ref));
    d.mask = mask;
    if (mask == MaskUse::kWritesOut0) d.typed = TypedOperand::kIn0;  // the compared source, not the mask
    t.push_back(std::move(d));
  };
  // Dtypes of TCMP / TCMPS are those of the compared source; the mask is a packed UINT8 tile.
  add("TCMP", "TT", kNumeric, kBinaryDefault, "packed mask (UINT8, 1 bit per element) = a <cmp> b over a's valid region",
      tcmp, MaskUse::kWritesOut0);
  add("TCMPS", "TS", kNumeric, kScalarDefault, "packed mask (UINT8, 1 bit per element) = a <cmp> s over a's valid region",
      tcmp, MaskUse::kWritesOut0);
  add("TSEL", "TTT", kAny, kBinaryDefault,
      "dst[r, c] = bit (r, c) of the packed mask ? a[r, c] : b[r, c], over dst's valid region", tsel, MaskUse::kReadsIn0);
  add("TSELS", "TTS", kAny, kBinaryDefault,
      "dst[r, c] = bit (r, c) of the packed mask ? a[r, c] : s, over dst's valid region", tsels, MaskUse::kReadsIn0);
}

}  // namespace pypto::isa::families
