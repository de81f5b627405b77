// How elements of each dtype are read from and written to bytes: the one place where the
// reference library meets the bit layouts (fp16/bf16 via base/fp16.h, integer wrapping).
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "pypto/base/fp16.h"
#include "pypto/base/fp8.h"
#include "pypto/isa/reference.h"

namespace pypto::isa {

// The narrow dtypes no op executes (FP8E8M0, HF8, the 4-bit ones): type checks refuse them
// before an engine sees them, so reaching here is a compiler bug.
[[noreturn]] static void no_codec(DataType t) {
  throw std::logic_error(std::string("internal error: no element codec for ") + dtype_name(t) +
                         " (the op's type check should have refused it)");
}

namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// float -> integer type T: truncation toward zero, saturating at T's range, NaN -> 0.
template <typename T>
T saturate(double v) {
  if (std::isnan(v)) return 0;
  const double d = std::trunc(v);
  if (d <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (d >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(d);
}

}  // namespace

float read_float(const uint8_t* p, DataType t) {
  switch (t) {
    case DataType::FP32: return load<float>(p);
    case DataType::FP16: return fp16_to_float(load<uint16_t>(p));
    case DataType::BF16: return bf16_to_float(load<uint16_t>(p));
    case DataType::FP8E4M3FN: return static_cast<float>(fp8_to_double(load<uint8_t>(p), kFp8E4M3FN));
    case DataType::FP8E5M2: return static_cast<float>(fp8_to_double(load<uint8_t>(p), kFp8E5M2));
    case DataType::FP8E8M0:
    case DataType::FP4:
    case DataType::HF4:
    case DataType::HF8:
    case DataType::INT4:
    case DataType::UINT4: no_codec(t);
    default: return static_cast<float>(read_int(p, t));
  }
}

int64_t read_int(const uint8_t* p, DataType t) {
  switch (t) {
    case DataType::BOOL: return load<uint8_t>(p) != 0;
    case DataType::INT8: return load<int8_t>(p);
    case DataType::INT16: return load<int16_t>(p);
    case DataType::INT32: return load<int32_t>(p);
    case DataType::INT64:
    case DataType::INDEX:
    case DataType::TASK_ID: return load<int64_t>(p);
    case DataType::UINT8: return load<uint8_t>(p);
    case DataType::UINT16: return load<uint16_t>(p);
    case DataType::UINT32: return load<uint32_t>(p);
    case DataType::UINT64: return static_cast<int64_t>(load<uint64_t>(p));
    default: {
      // Truncates toward zero, saturating: a float outside int64's range (or +-inf) has no
      // int64 value, and converting it would be undefined behaviour. NaN reads as 0.
      const double d = std::trunc(static_cast<double>(read_float(p, t)));
      if (std::isnan(d)) return 0;
      if (d >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
      if (d < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(d);
    }
  }
}

void write_float(uint8_t* p, DataType t, float v) { write_double(p, t, static_cast<double>(v)); }

void write_double(uint8_t* p, DataType t, double v) {
  switch (t) {
    case DataType::FP32: store<float>(p, static_cast<float>(v)); return;  // nearest even
    case DataType::FP16: store<uint16_t>(p, double_to_fp16(v)); return;
    case DataType::BF16: store<uint16_t>(p, double_to_bf16(v)); return;
    case DataType::FP8E4M3FN: store<uint8_t>(p, double_to_fp8(v, kFp8E4M3FN)); return;
    case DataType::FP8E5M2: store<uint8_t>(p, double_to_fp8(v, kFp8E5M2)); return;
    case DataType::BOOL: store<uint8_t>(p, v != 0.0); return;
    case DataType::INT8: store<int8_t>(p, saturate<int8_t>(v)); return;
    case DataType::INT16: store<int16_t>(p, saturate<int16_t>(v)); return;
    case DataType::INT32: store<int32_t>(p, saturate<int32_t>(v)); return;
    case DataType::INT64:
    case DataType::INDEX:
    case DataType::TASK_ID: store<int64_t>(p, saturate<int64_t>(v)); return;
    case DataType::UINT8: store<uint8_t>(p, saturate<uint8_t>(v)); return;
    case DataType::UINT16: store<uint16_t>(p, saturate<uint16_t>(v)); return;
    case DataType::UINT32: store<uint32_t>(p, saturate<uint32_t>(v)); return;
    case DataType::UINT64: store<uint64_t>(p, saturate<uint64_t>(v)); return;
    case DataType::FP8E8M0:
    case DataType::FP4:
    case DataType::HF4:
    case DataType::HF8:
    case DataType::INT4:
    case DataType::UINT4: no_codec(t);
  }
}

void write_int(uint8_t* p, DataType t, int64_t v) {
  // Integers wrap modulo 2^bits (two's complement), as numpy's fixed-width arithmetic does.
  const uint64_t u = static_cast<uint64_t>(v);
  switch (t) {
    case DataType::BOOL: store<uint8_t>(p, v != 0); return;
    case DataType::INT8:
    case DataType::UINT8: store<uint8_t>(p, static_cast<uint8_t>(u)); return;
    case DataType::INT16:
    case DataType::UINT16: store<uint16_t>(p, static_cast<uint16_t>(u)); return;
    case DataType::INT32:
    case DataType::UINT32: store<uint32_t>(p, static_cast<uint32_t>(u)); return;
    case DataType::INT64:
    case DataType::UINT64:
    case DataType::INDEX:
    case DataType::TASK_ID: store<uint64_t>(p, u); return;
    // to FP32: one rounding straight from the int64 (an INT64 past 2^53 would round twice
    // through double).
    case DataType::FP32: store<float>(p, static_cast<float>(v)); return;
    // to the other float dtypes: one rounding (an int64 -> float -> bf16 chain would round
    // twice); int64 -> double is exact below 2^53, which covers every integer dtype but INT64.
    default: write_double(p, t, static_cast<double>(v)); return;
  }
}

// A UINT64 element to a float dtype: its unsigned value (read_int would see 2^63 and up as
// negative), rounded once.
void write_uint64_as_float(uint8_t* dst, DataType t, const uint8_t* src) {
  const uint64_t u = load<uint64_t>(src);
  if (t == DataType::FP32) store<float>(dst, static_cast<float>(u));
  else write_double(dst, t, static_cast<double>(u));
}

void convert_element(uint8_t* dst, DataType dst_t, const uint8_t* src, DataType src_t) {
  if (dst_t == src_t) std::memcpy(dst, src, dtype_bytes(dst_t));
  else if (dtype_is_float(src_t)) write_float(dst, dst_t, read_float(src, src_t));
  else if (src_t == DataType::UINT64 && dtype_is_float(dst_t)) write_uint64_as_float(dst, dst_t, src);
  else write_int(dst, dst_t, read_int(src, src_t));
}

float pad_value(PadValue pad, DataType t) {
  if (pad == PadValue::null || pad == PadValue::zero) return 0.0f;
  const bool hi = pad == PadValue::max;
  switch (t) {
    case DataType::FP32: return hi ? std::numeric_limits<float>::max() : std::numeric_limits<float>::lowest();
    case DataType::FP16: return hi ? 65504.0f : -65504.0f;
    case DataType::BF16: return bf16_to_float(hi ? 0x7f7f : 0xff7f);
    case DataType::INT8: return hi ? 127.0f : -128.0f;
    case DataType::INT16: return hi ? 32767.0f : -32768.0f;
    case DataType::INT32: return hi ? 2147483647.0f : -2147483648.0f;  // saturates on write
    case DataType::UINT8: return hi ? 255.0f : 0.0f;
    case DataType::UINT16: return hi ? 65535.0f : 0.0f;
    case DataType::BOOL: return hi ? 1.0f : 0.0f;
    default: return hi ? 3.0e38f : -3.0e38f;  // 64-bit integers saturate on write
  }
}

}  // namespace pypto::isa
