// Codegen of a whole program: the orchestration function becomes a host program that
// allocates tensors and submits each InCore function call as a task (kCall).
#pragma once
#include <string>

#include "pypto/ir/stmt.h"
#include "pypto/isa/program.h"
#include "pypto/passes/pass.h"

namespace pypto::codegen {

// Lowers `entry` (an Orchestration function of `program`) and every InCore function it
// calls, each kernel once.
// after_kernel_pass: called for each kernel pass that changed a kernel (lower_kernel).
isa::HostProgram lower_program(const ir::Program& program, const std::string& entry,
                               const passes::KernelPassHook& after_kernel_pass = {});

}  // namespace pypto::codegen
