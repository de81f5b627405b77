// Validation of instruction streams before any engine runs them: every index, register,
// jump and operand is checked, so a malformed stream is an error, never a crash or a hang.
#pragma once
#include "pypto/isa/chip.h"
#include "pypto/isa/program.h"

namespace pypto::isa {

// Throws PyptoError naming the kernel, the instruction and what is malformed.
void validate_kernel(const Kernel& kernel, const ChipSpec& chip);
// Validates the host code and every kernel of the program.
void validate_host_program(const HostProgram& program, const ChipSpec& chip);

}  // namespace pypto::isa
