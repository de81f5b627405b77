// A pass transforms a whole program; the pipeline (pipeline.cpp) is one ordered list of them.
#pragma once
#include <utility>
#include <vector>
#include <functional>
#include <string>
#include <vector>

#include "pypto/ir/stmt.h"
#include "pypto/isa/chip.h"
#include "pypto/isa/program.h"

namespace pypto::passes {

// Options and instrumentation shared by every pass of one compile.
struct PassContext {
  isa::ChipSpec chip;
  // Called after each pass with its 1-based position, name, and the program after it.
  std::function<void(int, const std::string&, const ir::ProgramPtr&)> after_pass;
  // Run verify_program on the input and after every pass (verification level "basic").
  bool verify = true;
  // Non-null: run_pipeline appends (pass name, seconds it took) for each pass (compile_profiling).
  std::vector<std::pair<std::string, double>>* pass_times = nullptr;
};

struct Pass {
  std::string name;  // the pass's one name: file src/passes/<snake_name>.cpp, dump NN_after_<name>.py
  std::function<ir::ProgramPtr(const ir::ProgramPtr&, const PassContext&)> run;
  std::string doc;   // one paragraph for docs/passes.md
};

// True for the functions that run on a core (InCore, AIC, AIV): the ones with tiles.
bool is_kernel_function(FunctionType t);
// The program with `rewrite` applied to each kernel function (others unchanged); the same
// program object when nothing changed.
ir::ProgramPtr map_kernels(const ir::ProgramPtr& program,
                           const std::function<ir::FunctionPtr(const ir::FunctionPtr&)>& rewrite);

// Outlines each `with pl.at(level=...)` scope into an InCore (or AIC/AIV) function and
// replaces the scope by a call of it. (outline_incore.cpp)
ir::ProgramPtr outline_incore(const ir::ProgramPtr& program, const PassContext& ctx);

// Passes the valid region of an orchestration view given to a kernel as trailing INDEX
// parameters of the kernel, which narrows the parameter to it. (pass_valid_regions.cpp)
ir::ProgramPtr pass_valid_regions(const ir::ProgramPtr& program, const PassContext& ctx);

// Splits each kernel function holding a `pl.split_aiv` region into a Group function of one AIC
// and one AIV function, its pl.aiv_shard / pl.aic_gather crossings into FIFO ops. (split_aiv.cpp)
ir::ProgramPtr split_aiv(const ir::ProgramPtr& program, const PassContext& ctx);

// Rewrites tensor-level compute inside InCore functions (`out[:] = pl.exp(x)`, reductions,
// broadcasts, `pl.matmul` on Tensors) into loops over blocks that fit the on-chip buffers:
// tile loads, tile ops and stores. (lower_tensor_ops.cpp)
ir::ProgramPtr lower_tensor_ops(const ir::ProgramPtr& program, const PassContext& ctx);

// Puts tile operands in the memories their consumers read (loads retargeted to Mat, moves
// inserted over the legal move chains), so pl.move may be omitted. (infer_memory.cpp)
ir::ProgramPtr infer_memory(const ir::ProgramPtr& program, const PassContext& ctx);

// Replaces each `pl.unroll` loop with compile-time bounds by copies of its body, one per
// iteration, threading loop-carried values from copy to copy. (unroll.cpp)
ir::ProgramPtr unroll(const ir::ProgramPtr& program, const PassContext& ctx);

// Folds scalar expressions on constants and removes assignments of unused pure values.
// (simplify.cpp)
ir::ProgramPtr simplify(const ir::ProgramPtr& program, const PassContext& ctx);
// Simplify's folding of one scalar expression (the constant-folding rules of base/scalar_ops.h).
ir::ExprPtr simplify_expr(const ir::ExprPtr& expr, const isa::ChipSpec& chip);

// Gives every op call nested inside another expression its own assignment to a fresh Var,
// so every computed tile is a named value. (flatten_calls.cpp)
ir::ProgramPtr flatten_calls(const ir::ProgramPtr& program, const PassContext& ctx);

// In each statement list of a kernel, drops a tile op repeating an earlier one (same op,
// attributes and operand values); its uses read the earlier result. (common_subexpressions.cpp)
ir::ProgramPtr common_subexpressions(const ir::ProgramPtr& program, const PassContext& ctx);

// Rewrites every call of a composite op (pl.sin, pl.cos, pl.fmods, ...) inside InCore functions
// into the single-instruction op calls of its definition (OpDef::expand). (expand_ops.cpp)
ir::ProgramPtr expand_ops(const ir::ProgramPtr& program, const PassContext& ctx);

// Copies a loop's yielded tile before the yield when the body still reads the carried tile
// after the yielded value is computed, so both may live at once. (insert_carry_copies.cpp)
ir::ProgramPtr insert_carry_copies(const ir::ProgramPtr& program, const PassContext& ctx);

// Gives every tile of every InCore function a 32-byte aligned address inside its buffer
// (UB/L1/L0A/L0B/L0C/Bias) and fails clearly when a function does not fit. (plan_memory.cpp)
ir::ProgramPtr plan_memory(const ir::ProgramPtr& program, const PassContext& ctx);

// After PlanMemory: turns each `pl.pipeline(n, stage=k)` loop of an InCore function into a loop
// over groups of k iterations whose body holds k copies, each copy with its own buffer set.
// (pipeline_loops.cpp)
ir::ProgramPtr pipeline_loops(const ir::ProgramPtr& program, const PassContext& ctx);

// Checks structural invariants between passes: every used Var is defined before its use,
// tiles stay inside kernels. A failure names the pass that broke it. (verify.cpp)
void verify_program(const ir::ProgramPtr& program, const std::string& after_pass);

// The default pipeline, in order. (pipeline.cpp)
const std::vector<Pass>& default_pipeline();
// Runs the pipeline, verifying after each pass and calling ctx.after_pass.
ir::ProgramPtr run_pipeline(const ir::ProgramPtr& program, const PassContext& ctx);
// The pipeline entry named `name`, or nullptr.
const Pass* find_pass(const std::string& name);
// Runs the one pass named `name` (verifying its input and output); fails on an unknown name.
ir::ProgramPtr run_pass(const std::string& name, const ir::ProgramPtr& program, const PassContext& ctx);

// A pass over one kernel's instruction stream, run by codegen on each kernel it lowers (what
// such a pass needs is known only per instruction: pipes, buffer ranges). `run` returns
// whether it changed the kernel.
struct KernelPass {
  std::string name;  // file src/passes/<snake_name>.cpp, dump NN_after_<name>.<kernel>.pto
  std::function<bool(isa::Kernel&)> run;
  std::string doc;   // one paragraph for docs/passes.md
};
// Called after each kernel pass that changed `kernel`, with the pass's 1-based position in the
// kernel pipeline and its name.
using KernelPassHook = std::function<void(int, const std::string&, const isa::Kernel&)>;
// The kernel pipeline, in order; it runs after the program pipeline. (pipeline.cpp)
const std::vector<KernelPass>& kernel_pipeline();
// Runs the kernel pipeline on `kernel`, calling after_pass for each pass that changed it.
void run_kernel_pipeline(isa::Kernel& kernel, const KernelPassHook& after_pass = {});
// Runs the one kernel pass named `name` on a copy of `kernel`; fails on an unknown name.
isa::Kernel run_kernel_pass(const std::string& name, const isa::Kernel& kernel);

}  // namespace pypto::passes
