// Shared pieces of the op definitions: reading a call's arguments with user-facing errors
// that name the op and the argument, and building result types. Every op family file uses
// these so that one kind of mistake reads the same for every op.
#pragma once
#include <string>
#include <vector>

#include "pypto/ops/kernel_builder.h"
#include "pypto/ops/op_registry.h"

namespace pypto::ops {

// One registration function per op family (src/ops/families/<family>.cpp; the families not
// moved yet: src/ops/<family>.cpp).
void register_memory_ops(OpRegistry& r);
void register_elementwise_ops(OpRegistry& r);
void register_reduction_ops(OpRegistry& r);
void register_broadcast_ops(OpRegistry& r);
void register_matmul_ops(OpRegistry& r);
void register_shape_ops(OpRegistry& r);
void register_compare_ops(OpRegistry& r);
void register_tensor_ops(OpRegistry& r);
void register_math_ops(OpRegistry& r);        // bitwise, remainders, partial combines, sin/cos
void register_generate_ops(OpRegistry& r);    // expands, expand_clone, tri, arange
void register_index_ops(OpRegistry& r);       // arg-reductions, gather/scatter, sort32/mrgsort
void register_tensor_compute_ops(OpRegistry& r);  // after the tile families it mirrors
void register_cross_core_ops(OpRegistry& r);      // TPUSH / TPOP / TFREE (mixed tasks)
void register_array_ops(OpRegistry& r);
void register_view_ops(OpRegistry& r);             // tensor views: slice, view, reshape, transpose, reinterpret_view
void register_distributed_ops(OpRegistry& r);      // pld: remote_load / remote_store / notify / wait (families/distributed.cpp)
void register_system_ops(OpRegistry& r);           // pl.system barriers / events / fences, pl.prefetch           // pl.array of the orchestration, task ids as values

// Parameter specs.
ParamSpec expr_param(const std::string& name, bool optional = false);
ParamSpec list_param(const std::string& name, bool optional = false);
ParamSpec attr_param(const std::string& name);  // required compile-time value
ParamSpec attr_param(const std::string& name, AttrValue default_value);
// `p` also accepted under the keywords `aliases` (PyPTO's spellings): aka(expr_param("tile"), {"input"}).
ParamSpec aka(ParamSpec p, std::vector<std::string> aliases);
// `p` as a hint: kept in the IR, not passed to the instruction (ParamSpec::hint).
ParamSpec hint(ParamSpec p);
// `p` not printed at its default (ParamSpec::quiet).
ParamSpec quiet(ParamSpec p);
// Tile operand `p` read from memory `m` (ParamSpec::memory): in_memory(expr_param("lhs"), Left).
ParamSpec in_memory(ParamSpec p, MemorySpace m);
// Tile operand `p` used in whatever memory it is in (ParamSpec::any_memory).
ParamSpec any_memory(ParamSpec p);

// A user error about this call: "pl.<op>: <message>".
[[noreturn]] void op_fail(const CallSite& s, ErrorKind kind, const std::string& message, const std::string& fix = "");

// Arguments, checked: the argument must be present and of the named kind.
const TileType& tile_arg(const CallSite& s, const std::string& name);
const TensorType& tensor_arg(const CallSite& s, const std::string& name);
const ScalarType& scalar_arg(const CallSite& s, const std::string& name);
// The elements of a list argument (empty when an optional list is absent).
std::vector<ExprPtr> list_arg(const CallSite& s, const std::string& name);
// Every element of a list argument must be a scalar.
void require_scalar_list(const CallSite& s, const std::string& name, const std::vector<ExprPtr>& elems);

// Attributes, checked.
std::vector<int64_t> shape_attr(const CallSite& s, const std::string& name);  // positive extents
// The 2-D 'shape' attribute of a Vec tile an op makes (rows of any width: padded to 32 bytes in the
// allocation).
std::vector<int64_t> vec_shape_attr(const CallSite& s);
DataType dtype_attr(const CallSite& s, const std::string& name);
MemorySpace memory_attr(const CallSite& s, const std::string& name);
PadValue pad_attr(const CallSite& s, const std::string& name);
std::string string_attr(const CallSite& s, const std::string& name);
bool bool_attr(const CallSite& s, const std::string& name);
int64_t int_attr(const CallSite& s, const std::string& name);

// The static 2-D shape of a tile argument (tiles always have static shapes).
std::vector<int64_t> tile_shape(const CallSite& s, const std::string& name, const TileType& t);
// A tile's valid shape, or its full shape when it has none.
std::vector<ExprPtr> valid_or_full(const TileType& t);
// The shape as constant expressions.
std::vector<ExprPtr> const_shape(const std::vector<int64_t>& shape);
// max(0, min(a, b)) as an INDEX expression, folded when both are constants (a clamped extent).
ExprPtr clamp_extent(const ExprPtr& a, const ExprPtr& b);

// Vector-unit ops read and write Vec tiles only.
// The result tile of an op that updates tile `target` in place (scatter, assemble): defined
// for `dst`, with `target` copied into it first when planning gave it another buffer.
int define_updated_tile(KernelBuilder& kb, const VarPtr& dst, int target);

void require_vec(const CallSite& s, const std::string& name, const TileType& t);
// Tile argument `name` must be in its parameter's memory (ParamSpec::memory) or reach it by
// moves (InferMemory inserts them); nothing is required when the parameter states none.
void require_param_memory(const CallSite& s, const std::string& name, const TileType& t);
// `mask` is the packed bit mask (pl.cmp / pl.cmps) of a tile shaped like argument `of` (`t`):
// UINT8, the same rows, one bit per element (pl.tile.sel, pl.tile.sels).
void require_packed_mask(const CallSite& s, const TileType& mask, const std::string& of, const TileType& t);
// `b` must have the shape and dtype of `a` (elementwise pairs).
void require_same_shape_dtype(const CallSite& s, const std::string& a_name, const TileType& a,
                              const std::string& b_name, const TileType& b);

// The tile's dtype must be one the PTO instruction `pto` accepts (its entry in
// include/pypto/isa/instructions.h); the message lists the accepted dtypes.
void require_instr_dtype(const CallSite& s, const std::string& name, const TileType& t, const std::string& pto);
// The scalar argument must be an integer (Python int, pl.Scalar[pl.INT32], pl.Scalar[pl.INDEX]).
void require_int_scalar(const CallSite& s, const std::string& name);
// The static valid extents of a tile (nullopt for a run-time extent), full extents when it has none.
std::vector<std::optional<int64_t>> static_valid(const TileType& t);

// Spellings for messages: "[128, 64]", "Tile[[128, 64], FP32, Vec]".
std::string shape_str(const std::vector<int64_t>& shape);
std::string type_str(const TypePtr& t);

// PyPTO's pl.read / pl.write index: one index per dimension, or one flat row-major index
// (pl.read(t, k)). flat_index_ok checks a constant flat index against the element count and
// tells whether `idx` is the flat form; unravel_flat_index turns the flat form into one
// index per dimension ((flat / stride_d) % extent_d) and returns any other list unchanged.
bool flat_index_ok(const CallSite& s, const std::vector<ExprPtr>& idx, const std::vector<ExprPtr>& shape);
ExprPtr unravel_flat_index(const ExprPtr& list, const std::vector<ExprPtr>& shape, const Span& span);

// The PTO names of compare modes, accepted as strings ("EQ", "lt") or ints 0..5.
std::string cmp_mode(const CallSite& s, const std::string& name);
std::string cmp_mode_of(const AttrValue& v);  // after verification

}  // namespace pypto::ops
