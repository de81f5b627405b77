// Reference semantics of the cube: acc[M, N] (+)= left[M, K] @ right[K, N] with M, N the
// accumulator's valid shape and K the left tile's valid columns. Float inputs accumulate
// in float (k in order) into an FP32 accumulator; INT8 inputs accumulate into INT32.
#include "pypto/runtime/reference.h"

namespace pypto::runtime {

namespace {

enum class Init { kZero, kAccIn, kBias };

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
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        const int64_t sr = init == Init::kBias ? 0 : m;  // the bias is one row
        if (is_float) {
          float sum = start ? start->get_f(sr, n) : 0.0f;
          for (int64_t k = 0; k < K; ++k) sum += left.get_f(m, k) * right.get_f(k, n);
          acc.set_f(m, n, sum);
        } else {
          int64_t sum = start ? start->get_i(sr, n) : 0;
          for (int64_t k = 0; k < K; ++k) sum += left.get_i(m, k) * right.get_i(k, n);
          acc.set_i(m, n, sum);
        }
      }
    }
  };
}

}  // namespace

void add_matmul_instrs(ReferenceTable& t) {
  t["TMATMUL"] = matmul(Init::kZero);
  t["TMATMUL_ACC"] = matmul(Init::kAccIn);
  t["TMATMUL_BIAS"] = matmul(Init::kBias);
}

}  // namespace pypto::runtime
