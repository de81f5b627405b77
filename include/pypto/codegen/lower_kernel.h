// Codegen of one InCore function (after memory planning) into a kernel: the instruction
// stream the engines run, plus its `.pto` text.
#pragma once
#include <vector>

#include "pypto/ir/stmt.h"
#include "pypto/isa/program.h"
#include "pypto/passes/pass.h"

namespace pypto::codegen {

// A lowered kernel and, for each value its ReturnStmt gives, the index of the kernel
// parameter that value is (a tensor threaded through stores; -1 for a non-tensor value).
struct LoweredKernel {
  isa::Kernel kernel;
  std::vector<int> returned_params;
};

// Runs the kernel pipeline (InsertSync) on the kernel; after_kernel_pass sees each change.
LoweredKernel lower_kernel(const ir::Function& fn, const passes::KernelPassHook& after_kernel_pass = {});
// The kernel of an InCore function, with Kernel::pto_text filled in.
isa::Kernel lower_incore_function(const ir::Function& fn);

}  // namespace pypto::codegen
