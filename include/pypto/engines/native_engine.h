// The `native` engine: each kernel of a program becomes C++ that calls the optimised tile
// library (include/pypto/isa/optimized/), compiled with the host compiler, cached on disk
// and loaded with dlopen. Instructions without a fast path run through the reference
// library from inside the compiled code, so both engines compute the same programs.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pypto/isa/chip.h"
#include "pypto/isa/optimized/abi.h"
#include "pypto/isa/program.h"
#include "pypto/engines/core_runner.h"
#include "pypto/engines/tensor.h"

namespace pypto::engines {

// The C++ of a translation unit holding `kernels`, one `pto_kernel_<i>` each. A kernel the
// generator cannot express (an unexpected construct) gets no function: natives[i] = false.
std::string generate_native_source(const std::vector<const isa::Kernel*>& kernels, const isa::ChipSpec& chip,
                                   std::vector<bool>& natives);

// What the native engine makes of one kernel: whether it compiles at all (false: the whole
// kernel runs on `sim`), and its tile instructions with a fast path in the optimised library
// and those that call the reference library from the compiled code (mnemonics, in order).
struct NativeKernelReport {
  bool native = false;
  std::vector<std::string> fast, reference;
};
NativeKernelReport native_kernel_report(const isa::Kernel& kernel, const isa::ChipSpec& chip);

// The optimised library's paths as the kernel compiler builds them on this machine, from a
// probe kernel compiled once (disk cache): "vector=avx512 f16=f16c" (vector: avx512 / avx2 /
// portable, the SIMD width of vec.h; f16: f16c / portable, half.h's conversions).
std::string native_library_paths();

// A loaded shared object: one entry point per kernel (null: run that kernel on `sim`).
struct NativeModule {
  void* handle = nullptr;
  std::vector<pto_kernel_fn> entries;
  std::string library_path;
  std::vector<std::shared_ptr<NativeModule>> parts;  // per-kernel modules whose entries these are
  const pto_support* support = nullptr;              // the data movement of its compile target
};

// The data movement built with the package for the x86-64 level of the current compile
// target (PYPTO_NATIVE_ISA; for "native", the highest level this CPU runs): the table a
// kernel compiled now calls (pto_frame::support, optimized/data_movement.h).
const pto_support* native_support();

// Compiles (or finds in the disk cache) the C++ `source` and loads it; `count` entry points
// pto_kernel_0.. are looked up where natives[i]. Compiler failures are user-visible errors
// naming the generated file and quoting the compiler.
std::shared_ptr<NativeModule> load_native_module(const std::string& source, const std::vector<bool>& natives);

// The compiled form of all kernels of a program for one chip (cached in the process): one
// shared object per kernel, compiled in parallel, with progress on a terminal.
std::shared_ptr<NativeModule> native_module_for(const std::vector<const isa::Kernel*>& kernels, const isa::ChipSpec& chip);

// Where the generated code finds the library headers (a directory holding pypto/isa/...).
void set_native_include_dir(const std::string& dir);
std::string native_include_dir();
// The on-disk cache directory ("" when PYPTO_CACHE=0).
std::string native_cache_dir();
// The matmul fast path kernels compile to now, by operand dtype ("FP32", "FP16", "BF16"; and
// "isa": the PYPTO_NATIVE_ISA target), as matmul.h names them (a probe compiled and cached
// like a kernel, once per setting).
std::map<std::string, std::string> native_matmul_paths();

// One worker's virtual core for the native engine.
class NativeCore : public CoreRunner {
 public:
  NativeCore(const isa::ChipSpec& chip, std::shared_ptr<NativeModule> module, std::vector<const isa::Kernel*> kernels);
  ~NativeCore() override;
  void run(const isa::Kernel& kernel, const std::vector<HostArg>& args) override;

  // Runs instruction `pc` of the current kernel through the reference library.
  void run_reference(int pc, long long* int_regs, double* float_regs);

 private:
  isa::ChipSpec chip_;
  std::shared_ptr<NativeModule> module_;
  std::vector<const isa::Kernel*> kernels_;
  unsigned char* buffers_[kMemorySpaceCount] = {};
  unsigned char* scratch_ = nullptr;
  long long scratch_bytes_ = 0;
  const isa::Kernel* current_ = nullptr;
  const std::vector<HostArg>* current_args_ = nullptr;
  std::unique_ptr<CoreRunner> sim_;
};

}  // namespace pypto::engines
