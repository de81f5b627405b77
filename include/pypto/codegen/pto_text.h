// The textual `.pto` form of a kernel: PTO assembly in destination-passing spelling, for
// inspection (save_kernels) and for real Ascend toolchains.
#pragma once
#include <string>

#include "pypto/isa/program.h"

namespace pypto::codegen {

std::string emit_pto(const isa::Kernel& kernel);

}  // namespace pypto::codegen
