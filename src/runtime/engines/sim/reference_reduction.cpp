// Reference semantics of reductions: TROW* reduce each row of the source's valid region to
// dst[r, 0]; TCOL* reduce each column to dst[0, c]. Floats accumulate in float, in index
// order; integers in int64 (wrapped on store). An optional scratch input is ignored.
#include "element_ops.h"

namespace pypto::runtime {

namespace {
using namespace element_ops;

template <typename Op>
ReferenceFn reduce(Op op, bool along_rows) {
  return [op, along_rows](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    const TileRef& src = call.in_tile(0);
    const int64_t outer = along_rows ? src.valid_rows : src.valid_cols;
    const int64_t inner = along_rows ? src.valid_cols : src.valid_rows;
    if ((along_rows ? dst.rows : dst.cols) < outer)
      call.fail_runtime("destination tile '" + dst.name + "' has room for " +
                        std::to_string(along_rows ? dst.rows : dst.cols) + " results, the source has " +
                        std::to_string(outer) + " valid " + (along_rows ? "rows" : "columns"));
    if (inner == 0) call.fail_runtime("source tile '" + src.name + "' has an empty valid region to reduce");
    for (int64_t o = 0; o < outer; ++o) {
      auto at = [&](int64_t k) { return along_rows ? std::pair{o, k} : std::pair{k, o}; };
      auto [r0, c0] = at(0);
      const int64_t dr = along_rows ? o : 0, dc = along_rows ? 0 : o;
      if (dst.is_float()) {
        float acc = src.get_f(r0, c0);
        for (int64_t k = 1; k < inner; ++k) { auto [r, c] = at(k); acc = op(acc, src.get_f(r, c)); }
        dst.set_f(dr, dc, acc);
      } else {
        int64_t acc = src.get_i(r0, c0);
        for (int64_t k = 1; k < inner; ++k) { auto [r, c] = at(k); acc = op(acc, src.get_i(r, c)); }
        dst.set_i(dr, dc, acc);
      }
    }
  };
}

}  // namespace

void add_reduction_instrs(ReferenceTable& t) {
  t["TROWSUM"] = reduce(Add{}, true);
  t["TROWMAX"] = reduce(Max{}, true);
  t["TROWMIN"] = reduce(Min{}, true);
  t["TROWPROD"] = reduce(Mul{}, true);
  t["TCOLSUM"] = reduce(Add{}, false);
  t["TCOLMAX"] = reduce(Max{}, false);
  t["TCOLMIN"] = reduce(Min{}, false);
  t["TCOLPROD"] = reduce(Mul{}, false);
}

}  // namespace pypto::runtime
