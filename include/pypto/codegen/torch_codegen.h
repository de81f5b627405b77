// pypto.debug.torch_codegen: a program as an equivalent, runnable PyTorch script, to debug a
// program against torch line by line. Works on a program at any stage (as parsed, or after
// the passes): orchestration and kernels become Python functions over torch tensors.
#pragma once
#include <string>

#include "pypto/ir/stmt.h"

namespace pypto::codegen {

// The script: `import torch`, the tile helpers, one Python function per function of the
// program, `ENTRY` (the orchestration function) and a `__main__` that runs it on random
// inputs. An op without a torch spelling (OpDef::torch) is a user error naming the op.
std::string emit_torch(const ir::ProgramPtr& program);

}  // namespace pypto::codegen
