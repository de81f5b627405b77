// Tensor-level compute ops (tensor.add, tensor.exp, tensor.row_sum, tensor.matmul, ...): the
// whole-tensor forms of tile ops, written inside InCore scopes and rewritten into tile loops
// by the LowerTensorOps pass. This header lets the pass find each op's tile form.
#pragma once
#include "pypto/ops/op_registry.h"

namespace pypto::ir {

// How a tensor compute op maps onto tiles.
enum class TensorOpShape : uint8_t {
  kElementwise,  // result block (r, c) needs each operand's block (r, c)
  kRowReduce,    // [M, N] -> [M, 1]
  kColReduce,    // [M, N] -> [1, N]
  kRowExpand,    // (a [M, N], v [M, 1]) -> [M, N]
  kColExpand,    // (a [M, N], v [1, N]) -> [M, N]
  kMatmul,       // [M, K] @ [K, N] -> [M, N]
  kGather,       // (src [M, N], indices [M, K]) -> [M, K]: block (r, c) needs whole rows of src
  kScatter,      // (target [M, N], indices [M, K], src [M, K]) -> [M, N]: blocks of whole rows
  kBatchMatmul,  // [B, M, K] @ [B, K, N] (or [K, N]) -> [B, M, N]: one matmul per batch
  kGenerate,     // no tensor operands (full, ci): block (r, c) made from the shape attribute cut to the block
  kIdentity,     // the operand's values (fillpad: every tensor element is valid, nothing to fill)
  kConcat,       // (src0 [M, A], src1 [M, B]) -> [M, A + B]: blocks of whole rows
  kMatmulAcc,    // (acc [M, N], lhs [M, K], rhs [K, N]) -> acc + lhs @ rhs: kMatmul's blocks plus acc's block
  kWhole,        // no blocking (PyPTO's one tensor, one tile): the tile op on every operand loaded whole
};

struct TensorOpInfo {
  const OpDef* tile_op;  // the tile op that computes one block
  TensorOpShape shape;
};

// The tile form of a tensor compute op, or nullopt for any other op (tensor.assemble, ...).
std::optional<TensorOpInfo> tensor_op_info(const OpDef& op);

}  // namespace pypto::ir
