// The textual `.pto` form of a kernel: PTO assembly in destination-passing spelling, for
// inspection (save_kernels) and for real Ascend toolchains.
#pragma once
#include <string>
#include <vector>

#include "pypto/isa/program.h"

namespace pypto::codegen {

std::string emit_pto(const isa::Kernel& kernel);
// The `.pto` text of a Group kernel (a mixed task): its parts, each a call of one of
// `kernels` on the cluster's AIC or an AIV with the group's arguments.
std::string emit_group_pto(const isa::Kernel& group, const std::vector<isa::Kernel>& kernels);

}  // namespace pypto::codegen
