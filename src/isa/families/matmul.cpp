// Reference semantics of the cube: acc[M, N] (+)= left[M, K] @ right[K, N] with M, N the
// accumulator's valid shape and K the left tile's valid columns. Float inputs accumulate
// in float (k in order) into an FP32 accumulator; INT8 inputs accumulate into INT32.
#include <string>

#include "families.h"

namespace pypto::isa::families {

namespace {

enum class Init { kZero, kAccIn, kBias };

// Operand layouts (attrs {"left_layout" / "right_layout": "ND" | "DN" | "NZ"}): ND is
// row-major; DN column-major (element (r, c) at c * rows + r); NZ fractal: 16 x C0 boxes
// (C0 = 32 bytes of elements), boxes ordered down the rows first, row-major inside a box.
enum class Layout { kND, kDN, kNZ };

struct LaidOut {
  const TileRef& t;
  Layout layout;
  const uint8_t* at(int64_t r, int64_t c) const {
    const int64_t b = dtype_bytes(t.dtype);
    switch (layout) {
      case Layout::kND: return t.at(r, c);
      case Layout::kDN: return t.data + (c * t.rows + r) * b;
      case Layout::kNZ: {
        const int64_t c0 = 32 / b;
        const int64_t box = (c / c0) * (t.rows / 16) + r / 16;
        return t.data + (box * 16 * c0 + (r % 16) * c0 + c % c0) * b;
      }
    }
    return t.at(r, c);
  }
  float f(int64_t r, int64_t c) const { return read_float(at(r, c), t.dtype); }
  int64_t i(int64_t r, int64_t c) const { return read_int(at(r, c), t.dtype); }
};

Layout layout_of(const TileCall& call, const char* key, const TileRef& t) {
  const std::string s = call.attr_string(key, "ND");
  if (s == "ND") return Layout::kND;
  if (s == "DN") return Layout::kDN;
  if (s == "NZ") {
    const int64_t c0 = 32 / dtype_bytes(t.dtype);
    if (t.rows % 16 != 0 || t.cols % c0 != 0)
      call.fail_runtime("tile '" + t.name + "' (" + std::to_string(t.rows) + "x" + std::to_string(t.cols) +
                            ") cannot hold NZ fractal boxes of 16x" + std::to_string(c0),
                        "make rows a multiple of 16 and cols a multiple of " + std::to_string(c0));
    return Layout::kNZ;
  }
  call.fail_runtime(std::string("unknown ") + key + " '" + s + "'", "use ND, DN or NZ");
}

ReferenceFn matmul(Init init) {
  return [init](const TileCall& call) {
    const TileRef& acc = call.out_tile();
    const size_t first = init == Init::kAccIn ? 1 : 0;
    const TileRef& left = call.in_tile(first);
    const TileRef& right = call.in_tile(first + 1);
    const int64_t M = acc.valid_rows, N = acc.valid_cols, K = left.valid_cols;
    const bool is_float = dtype_is_float(left.dtype);
    if (dtype_is_float(right.dtype) != is_float)
      call.fail_runtime(std::string("left is ") + dtype_name(left.dtype) + " but right is " + dtype_name(right.dtype),
                        "give both operands the same dtype");
    const DataType want = is_float ? DataType::FP32 : DataType::INT32;
    if (acc.dtype != want)
      call.fail_runtime("accumulator tile '" + acc.name + "' is " + dtype_name(acc.dtype) + ", " +
                            dtype_name(left.dtype) + " operands accumulate into " + dtype_name(want),
                        std::string("declare the accumulator as ") + dtype_name(want));
    call.require_covers(left, M, K);
    call.require_covers(right, K, N);
    const TileRef* start = init == Init::kAccIn ? &call.in_tile(0) : init == Init::kBias ? &call.in_tile(2) : nullptr;
    if (init == Init::kAccIn) call.require_covers(*start, M, N);
    if (init == Init::kBias) call.require_covers(*start, 1, N);
    const LaidOut L{left, layout_of(call, "left_layout", left)}, R{right, layout_of(call, "right_layout", right)};
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        const int64_t sr = init == Init::kBias ? 0 : m;  // the bias is one row
        if (is_float) {
          float sum = start ? start->get_f(sr, n) : 0.0f;
          for (int64_t k = 0; k < K; ++k) sum += L.f(m, k) * R.f(k, n);
          acc.set_f(m, n, sum);
        } else {
          int64_t sum = start ? start->get_i(sr, n) : 0;
          for (int64_t k = 0; k < K; ++k) sum += L.i(m, k) * R.i(k, n);
          acc.set_i(m, n, sum);
        }
      }
    }
  };
}

}  // namespace

// Dtypes are those of left/right; the accumulator is FP32 (INT32 for INT8). Costs: the cube
// formula of instr_cost_cycles (src/isa/instructions.cpp). The native engine's matmul paths
// are hand-written (src/engines/native/native_codegen.cpp).
void add_matmul_family(std::vector<InstrDef>& t) {
  const std::vector<DataType> cube_dtypes = {FP16, BF16, FP32, INT8};
  const CostFigures cube{0, 0, 0, 0, true};
  // `typed`: the dtypes are left's, operand 0, or operand 1 after the accumulator of the _ACC forms.
  auto add = [&](const char* name, const char* ins, const char* summary, ReferenceFn ref,
                 TypedOperand typed = TypedOperand::kIn0) {
    InstrDef d{name, InstrFamily::kMatmul, Pipe::M, "T", ins, cube_dtypes, cube, summary, {MemorySpace::Acc}};
    d.reference = std::move(ref);
    d.typed = typed;
    t.push_back(std::move(d));
  };
  add("TMATMUL", "TT", "acc = left @ right", matmul(Init::kZero));
  add("TMATMUL_ACC", "TTT", "acc = acc_in + left @ right", matmul(Init::kAccIn), TypedOperand::kIn1);
  add("TMATMUL_BIAS", "TTT", "acc = left @ right + bias (1 x N)", matmul(Init::kBias));
  // The M = 1 case: the accumulator's valid rows pick M.
  add("TGEMV", "TT", "acc[1, N] = left[1, K] @ right", matmul(Init::kZero));
  add("TGEMV_ACC", "TTT", "acc[1, N] = acc_in + left[1, K] @ right", matmul(Init::kAccIn), TypedOperand::kIn1);
  add("TGEMV_BIAS", "TTT", "acc[1, N] = left[1, K] @ right + bias", matmul(Init::kBias));
}

}  // namespace pypto::isa::families
