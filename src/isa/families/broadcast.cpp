// The broadcast family: TROWEXPAND* use b[r, 0] across each row, TCOLEXPAND* use b[0, c]
// down each column; EXPDIF is exp(a - b) (the softmax step). Records with their reference
// functions and the native engine's fast paths.
#include <cmath>

#include "families.h"
#include "pypto/isa/element_ops.h"

namespace pypto::isa::families {

namespace {
using namespace isa::element_ops;

// dst[r, c] = src[r, 0] (rows) or src[0, c] (columns).
ReferenceFn expand(bool rows) {
  return [rows](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    const TileRef& src = call.in_tile(0);
    call.require_covers(src, rows ? dst.valid_rows : 1, rows ? 1 : dst.valid_cols);
    for (int64_t r = 0; r < dst.valid_rows; ++r)
      for (int64_t c = 0; c < dst.valid_cols; ++c)
        convert_element(dst.at(r, c), dst.dtype, rows ? src.at(r, 0) : src.at(0, c), src.dtype);
  };
}

// dst = op(a, broadcast(b)).
template <typename Op>
ReferenceFn expand_binary(Op op, bool rows) {
  return [op, rows](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    const TileRef& a = call.in_tile(0);
    const TileRef& b = call.in_tile(1);
    call.require_covers(a, dst.valid_rows, dst.valid_cols);
    call.require_covers(b, rows ? dst.valid_rows : 1, rows ? 1 : dst.valid_cols);
    if (rows) map_pairs(dst, Elem{a}, RowBcast{b}, op);
    else map_pairs(dst, Elem{a}, ColBcast{b}, op);
  };
}

template <typename Op>
ReferenceFn expand_binary_checked(bool rows) {
  return [rows](const TileCall& call) { expand_binary(Op{call}, rows)(call); };
}

// exp(a - b) (EXPDIF is float-only in the instruction table): the difference rounded to
// float, its exp computed in double and rounded once to dst's dtype.
ReferenceFn expdif(bool rows) {
  return [rows](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    const TileRef& a = call.in_tile(0);
    const TileRef& b = call.in_tile(1);
    call.require_covers(a, dst.valid_rows, dst.valid_cols);
    call.require_covers(b, rows ? dst.valid_rows : 1, rows ? 1 : dst.valid_cols);
    for (int64_t r = 0; r < dst.valid_rows; ++r)
      for (int64_t c = 0; c < dst.valid_cols; ++c) {
        const float d = a.get_f(r, c) - (rows ? b.get_f(r, 0) : b.get_f(0, c));
        dst.set_d(r, c, std::exp(static_cast<double>(d)));
      }
  };
}

}  // namespace

void add_broadcast_family(std::vector<InstrDef>& t) {
  using F = InstrFamily;
  // b is rows x 1 (TROWEXPAND*) or 1 x cols (TCOLEXPAND*).
  t.push_back(vector_instr("TROWEXPAND", F::kExpand, "T", "T", kAny, kPassDefault, "dst[r, c] = src[r, 0]", expand(true),
                           {FastPath::kRowBroadcast, ""}));
  t.push_back(vector_instr("TCOLEXPAND", F::kExpand, "T", "T", kAny, kPassDefault, "dst[r, c] = src[0, c]", expand(false),
                           {FastPath::kColBroadcast, ""}));
  for (bool rows : {true, false}) {
    const std::string p = rows ? "TROWEXPAND" : "TCOLEXPAND";
    const FastPath::Kind kind = rows ? FastPath::kRowExpand : FastPath::kColExpand;
    auto add = [&](const char* op, const char* functor, ReferenceFn ref) {
      t.push_back(vector_instr(p + op, F::kExpand, "T", "TT", kNumeric, kBinaryDefault,
                               std::string("dst = a ") + op + " broadcast(b)", std::move(ref), {kind, functor}));
    };
    add("ADD", "Add", expand_binary(Add{}, rows));
    add("SUB", "Sub", expand_binary(Sub{}, rows));
    add("MUL", "Mul", expand_binary(Mul{}, rows));
    add("DIV", "Div", expand_binary_checked<Div>(rows));
    add("MAX", "Max", expand_binary(Max{}, rows));
    add("MIN", "Min", expand_binary(Min{}, rows));
    t.push_back(vector_instr(p + "EXPDIF", F::kExpand, "T", "TT", kFloat, vec(2.11 + 2.0, 24 + 31),
                             "dst = exp(a - broadcast(b))", expdif(rows), {kind, "ExpDif"}));  // TSUB then TEXP
  }
}

}  // namespace pypto::isa::families
