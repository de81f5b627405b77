// The reduction family: TROW* reduce each row of the source's valid region to dst[r, 0];
// TCOL* reduce each column to dst[0, c]. Reference semantics: the order is the chip's (docs/isa.md,
// "Reduction order"): without a scratch tile the elements combine sequentially in index
// order, acc = acc op x[k]; with one (ins[1], PyPTO's tmp_tile) in a binary tree that
// folds the upper half onto the lower half until one element is left. Floats accumulate
// in the element dtype: every step is rounded to fp16 / bf16 (fp32 arithmetic on widened
// operands, rounded once: the correctly rounded step). Integers accumulate in int64,
// wrapped on store (wrapping sums and products do not depend on the order). Max / min do
// not depend on the order except for the sign of a zero result, which is that of the
// last zero in index order in both orders.
#include <vector>

#include "families.h"
#include "pypto/isa/element_ops.h"

namespace pypto::isa::families {

namespace {
using namespace isa::element_ops;

// v rounded to the element type t (identity for FP32).
float round_to(DataType t, float v) {
  if (t == DataType::FP32) return v;
  uint8_t bytes[8];
  write_float(bytes, t, v);
  return read_float(bytes, t);
}

// Binary tree over v[0, n): while n > 1, v[i] = v[i] op v[i + ceil(n / 2)] for i < n / 2,
// then n = ceil(n / 2). `step` applies op and rounds.
template <typename V, typename Step>
V tree(std::vector<V>& v, Step step) {
  for (size_t n = v.size(); n > 1;) {
    const size_t keep = (n + 1) / 2, h = n / 2;
    for (size_t i = 0; i < h; ++i) v[i] = step(v[i], v[i + keep]);
    n = keep;
  }
  return v[0];
}

template <typename Op>
ReferenceFn reduce(Op op, bool along_rows, bool order_free) {
  return [op, along_rows, order_free](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    const TileRef& src = call.in_tile(0);
    const bool binary_tree = call.ins.size() > 1 && !order_free;
    const int64_t outer = along_rows ? src.valid_rows : src.valid_cols;
    const int64_t inner = along_rows ? src.valid_cols : src.valid_rows;
    if ((along_rows ? dst.rows : dst.cols) < outer)
      call.fail_runtime("destination tile '" + dst.name + "' has room for " +
                        std::to_string(along_rows ? dst.rows : dst.cols) + " results, the source has " +
                        std::to_string(outer) + " valid " + (along_rows ? "rows" : "columns"));
    if (inner == 0) call.fail_runtime("source tile '" + src.name + "' has an empty valid region to reduce");
    const DataType dt = src.dtype;
    auto fstep = [&](float a, float b) { return round_to(dt, op(a, b)); };
    auto istep = [&](int64_t a, int64_t b) { return op(a, b); };
    std::vector<float> fv;
    std::vector<int64_t> iv;
    for (int64_t o = 0; o < outer; ++o) {
      auto at = [&](int64_t k) { return along_rows ? std::pair{o, k} : std::pair{k, o}; };
      const int64_t dr = along_rows ? o : 0, dc = along_rows ? 0 : o;
      if (dst.is_float()) {
        fv.clear();
        for (int64_t k = 0; k < inner; ++k) { auto [r, c] = at(k); fv.push_back(src.get_f(r, c)); }
        float acc = fv[0];
        if (binary_tree) acc = tree(fv, fstep);
        else for (int64_t k = 1; k < inner; ++k) acc = fstep(acc, fv[k]);
        dst.set_f(dr, dc, acc);
      } else {
        iv.clear();
        for (int64_t k = 0; k < inner; ++k) { auto [r, c] = at(k); iv.push_back(src.get_i(r, c)); }
        int64_t acc = iv[0];
        if (binary_tree) acc = tree(iv, istep);
        else for (int64_t k = 1; k < inner; ++k) acc = istep(acc, iv[k]);
        dst.set_i(dr, dc, acc);
      }
    }
  };
}

}  // namespace

void add_reduction_family(std::vector<InstrDef>& t) {
  // Rows -> rows x 1, columns -> 1 x cols, over the source's valid region; an optional scratch
  // tile (PyPTO's tmp_tile) selects the binary-tree order.
  const auto add = [&](const char* name, bool rows, ReferenceFn ref, const char* functor) {
    FastPath fast = functor ? FastPath{rows ? FastPath::kRowReduce : FastPath::kColReduce, functor} : FastPath{};
    t.push_back(vector_instr(name, InstrFamily::kReduction, "T", "Tt", kNumeric, kPassDefault,
                             rows ? "dst[r, 0] = reduce over c of src[r, c]" : "dst[0, c] = reduce over r of src[r, c]",
                             std::move(ref), std::move(fast)));
  };
  add("TROWSUM", true, reduce(Add{}, true, false), "Add");
  add("TROWMAX", true, reduce(Max{}, true, true), "Max");
  add("TROWMIN", true, reduce(Min{}, true, true), "Min");
  add("TROWPROD", true, reduce(Mul{}, true, false), nullptr);
  add("TCOLSUM", false, reduce(Add{}, false, false), "Add");
  add("TCOLMAX", false, reduce(Max{}, false, true), "Max");
  add("TCOLMIN", false, reduce(Min{}, false, true), "Min");
  add("TCOLPROD", false, reduce(Mul{}, false, false), nullptr);
}

}  // namespace pypto::isa::families
