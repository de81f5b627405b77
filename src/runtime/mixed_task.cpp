// A mixed task: the group's parts (1 AIC + 1 or 2 AIV kernels) run on their own threads for
// the duration of the task, each on a virtual core of its own, sharing one ClusterFifos.
// Part 0 runs on the calling worker; the others on threads started for the task.
#include "pypto/runtime/mixed_task.h"

#include <exception>
#include <map>
#include <variant>
#include <thread>

#include "pypto/engines/cancel.h"
#include "pypto/engines/cluster.h"
#include "pypto/engines/sim_engine.h"

namespace pypto::runtime {

using namespace engines;  // the runtime drives the engines: their types unqualified

MixedCores::MixedCores() = default;
MixedCores::~MixedCores() = default;

std::vector<HostArg> part_args(const isa::Kernel& part_kernel, const isa::KernelPart& part, const std::vector<HostArg>& args) {
  std::vector<HostArg> out;
  out.reserve(part.args.size());
  for (size_t a = 0; a < part.args.size(); ++a) {
    const isa::PartArg& pa = part.args[a];
    if (pa.param >= 0) {
      out.push_back(args.at(pa.param));
    } else {
      const bool is_float = a < part_kernel.params.size() && dtype_is_float(part_kernel.params[a].dtype);
      out.push_back(is_float ? HostArg::of_float(pa.constant.f) : HostArg::of_int(pa.constant.i));
    }
  }
  return out;
}

MixedResult run_mixed_task(const isa::Kernel& group, const std::vector<const isa::Kernel*>& part_kernels,
                           const std::vector<HostArg>& args, const isa::ChipSpec& chip, const CoreFactory& factory,
                           MixedCores& cores, bool record_events) {
  const size_t n = group.parts.size();
  if (part_kernels.size() != n)
    fail(ErrorKind::kRuntime, {}, "mixed task '" + group.name + "' has " + std::to_string(n) + " parts but " +
                                      std::to_string(part_kernels.size()) + " part kernels were given",
         "report this bug");
  std::vector<std::string> names(3);
  MixedResult result;
  for (size_t i = 0; i < n; ++i) {
    names[static_cast<int>(group.parts[i].role)] = part_kernels[i]->name;
    result.roles.push_back(group.parts[i].role);
  }
  // Pipes set up with pl.*_initialize_pipe(slot_num=N, id=k) get N slots (the deepest both sides ask for).
  std::map<int64_t, int> depths;
  for (const isa::Kernel* k : part_kernels)
    for (const isa::Instr& in : k->code) {
      if (in.mnemonic != "PIPE_INIT") continue;
      const int64_t id = std::get<int64_t>(in.attrs.at("id")), slots = std::get<int64_t>(in.attrs.at("slot_num"));
      if (slots > 0) depths[id] = std::max(depths[id], static_cast<int>(slots));
    }
  ClusterFifos fifos(group.name, chip.fifo_depth, names, depths);
  std::vector<std::vector<HostArg>> part_argv(n);
  for (size_t i = 0; i < n; ++i) part_argv[i] = part_args(*part_kernels[i], group.parts[i], args);
  // One core per role, kept by the worker.
  const bool sim = !factory;
  for (size_t i = 0; i < n; ++i) {
    const size_t r = static_cast<size_t>(group.parts[i].role);
    if (sim) {
      if (cores.sims.size() <= r) cores.sims.resize(r + 1);
      if (!cores.sims[r]) cores.sims[r] = std::make_unique<SimEngine>(chip);
    } else {
      if (cores.runners.size() <= r) cores.runners.resize(r + 1);
      if (!cores.runners[r]) cores.runners[r] = factory();
    }
  }
  std::vector<std::exception_ptr> errors(n);
  result.timelines.resize(n);
  const std::atomic<bool>* cancel = current_cancel_flag();  // the task's; each part thread checks it
  auto run_part = [&](size_t i) {
    const int role = static_cast<int>(group.parts[i].role);
    ClusterPart part{&fifos, role, {}};
    ClusterPartScope scope(&part);
    CancelScope cancel_scope(cancel);
    try {
      if (sim) {
        SimEngine& core = *cores.sims[role];
        core.set_record_events(record_events);
        core.run(*part_kernels[i], part_argv[i]);
        result.timelines[i] = core.timeline();
      } else {
        cores.runners[role]->run(*part_kernels[i], part_argv[i]);
      }
      fifos.finished(role);
    } catch (const PartCancelled&) {
      fifos.finished(role);  // stopped because another part failed; that part reports
    } catch (...) {
      errors[i] = std::current_exception();
      fifos.failed(role);
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 1; i < n; ++i) threads.emplace_back(run_part, i);
  run_part(0);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  fifos.check_drained();
  if (sim) {
    result.cycles = 0;
    for (const Timeline& t : result.timelines) result.cycles = std::max(result.cycles, t.end_cycles);
  }
  return result;
}

}  // namespace pypto::runtime
