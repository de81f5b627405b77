// Scalar registers, Python-semantics scalar arithmetic and structured control flow
// (loops, while loops, if/else) of instruction streams; kernels and host programs both run on it.
#include "pypto/engines/scalar_machine.h"

#include <cmath>

#include "pypto/base/scalar_cast.h"
#include "pypto/base/scalar_ops.h"
#include "pypto/engines/cancel.h"

namespace pypto::engines {

namespace {

void check_reg(int reg, size_t n, const Span& span) {
  if (reg < 0 || static_cast<size_t>(reg) >= n)
    fail(ErrorKind::kRuntime, span,
         "scalar register r" + std::to_string(reg) + " does not exist (the program has " + std::to_string(n) + ")",
         "this is a code generation bug; please report it");
}

}  // namespace

ScalarValue eval_binary(BinaryOp op, ScalarValue a, ScalarValue b, const Span& span) {
  const bool fl = a.is_float || b.is_float;
  const double x = a.as_double(), y = b.as_double();
  const int64_t i = a.as_int(), j = b.as_int();
  auto truth = [](bool v) { return ScalarValue::of_int(v ? 1 : 0); };
  auto int_zero_check = [&] {
    if (!fl && j == 0)
      fail(ErrorKind::kRuntime, span, std::string("integer ") + (op == BinaryOp::Mod ? "modulo" : "division") + " by zero",
           "guard the divisor");
  };
  long long r = 0;
  auto checked = [&](bool overflows) {
    if (overflows)
      fail(ErrorKind::kRuntime, span,
           "integer overflow: " + std::to_string(i) + " " + std::string(op == BinaryOp::Add ? "+" : op == BinaryOp::Sub ? "-" : "*") + " " + std::to_string(j) +
               " does not fit in 64 bits (-2**63 .. 2**63 - 1)",
           "keep offsets and indices within the tensor (check the values that compute this one), or compute in pl.FP32");
    return ScalarValue::of_int(r);
  };
  switch (op) {
    // The rules of base/scalar_ops.h: integer overflow is an error, floor division and modulo are Python's.
    case BinaryOp::Add: return fl ? ScalarValue::of_float(x + y) : checked(scalar::add_overflows(i, j, &r));
    case BinaryOp::Sub: return fl ? ScalarValue::of_float(x - y) : checked(scalar::sub_overflows(i, j, &r));
    case BinaryOp::Mul: return fl ? ScalarValue::of_float(x * y) : checked(scalar::mul_overflows(i, j, &r));
    case BinaryOp::Div:
      if (!fl && j == 0) int_zero_check();
      return ScalarValue::of_float(x / y);
    case BinaryOp::FloorDiv:
      int_zero_check();
      return fl ? ScalarValue::of_float(scalar::float_floor_div(x, y)) : ScalarValue::of_int(scalar::int_floor_div(i, j));
    case BinaryOp::Mod:
      int_zero_check();
      return fl ? ScalarValue::of_float(scalar::float_mod(x, y)) : ScalarValue::of_int(scalar::int_floor_mod(i, j));
    case BinaryOp::Min: return fl ? ScalarValue::of_float(std::fmin(x, y)) : ScalarValue::of_int(std::min(i, j));
    case BinaryOp::Max: return fl ? ScalarValue::of_float(std::fmax(x, y)) : ScalarValue::of_int(std::max(i, j));
    case BinaryOp::Eq: return truth(fl ? x == y : i == j);
    case BinaryOp::Ne: return truth(fl ? x != y : i != j);
    case BinaryOp::Lt: return truth(fl ? x < y : i < j);
    case BinaryOp::Le: return truth(fl ? x <= y : i <= j);
    case BinaryOp::Gt: return truth(fl ? x > y : i > j);
    case BinaryOp::Ge: return truth(fl ? x >= y : i >= j);
    case BinaryOp::And: return truth((fl ? x != 0 : i != 0) && (fl ? y != 0 : j != 0));
    case BinaryOp::Or: return truth((fl ? x != 0 : i != 0) || (fl ? y != 0 : j != 0));
  }
  return ScalarValue{};
}

ScalarValue eval_cast(ScalarValue v, const isa::Instr& in) {
  auto it = in.attrs.find("dtype");
  const DataType* d = it == in.attrs.end() ? nullptr : std::get_if<DataType>(&it->second);
  const int target = d ? scalar_cast_target(*d) : -1;
  if (target < 0)
    fail(ErrorKind::kRuntime, in.span, "scalar cast without a target dtype the scalar unit has",
         "this is a code generation bug; please report it");
  if (scalar_cast_to_float(target)) return ScalarValue::of_float(scalar_cast_float(v.as_double(), target));
  return ScalarValue::of_int(v.is_float ? scalar_cast_float_to_int(v.f, target) : scalar_cast_int(v.i, target));
}

void fail_endless_while(const isa::Instr& end) {
  fail(ErrorKind::kRuntime, end.span,
       "while loop ran " + std::to_string(isa::kMaxWhileIterations) + " iterations without its condition turning false",
       "check that the loop body changes what the condition reads (and in the right direction), or bound the loop "
       "with pl.range or a break");
}

ScalarMachine::ScalarMachine(int num_regs, const std::vector<bool>& reg_is_float)
    : regs_(static_cast<size_t>(std::max(num_regs, 0))), is_float_(regs_.size(), false) {
  for (size_t r = 0; r < regs_.size() && r < reg_is_float.size(); ++r) {
    is_float_[r] = reg_is_float[r];
    regs_[r] = is_float_[r] ? ScalarValue::of_float(0.0) : ScalarValue::of_int(0);
  }
}

ScalarValue ScalarMachine::get(const isa::Scalar& s) const {
  if (s.kind == isa::Scalar::kImm) return s.is_float ? ScalarValue::of_float(s.f) : ScalarValue::of_int(s.i);
  check_reg(s.reg, regs_.size(), {});
  return regs_[s.reg];
}

void ScalarMachine::set(int reg, ScalarValue v) {
  check_reg(reg, regs_.size(), {});
  regs_[reg] = is_float_[reg] ? ScalarValue::of_float(v.as_double()) : ScalarValue::of_int(v.as_int());
}

int ScalarMachine::step(const std::vector<isa::Instr>& code, int pc) {
  const isa::Instr& in = code[pc];
  using K = isa::InstrKind;
  auto loop_continues = [](int64_t v, int64_t stop, int64_t step) { return step > 0 ? v < stop : v > stop; };
  switch (in.kind) {
    case K::kScalarBin:
      check_reg(in.dst_reg, regs_.size(), in.span);
      set(in.dst_reg, eval_binary(in.sop, get(in.a), get(in.b), in.span));
      return pc + 1;
    case K::kScalarMov:
      check_reg(in.dst_reg, regs_.size(), in.span);
      set(in.dst_reg, get(in.a));
      return pc + 1;
    case K::kScalarCast: {
      check_reg(in.dst_reg, regs_.size(), in.span);
      set(in.dst_reg, eval_cast(get(in.a), in));
      return pc + 1;
    }
    case K::kLoopBegin: {
      check_reg(in.dst_reg, regs_.size(), in.span);
      const int64_t step = get(in.step).as_int();
      // Compiled loops count upwards (a constant step <= 0 is a compile error, stmt_lowering.cpp);
      // a run-time step must too, else the loop would silently run zero times.
      if (step <= 0)
        fail(ErrorKind::kRuntime, in.span,
             step == 0 ? std::string("loop step is 0") : "loop step is " + std::to_string(step) + "; pl.range steps must be positive",
             step == 0 ? "use a non-zero range step" : "count upwards: pl.range(start, stop, step) with step > 0");
      set(in.dst_reg, get(in.a));
      return loop_continues(regs_[in.dst_reg].as_int(), get(in.b).as_int(), step) ? pc + 1 : in.jump;
    }
    case K::kLoopEnd: {
      // Stop and step come from the matching kLoopBegin, just before the body.
      const isa::Instr& begin = (in.jump >= 1 && code[in.jump - 1].kind == K::kLoopBegin) ? code[in.jump - 1] : in;
      const int64_t step = get(begin.step).as_int();
      check_reg(in.dst_reg, regs_.size(), in.span);
      set(in.dst_reg, ScalarValue::of_int(regs_[in.dst_reg].as_int() + step));
      check_cancelled();  // a back-edge: an interrupted run stops here
      return loop_continues(regs_[in.dst_reg].as_int(), get(begin.b).as_int(), step) ? in.jump : pc + 1;
    }
    case K::kIf: {
      const ScalarValue c = get(in.a);
      return (c.is_float ? c.f != 0 : c.i != 0) ? pc + 1 : in.jump;
    }
    case K::kElse: return in.jump;
    case K::kEndIf: return pc + 1;
    case K::kWhileBegin: return pc + 1;
    case K::kWhileCond: {
      const ScalarValue c = get(in.a);
      if (c.is_float ? c.f != 0 : c.i != 0) return pc + 1;
      while_iterations_.erase(in.jump - 1);  // the loop is done: a later run counts afresh
      return in.jump;
    }
    case K::kWhileEnd:
      if (++while_iterations_[pc] >= isa::kMaxWhileIterations) fail_endless_while(in);
      check_cancelled();
      return in.jump;
    default: return -1;
  }
}

}  // namespace pypto::engines
