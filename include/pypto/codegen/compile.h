// The compiler driver: parsed program -> pass pipeline -> instruction streams.
#pragma once
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "pypto/ir/stmt.h"
#include "pypto/isa/program.h"

namespace pypto::codegen {

struct CompileOptions {
  std::string platform = "a2a3sim";
  bool keep_pass_results = false;  // record the program after each pass that changed it (dump_passes)
  bool verify = true;              // run the verifier between passes ("basic"; off when false)
};

struct CompiledProgram {
  ir::ProgramPtr lowered;                                         // after the whole pipeline
  isa::HostProgram host;                                          // what the engines run
  std::string platform;
  std::string entry;                                              // the orchestration function
  std::vector<std::string> param_names;
  std::vector<std::pair<std::string, ir::ProgramPtr>> pass_results;  // "NN_after_<Pass>" -> program, changed passes only
  // ("NN_after_<KernelPass>", kernel name, its .pto text after the pass), changed kernels only;
  // NN continues the program pipeline's numbering.
  std::vector<std::tuple<std::string, std::string, std::string>> kernel_pass_results;
  // Seconds each pass of the pipeline took, in order, then "LowerProgram" (lowering to
  // instruction streams): RunConfig(compile_profiling=True) writes them to report/pipeline_profile.*
  std::vector<std::pair<std::string, double>> pass_times;
};

// Checks the platform, runs the pipeline and lowers to instruction streams. The entry is the
// program's Orchestration function. Throws PyptoError on user errors.
CompiledProgram compile_program(const ir::ProgramPtr& program, const CompileOptions& options);

// Fails with a user error unless `platform` is one the simulator can run.
void check_platform(const std::string& platform);

}  // namespace pypto::codegen
