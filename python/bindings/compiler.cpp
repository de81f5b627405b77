// Bindings of the compiler driver and the pass pipeline.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "pypto/codegen/torch_codegen.h"
#include "pypto/codegen/compile.h"
#include "pypto/ops/op_registry.h"
#include "pypto/isa/chip.h"
#include "pypto/passes/pass.h"
#include "pypto/passes/written_inputs.h"

namespace nb = nanobind;

namespace pypto::bindings {

void bind_compiler(nb::module_& m) {
  nb::class_<codegen::CompiledProgram>(m, "CompiledProgram")
      .def_ro("lowered", &codegen::CompiledProgram::lowered, "the IR after the pass pipeline")
      .def_ro("host", &codegen::CompiledProgram::host, "the instruction streams the engines run")
      .def_ro("platform", &codegen::CompiledProgram::platform)
      .def_ro("entry", &codegen::CompiledProgram::entry)
      .def_ro("param_names", &codegen::CompiledProgram::param_names)
      .def_ro("pass_results", &codegen::CompiledProgram::pass_results)
      .def_ro("kernel_pass_results", &codegen::CompiledProgram::kernel_pass_results,
              "(NN_after_<KernelPass>, kernel name, .pto text) for each kernel a kernel pass changed")
      .def_ro("pass_times", &codegen::CompiledProgram::pass_times, "(pass name, seconds) per pass, then LowerProgram");

  m.def(
      "compile",
      [](const ir::ProgramPtr& program, const std::string& platform, bool keep_pass_results, bool verify) {
        return codegen::compile_program(program, {platform, keep_pass_results, verify});
      },
      nb::arg("program"), nb::arg("platform") = "a2a3sim", nb::arg("keep_pass_results") = false,
      nb::arg("verify") = true,
      "Runs the pass pipeline and lowers the program to instruction streams. pass_results holds the "
      "program after each pass that changed it.");
  m.def(
      "run_pass",
      [](const ir::ProgramPtr& program, const std::string& name, const std::string& platform, bool verify) {
        codegen::check_platform(platform);
        passes::PassContext ctx{*isa::chip_for_platform(platform), nullptr, verify};
        return passes::run_pass(name, program, ctx);
      },
      nb::arg("program"), nb::arg("name"), nb::arg("platform") = "a2a3sim", nb::arg("verify") = true,
      "Runs the one pipeline pass `name` on `program` (for pass tests and debugging).");
  m.def(
      "written_inputs",
      [](const ir::FunctionPtr& f) {
        std::vector<std::tuple<int, std::string, int, int, bool>> out;
        for (const passes::WrittenInput& w : passes::written_inputs(*f))
          out.emplace_back(w.param, w.span.file, w.span.line, w.span.col, w.read);
        return out;
      },
      nb::arg("function"),
      "The input parameters (no pl.Out / pl.InOut) the function's body stores to: (index, file, line, col of "
      "the first store, whether the body also reads it); OutlineIncore makes them Out / InOut.");
  m.def(
      "simplify_expr",
      [](const ir::ExprPtr& expr, const std::string& platform) {
        codegen::check_platform(platform);
        return passes::simplify_expr(expr, *isa::chip_for_platform(platform));
      },
      nb::arg("expr"), nb::arg("platform") = "a2a3sim",
      "Simplify's constant folding of one scalar expression (a zero divisor is a compile error).");
  m.def(
      "chip_spec",
      [](const std::string& platform) {
        auto chip = isa::chip_for_platform(platform);
        if (!chip) fail(ErrorKind::kPlatform, Span{}, "unknown platform '" + platform + "'", "use one of 'a2a3sim', 'a5sim'");
        nb::dict d;
        d["platform"] = chip->platform;
        d["description"] = chip->description;
        d["clusters"] = chip->clusters;
        d["aic_cores"] = chip->aic_cores;
        d["aiv_cores"] = chip->aiv_cores;
        d["clock_ghz"] = chip->clock_ghz;
        d["alignment_bytes"] = chip->alignment_bytes;
        d["fifo_depth"] = chip->fifo_depth;
        nb::dict caps;
        for (MemorySpace m : {MemorySpace::DDR, MemorySpace::Vec, MemorySpace::Mat, MemorySpace::Left,
                                  MemorySpace::Right, MemorySpace::Acc, MemorySpace::Bias})
          caps[memory_space_name(m)] = chip->capacity(m);
        d["capacity"] = caps;
        // Which core holds each buffer (chip.h): the AIV its Vec buffer, the AIC the cube buffers.
        d["core_memories"] = nb::dict();
        d["core_memories"]["AIV"] = std::vector<std::string>{"Vec"};
        d["core_memories"]["AIC"] = std::vector<std::string>{"Mat", "Left", "Right", "Acc", "Bias"};
        d["scaling_bytes"] = chip->scaling_bytes;
        return d;
      },
      nb::arg("platform"),
      "The chip table's numbers of a simulated platform (src/isa/chip.cpp): cores, clusters, per-core buffer "
      "bytes by memory space (capacity; 0 for DDR), clock, alignment.");
  m.def("simulated_platforms", &isa::simulated_platforms, "The platforms of the chip table.");
  m.def("is_hardware_platform", &isa::is_hardware_platform, "A real Ascend NPU platform name (a2a3, a5).");
  m.def("move_path", &ops::move_path, nb::arg("from_mem"), nb::arg("to_mem"),
        "The memories a tile passes through from `from_mem` to `to_mem` over the chip's legal on-chip moves "
        "(empty when equal), or None.");
  m.def("check_platform", &codegen::check_platform, "Raises unless the platform can run here.");
  m.def("torch_codegen", &codegen::emit_torch, nb::arg("program"),
        "The program as an equivalent, runnable PyTorch script (pypto.debug.torch_codegen).");
  m.def(
      "pipeline_passes",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (auto& p : passes::default_pipeline()) out.emplace_back(p.name, p.doc);
        return out;
      },
      "The default pass pipeline in order: (name, description) pairs.");
  m.def(
      "kernel_pipeline_passes",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (auto& p : passes::kernel_pipeline()) out.emplace_back(p.name, p.doc);
        return out;
      },
      "The kernel pass pipeline (run on each lowered kernel) in order: (name, description) pairs.");
  m.def(
      "run_kernel_pass", [](const isa::Kernel& kernel, const std::string& name) { return passes::run_kernel_pass(name, kernel); },
      nb::arg("kernel"), nb::arg("name"), "A copy of `kernel` after the one kernel pass `name` (for pass tests).");
}

}  // namespace pypto::bindings
