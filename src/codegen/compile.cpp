// The compiler driver: checks the platform, runs the pass pipeline, lowers to instruction streams.
#include "pypto/codegen/compile.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <variant>

#include "pypto/codegen/lower_program.h"
#include "pypto/codegen/pto_text.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/passes/pass.h"

namespace pypto::codegen {

void check_platform(const std::string& platform) {
  std::string sims, others;
  for (auto& p : isa::simulated_platforms()) sims += (sims.empty() ? "'" : ", '") + p + "'";
  for (auto& p : isa::simulated_platforms())
    if (p != isa::simulated_platforms().front()) others += (others.empty() ? " (or '" : ", '") + p + "'";
  if (!others.empty()) others += ")";
  if (isa::is_hardware_platform(platform))
    fail(ErrorKind::kPlatform, {},
         "platform '" + platform + "' names real Ascend NPU hardware, but no NPU is present on this machine",
         "run on a simulated chip instead: RunConfig(platform='" + isa::simulated_platforms().front() + "')" +
             others);
  if (!isa::chip_for_platform(platform))
    fail(ErrorKind::kPlatform, {}, "unknown platform '" + platform + "'", "use one of " + sims);
}

// A function whose body is hand-written Ascend C (`@pl.function(external_source=...)`,
// `@pl.jit.extern(source=...)`) keeps the file in its attrs; no such kernel runs here.
void check_external_sources(const ir::ProgramPtr& program) {
  for (auto& f : program->functions) {
    auto it = f->attrs.find("external_source");
    if (it == f->attrs.end()) continue;
    const auto* file = std::get_if<std::string>(&it->second);
    fail(ErrorKind::kPlatform, f->span,
         "function '" + f->name + "' is an external Ascend C kernel (" + (file ? *file : std::string("?")) +
             "); hand-written Ascend C kernels cannot run on the virtual chip (a2a3sim/a5sim runs only kernels "
             "written with pl ops)",
         "write the kernel body with pl ops (e.g. @pl.function(type=pl.FunctionType.AIV) with pl.load/pl.add/"
         "pl.store), or run the program with PyPTO on Ascend hardware");
  }
}

CompiledProgram compile_program(const ir::ProgramPtr& program, const CompileOptions& options) {
  check_platform(options.platform);
  check_external_sources(program);
  CompiledProgram out;
  out.platform = options.platform;
  passes::PassContext ctx{*isa::chip_for_platform(options.platform), nullptr, options.verify, &out.pass_times};
  if (options.keep_pass_results) {
    // Only passes that changed the program leave a dump; NN stays the pass's position.
    auto previous = std::make_shared<ir::ProgramPtr>(program);
    ctx.after_pass = [&out, previous](int index, const std::string& name, const ir::ProgramPtr& p) {
      bool changed = !ir::structural_equal(*previous, p);
      *previous = p;
      if (!changed) return;
      char prefix[8];
      std::snprintf(prefix, sizeof prefix, "%02d", index);
      out.pass_results.emplace_back(std::string(prefix) + "_after_" + name, p);
    };
  }
  out.lowered = passes::run_pipeline(program, ctx);
  for (auto& f : out.lowered->functions) {
    if (f->func_type != FunctionType::Orchestration) continue;
    if (!out.entry.empty())
      fail(ErrorKind::kType, f->span,
           "program '" + program->name + "' has two Orchestration functions ('" + out.entry + "' and '" + f->name + "')",
           "keep one @pl.function(type=pl.FunctionType.Orchestration) as the entry");
    out.entry = f->name;
    for (auto& p : f->params) out.param_names.push_back(p->name);
  }
  if (out.entry.empty())
    fail(ErrorKind::kType, {}, "program '" + program->name + "' has no Orchestration function to run",
         "add a @pl.function(type=pl.FunctionType.Orchestration) method that calls the kernels");
  const auto t0 = std::chrono::steady_clock::now();
  passes::KernelPassHook after_kernel_pass;
  if (options.keep_pass_results)
    after_kernel_pass = [&out](int index, const std::string& name, const isa::Kernel& k) {
      char prefix[8];
      std::snprintf(prefix, sizeof prefix, "%02d", static_cast<int>(passes::default_pipeline().size()) + index);
      out.kernel_pass_results.emplace_back(std::string(prefix) + "_after_" + name, k.name, codegen::emit_pto(k));
    };
  out.host = codegen::lower_program(*out.lowered, out.entry, after_kernel_pass);
  out.pass_times.emplace_back("LowerProgram", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return out;
}

}  // namespace pypto::codegen
