// Tensor-level compute ops (tensor.add, tensor.exp, tensor.row_sum, tensor.matmul, ...): the
// whole-tensor forms of tile ops, written inside InCore scopes and rewritten into tile loops
// by the LowerTensorOps pass. A tile op's record asks for its form (OpDef::tensor_form); this
// header lets the pass find each tensor op's tile op.
#pragma once
#include "pypto/ops/op_registry.h"

namespace pypto::ops {

struct TensorOpInfo {
  const OpDef* tile_op;  // the tile op that computes one block
  TensorOpShape shape;
};

// The tile form of a tensor compute op, or nullopt for any other op (tensor.assemble, ...).
std::optional<TensorOpInfo> tensor_op_info(const OpDef& op);

}  // namespace pypto::ops
