// The scalar half of an instruction stream, shared by kernels (the S pipe) and the host
// program: a register file plus scalar arithmetic, loops, while loops and if/else.
#pragma once
#include <unordered_map>
#include <vector>

#include "pypto/isa/program.h"
#include "pypto/engines/tensor.h"

namespace pypto::engines {

// a <op> b with Python semantics: / is true division, // floors, % takes the divisor's sign;
// comparisons and and/or give 0 or 1. Integer division by zero is a runtime error at `span`.
ScalarValue eval_binary(BinaryOp op, ScalarValue a, ScalarValue b, const Span& span);
// Scalar pl.cast: `v` converted to the kScalarCast instruction's attrs["dtype"] (pypto/base/scalar_cast.h).
ScalarValue eval_cast(ScalarValue v, const isa::Instr& in);

// The error of a while loop (its kWhileEnd) that ran isa::kMaxWhileIterations iterations.
[[noreturn]] void fail_endless_while(const isa::Instr& end);

class ScalarMachine {
 public:
  ScalarMachine(int num_regs, const std::vector<bool>& reg_is_float);
  // The value of an immediate or register operand.
  ScalarValue get(const isa::Scalar& s) const;
  // Stores `v` into `reg`, converting to the register's kind (int registers truncate).
  void set(int reg, ScalarValue v);
  // Executes code[pc] if it is a scalar or control-flow instruction (kScalarBin, kScalarMov,
  // kLoopBegin/End, kWhileBegin/Cond/End, kIf/kElse/kEndIf) and returns the next pc; returns -1 for other kinds.
  int step(const std::vector<isa::Instr>& code, int pc);

 private:
  std::vector<ScalarValue> regs_;
  std::vector<bool> is_float_;
  std::unordered_map<int, int64_t> while_iterations_;  // by kWhileEnd pc, for the current run of the loop
};

}  // namespace pypto::engines
