// The host side of a run: validates platform and engine, binds arguments to tensor slots,
// interprets the orchestration's host code and hands kernel calls to the task pool.
#include "pypto/runtime/runtime.h"
#include "pypto/isa/validate.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <deque>
#include <map>
#include <memory>
#include <variant>

#include "pypto/runtime/dfx.h"
#include "pypto/engines/native_engine.h"
#include "pypto/engines/scalar_machine.h"
#include "pypto/engines/sim_engine.h"
#include "pypto/runtime/swimlane.h"
#include "pypto/runtime/task_pool.h"
#include "pypto/runtime/trace.h"

namespace pypto::runtime {

using namespace engines;  // the runtime drives the engines: their types unqualified

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Bound tensor slots of a run. Slots created by kAllocTensor own their zeroed memory through
// a shared pointer that the slot and every task using the tensor hold: the memory is freed
// when the host is past the slot's last use and the last task using it has finished.
struct TensorSlots {
  std::vector<TensorView> views;
  std::vector<std::shared_ptr<void>> owners;  // per slot; null for parameters (a view: its parent's)
  std::vector<bool> is_view;                  // per slot: made by kTensorView
  std::shared_ptr<std::atomic<int64_t>> live_bytes = std::make_shared<std::atomic<int64_t>>(0);
  std::shared_ptr<std::atomic<int64_t>> peak_bytes = std::make_shared<std::atomic<int64_t>>(0);
  size_t created = 0;
};

DataType alloc_dtype(const isa::Instr& in, const isa::ParamDesc* declared) {
  auto it = in.attrs.find("dtype");
  if (it != in.attrs.end()) {
    if (auto* d = std::get_if<DataType>(&it->second)) return *d;
    if (auto* s = std::get_if<std::string>(&it->second))
      if (auto d = dtype_from_name(*s)) return *d;
  }
  if (declared) return declared->dtype;
  fail(ErrorKind::kRuntime, in.span, "tensor allocation without a dtype", "this is a code generation bug; please report it");
}

// The shape of a kAllocTensor: the static "shape" attr, or (pl.create_tensor with a run-time
// extent) the scalar operands ins[0], evaluated now. A negative extent is an error at the line.
std::vector<int64_t> alloc_shape(const isa::Instr& in, const isa::ParamDesc* declared, const ScalarMachine& regs) {
  auto it = in.attrs.find("shape");
  std::vector<int64_t> shape;
  if (it != in.attrs.end() && std::holds_alternative<std::vector<int64_t>>(it->second))
    shape = std::get<std::vector<int64_t>>(it->second);
  else if (declared)
    shape = declared->shape;
  const bool dynamic = !in.ins.empty() && in.ins[0].kind == isa::Operand::kScalarList;
  if (dynamic) {
    shape.clear();
    for (const isa::Scalar& s : in.ins[0].list) shape.push_back(regs.get(s).as_int());
  }
  auto shape_text = [&] {
    std::string t = "[";
    for (size_t d = 0; d < shape.size(); ++d) t += (d ? ", " : "") + std::to_string(shape[d]);
    return t + "]";
  };
  const std::string name = declared ? "'" + declared->name + "' " : std::string();
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0) {
      if (!dynamic)
        fail(ErrorKind::kRuntime, in.span, "pl.create_tensor needs a static shape here (a dimension is " + std::to_string(shape[d]) + ")",
             "give the tensor a shape known at compile time");
      fail(ErrorKind::kValue, in.span,
           "pl.create_tensor of tensor " + name + "with shape " + shape_text() + ": extent " + std::to_string(shape[d]) +
               " of dimension " + std::to_string(d) + " is negative",
           "compute a non-negative extent (check the value the shape is computed from, e.g. with pl.max(n, 0))");
    }
  return shape;
}

// The bytes of a tensor of `shape` and `dtype`, or an error at the line when that overflows or
// exceeds the memory of this machine (the chip model's global memory is the host's).
int64_t alloc_bytes(const isa::Instr& in, const std::string& name, const std::vector<int64_t>& shape, DataType dtype) {
  static const int64_t memory = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : std::numeric_limits<int64_t>::max();
  }();
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d) text += (d ? ", " : "") + std::to_string(shape[d]);
  text += "]";
  int64_t bytes = dtype_bytes(dtype);
  bool over = false, empty = false;
  for (int64_t d : shape) empty = empty || d == 0;
  for (int64_t d : shape) {
    if (empty || over) break;
    if (bytes > memory / d) over = true;
    else bytes *= d;
  }
  if (empty) bytes = 0;
  if (over || bytes > memory)
    fail(ErrorKind::kCapacity, in.span,
         "pl.create_tensor of tensor '" + name + "' with shape " + text + " " + dtype_name(dtype) + " needs " +
             (over ? std::string("more bytes than fit in 64 bits or in") : std::to_string(bytes) + " bytes, more than") +
             " this machine's memory (" + std::to_string(memory) + " bytes)",
         "check the extents the shape is computed from; split the data into smaller tensors");
  return bytes;
}

// Every element of `v` set to `value` (pl.create_tensor(..., init_value=)); zero needs nothing.
void fill_tensor(TensorView& v, const AttrValue& value) {
  const double f = std::holds_alternative<double>(value)  ? std::get<double>(value)
                   : std::holds_alternative<bool>(value) ? (std::get<bool>(value) ? 1.0 : 0.0)
                                                          : static_cast<double>(std::get<int64_t>(value));
  const int64_t i = std::holds_alternative<int64_t>(value) ? std::get<int64_t>(value) : static_cast<int64_t>(f);
  if (f == 0 && i == 0) return;
  const int64_t n = v.numel(), size = dtype_bytes(v.dtype);
  uint8_t* p = static_cast<uint8_t*>(v.data);
  for (int64_t k = 0; k < n; ++k, p += size) {
    if (v.dtype == DataType::FP32) {
      float x = static_cast<float>(f);
      std::memcpy(p, &x, 4);
    } else {
      std::memcpy(p, &i, static_cast<size_t>(size));  // little-endian: the low bytes
    }
  }
}

void allocate(TensorSlots& slots, const isa::HostProgram& program, const isa::Instr& in, const ScalarMachine& regs) {
  const int slot = in.outs.at(0).index;
  if (slot < 0) fail(ErrorKind::kRuntime, in.span, "tensor allocation into slot " + std::to_string(slot), "report this bug");
  if (static_cast<size_t>(slot) >= slots.views.size()) slots.views.resize(slot + 1);
  const isa::ParamDesc* declared = static_cast<size_t>(slot) < program.tensors.size() ? &program.tensors[slot] : nullptr;
  TensorView v;
  v.dtype = alloc_dtype(in, declared);
  v.shape = alloc_shape(in, declared, regs);
  v.strides = row_major_strides(v.shape);
  v.name = declared ? declared->name : "tensor" + std::to_string(slot);
  const int64_t bytes = alloc_bytes(in, v.name, v.shape, v.dtype);
  auto live = slots.live_bytes, peak = slots.peak_bytes;
  const int64_t now = (*live += bytes);
  int64_t p = peak->load();
  while (now > p && !peak->compare_exchange_weak(p, now)) {}
  std::shared_ptr<uint8_t> mem(static_cast<uint8_t*>(std::calloc(std::max<int64_t>(bytes, 1), 1)), [live, bytes](uint8_t* q) {
    *live -= bytes;
    std::free(q);
  });
  if (!mem) fail(ErrorKind::kCapacity, in.span, "cannot allocate " + std::to_string(bytes) + " bytes for tensor '" + v.name + "'",
                 "make the tensor smaller");
  v.data = mem.get();
  if (auto it = in.attrs.find("init_value"); it != in.attrs.end()) fill_tensor(v, it->second);  // create(init_value=)
  if (static_cast<size_t>(slot) >= slots.owners.size()) slots.owners.resize(slot + 1);
  slots.owners[slot] = std::move(mem);
  ++slots.created;
  slots.views[slot] = std::move(v);
}

const TensorView& slot_tensor(const TensorSlots& slots, int slot, const isa::Instr& in) {
  if (slot < 0 || static_cast<size_t>(slot) >= slots.views.size() || slots.views[slot].data == nullptr)
    fail(ErrorKind::kRuntime, in.span, "tensor slot " + std::to_string(slot) + " is used before it holds a tensor",
         "create the tensor (pl.create_tensor) before passing it to a kernel");
  return slots.views[slot];
}

std::vector<int64_t> int_list_attr(const isa::Instr& in, const char* key);

// kTensorView: slot outs[0] = a view of slot ins[0] (src/engines/views.cpp builds and checks it).
void make_view(TensorSlots& slots, const isa::HostProgram& program, const isa::Instr& in, const ScalarMachine& regs) {
  const int parent_slot = in.ins.at(0).index, slot = in.outs.at(0).index;
  const TensorView parent = slot_tensor(slots, parent_slot, in);
  auto values = [&](size_t i) {
    std::vector<int64_t> v;
    if (i < in.ins.size())
      for (const isa::Scalar& s : in.ins[i].list) v.push_back(regs.get(s).as_int());
    return v;
  };
  const std::string name = static_cast<size_t>(slot) < program.tensors.size() ? program.tensors[slot].name : "view";
  const std::string kind = std::get<std::string>(in.attrs.at("view"));
  TensorView v;
  if (kind == "slice")
    v = slice_view(parent, values(1), values(2), int_list_attr(in, "drop_dims"), name, in.span, in.attrs.count("clamp") > 0,
                   values(3));
  else if (kind == "transpose") {
    const std::vector<int64_t> axes = int_list_attr(in, "axes");
    v = transpose_view(parent, axes.at(0), axes.at(1), name, in.span);
  } else if (kind == "reshape") v = reshape_view(parent, values(1), name, in.span);
  else v = reinterpret_view(parent, std::get<DataType>(in.attrs.at("dtype")), values(1), name, in.span);
  if (static_cast<size_t>(slot) >= slots.views.size()) slots.views.resize(slot + 1);
  if (static_cast<size_t>(slot) >= slots.owners.size()) slots.owners.resize(slot + 1);
  if (static_cast<size_t>(slot) >= slots.is_view.size()) slots.is_view.resize(slot + 1);
  slots.owners[slot] = static_cast<size_t>(parent_slot) < slots.owners.size() ? slots.owners[parent_slot] : nullptr;
  slots.is_view[slot] = true;
  slots.views[slot] = std::move(v);
}

bool is_block_param(const isa::ParamDesc& p) { return !p.is_tensor && (p.name == "__block_idx" || p.name == "__block_num"); }

std::string int_list(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

// A tensor parameter declared with pl.TensorView(stride=, layout=) takes only a tensor that
// lies that way in memory (element strides; a dim of extent 1 has no step to check).
void check_declared_strides(const std::string& callee, const std::vector<isa::ParamDesc>& params,
                            const std::vector<HostArg>& args, const Span& span) {
  for (size_t i = 0; i < params.size() && i < args.size(); ++i) {
    const isa::ParamDesc& p = params[i];
    if (!p.is_tensor || p.stride.empty() || args[i].kind != HostArg::kTensor) continue;
    const TensorView& t = args[i].tensor;
    bool ok = t.strides.size() == p.stride.size();
    for (size_t d = 0; ok && d < p.stride.size(); ++d)
      ok = t.shape[d] <= 1 || t.strides[d] == p.stride[d];
    if (ok) continue;
    const std::string layout = p.dn ? "pl.TensorLayout.DN" : "pl.TensorLayout.ND";
    fail(ErrorKind::kValue, span,
         "tensor parameter '" + p.name + "' of '" + callee + "' is declared with pl.TensorView(stride=" +
             int_list(p.stride) + ", layout=" + layout + ") but the tensor passed has strides " + int_list(t.strides) +
             " (elements)",
         p.dn ? "pass the data column-major in the last two dims (np.asfortranarray(x)), or declare the layout the "
                "data has (drop the pl.TensorView or write its strides)"
              : "pass a tensor with those strides (e.g. a column slice of a wider array), or declare the layout the "
                "data has (drop the pl.TensorView or write its strides)");
  }
}

// The arguments of a kCall, in the callee's parameter order, written over `args` in place (its
// elements keep their buffers from the previous call). SPMD parameters (__block_idx,
// __block_num) may be left out of the call; the runtime fills them per block.
void call_args(std::vector<HostArg>& args, const isa::Kernel& kernel, const isa::Instr& in, const TensorSlots& slots,
               const ScalarMachine& regs) {
  size_t hidden = 0;
  for (const isa::ParamDesc& p : kernel.params) hidden += is_block_param(p);
  const bool omitted = hidden > 0 && in.ins.size() + hidden == kernel.params.size();
  if (in.ins.size() != kernel.params.size() && !omitted)
    fail(ErrorKind::kRuntime, in.span,
         "call of kernel '" + kernel.name + "' passes " + std::to_string(in.ins.size()) + " operands for " +
             std::to_string(kernel.params.size()) + " parameters",
         "pass one argument per parameter");
  args.resize(kernel.params.size());
  size_t next = 0;
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    if (omitted && is_block_param(kernel.params[i])) {
      args[i].set_int(0);
      continue;
    }
    const isa::Operand& op = in.ins[next++];
    if (op.kind == isa::Operand::kTensor) {
      args[i].set_tensor(slot_tensor(slots, op.index, in));
    } else if (op.kind == isa::Operand::kScalar) {
      const ScalarValue v = regs.get(op.scalar);
      if (dtype_is_float(kernel.params[i].dtype)) args[i].set_float(v.as_double());
      else args[i].set_int(v.as_int());
    } else {
      fail(ErrorKind::kRuntime, in.span, "kernel call operand " + std::to_string(i) + " must be a tensor or a scalar",
           "report this bug");
    }
  }
  check_declared_strides(kernel.name, kernel.params, args, in.span);
}

std::vector<int64_t> int_list_attr(const isa::Instr& in, const char* key) {
  auto it = in.attrs.find(key);
  if (it == in.attrs.end()) return {};
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  if (auto* v = std::get_if<int64_t>(&it->second)) return {*v};
  fail(ErrorKind::kRuntime, in.span, std::string("call attribute '") + key + "' must be a list of integers", "report this bug");
}

// For each pc, the created-tensor slots whose last use (by the host code) is that pc: a use
// inside a loop (counted or while) that does not create the tensor first keeps it alive to the loop's end.
std::vector<std::vector<int>> release_points(const isa::HostProgram& program) {
  const auto& code = program.code;
  const int n = static_cast<int>(code.size());
  std::vector<std::pair<int, int>> loops;  // (begin pc, end pc)
  for (int pc = 0; pc < n; ++pc)
    if ((code[pc].kind == isa::InstrKind::kLoopBegin || code[pc].kind == isa::InstrKind::kWhileBegin) &&
        code[pc].jump >= 1 && code[pc].jump <= n)
      loops.push_back({pc, code[pc].jump - 1});
  std::map<int, std::vector<int>> allocs, uses;
  std::vector<bool> returned;
  for (int pc = 0; pc < n; ++pc) {
    const isa::Instr& in = code[pc];
    // A view (kTensorView) holds its parent's memory from where it is made to its own last use.
    if ((in.kind == isa::InstrKind::kAllocTensor || in.kind == isa::InstrKind::kTensorView) && !in.outs.empty())
      allocs[in.outs[0].index].push_back(pc);
    if (in.kind == isa::InstrKind::kCall || in.kind == isa::InstrKind::kScalarRead || in.kind == isa::InstrKind::kScalarWrite ||
        in.kind == isa::InstrKind::kTensorView || in.kind == isa::InstrKind::kTensorCopy)
      for (const isa::Operand& op : in.ins)
        if (op.kind == isa::Operand::kTensor) uses[op.index].push_back(pc);
    if (in.kind == isa::InstrKind::kTensorCopy && !in.outs.empty()) uses[in.outs[0].index].push_back(pc);
    // predicate=(t[i] OP v): the launch reads t when it is dispatched (its task keeps t alive)
    if (auto it = in.attrs.find("predicate"); in.kind == isa::InstrKind::kCall && it != in.attrs.end())
      if (auto* pr = std::get_if<std::vector<int64_t>>(&it->second); pr && !pr->empty())
        uses[static_cast<int>((*pr)[0])].push_back(pc);
  }
  std::vector<std::vector<int>> at(n);
  for (const auto& [slot, alloc_pcs] : allocs) {
    if (std::find(program.returns.begin(), program.returns.end(), slot) != program.returns.end()) continue;
    int last = *std::max_element(alloc_pcs.begin(), alloc_pcs.end());
    for (int u : uses[slot]) {
      int extended = u;
      for (const auto& [b, e] : loops) {
        if (!(b < u && u < e)) continue;
        const int begin = b;  // lambdas capture structured bindings only from clang 16
        const bool fresh = std::any_of(alloc_pcs.begin(), alloc_pcs.end(), [&](int a) { return begin < a && a < u; });
        if (!fresh) extended = std::max(extended, e);
      }
      last = std::max(last, extended);
    }
    at[last].push_back(slot);
  }
  return at;
}

// The kCall instruction index (0, 1, ... in code order) of each pc; -1 for other kinds.
std::vector<int> call_ordinals(const isa::HostProgram& program) {
  std::vector<int> ord(program.code.size(), -1);
  int k = 0;
  for (size_t pc = 0; pc < program.code.size(); ++pc)
    if (program.code[pc].kind == isa::InstrKind::kCall) ord[pc] = k++;
  return ord;
}

std::string call_name(const isa::HostProgram& program, const std::vector<int>& ordinals, int call) {
  for (size_t pc = 0; pc < program.code.size(); ++pc)
    if (ordinals[pc] == call) {
      const isa::Instr& in = program.code[pc];
      std::string k = in.callee >= 0 && static_cast<size_t>(in.callee) < program.kernels.size() ? program.kernels[in.callee].name : "?";
      return "call #" + std::to_string(call) + " (" + k + (in.span.line > 0 ? " at " + in.span.str() : "") + ")";
    }
  return "call #" + std::to_string(call) + " (no such call)";
}

// An explicit dependency that can never be satisfied: the message names the calls involved
// and the cycle they form, if any.
[[noreturn]] void unsatisfiable_dependency(const isa::HostProgram& program, const std::vector<int>& ordinals, int from,
                                           int to, const Span& span) {
  std::map<int, std::vector<int64_t>> deps;
  for (size_t pc = 0; pc < program.code.size(); ++pc)
    if (ordinals[pc] >= 0) deps[ordinals[pc]] = int_list_attr(program.code[pc], "deps");
  // Follow explicit dependencies from `to` looking for `from`.
  std::vector<int> path{from, to};
  std::vector<int> stack{to};
  std::map<int, int> parent;
  parent[to] = from;
  bool cycle = false;
  while (!stack.empty() && !cycle) {
    const int c = stack.back();
    stack.pop_back();
    for (int64_t d : deps[c]) {
      if (d == from) {
        cycle = true;
        path.clear();
        for (int x = c; x != from; x = parent[x]) path.insert(path.begin(), x);
        path.insert(path.begin(), from);
        path.push_back(from);
        break;
      }
      if (!parent.count(static_cast<int>(d))) {
        parent[static_cast<int>(d)] = c;
        stack.push_back(static_cast<int>(d));
      }
    }
  }
  std::string msg = "deadlock: " + call_name(program, ordinals, from) + " depends on " + call_name(program, ordinals, to) +
                    ", which has not run before it";
  if (cycle) {
    msg += "; the explicit dependencies form a cycle: ";
    for (size_t i = 0; i < path.size(); ++i) msg += (i ? " -> " : "") + call_name(program, ordinals, path[i]);
  }
  fail(ErrorKind::kRuntime, span, msg,
       "a task can only depend on tasks submitted before it: reorder the calls, make sure the loop or branch that "
       "launches the task it depends on runs (a loop of zero trips or an arm not taken launches nothing), or drop the "
       "dependency");
}

// Outputs are written in place element by element: a view whose elements share memory (a
// broadcast or expanded array) cannot hold a result.
void check_outputs(const std::string& callee, const std::vector<isa::ParamDesc>& params, const std::vector<HostArg>& args) {
  for (size_t i = 0; i < params.size() && i < args.size(); ++i) {
    if (!params[i].is_tensor || params[i].dir == ParamDirection::In || args[i].kind != HostArg::kTensor) continue;
    const std::string why = self_overlap(args[i].tensor.shape, args[i].tensor.strides);
    if (!why.empty())
      fail(ErrorKind::kValue, {}, "output '" + params[i].name + "' of '" + callee + "' has elements that share memory: " + why,
           "pass an array with its own memory for every element, e.g. np.empty(shape) or torch.empty(shape)");
  }
}

// An input whose memory partly overlaps an output of the same call (a = buf[0:64] and
// c = buf[16:80]) would read elements the call has already written: like numpy's ufuncs,
// the call reads a copy of it made first (kept in `owned` for the call). The same view as
// an output (in-place: same data, shape and strides) is read as it is.
std::vector<HostArg> copy_overlapping_inputs(const std::vector<isa::ParamDesc>& params, std::vector<HostArg> args,
                                             std::vector<std::unique_ptr<uint8_t[]>>& owned) {
  for (size_t i = 0; i < params.size() && i < args.size(); ++i) {
    if (!params[i].is_tensor || params[i].dir != ParamDirection::In || args[i].kind != HostArg::kTensor) continue;
    const TensorView& in = args[i].tensor;
    const auto [lo, hi] = in.byte_range();
    if (lo == hi) continue;
    bool overlap = false;
    for (size_t j = 0; j < params.size() && j < args.size() && !overlap; ++j) {
      if (!params[j].is_tensor || params[j].dir == ParamDirection::In || args[j].kind != HostArg::kTensor) continue;
      const TensorView& out = args[j].tensor;
      const auto [olo, ohi] = out.byte_range();
      if (olo == ohi || ohi <= lo || hi <= olo) continue;
      const bool same = out.data == in.data && out.shape == in.shape && out.strides == in.strides && out.dtype == in.dtype;
      overlap = !same;
    }
    if (!overlap) continue;
    const int64_t bytes = in.numel() * dtype_bytes(in.dtype);
    owned.push_back(std::make_unique<uint8_t[]>(static_cast<size_t>(bytes)));
    TensorView copy = in;
    copy.data = owned.back().get();
    copy.strides = row_major_strides(in.shape);
    copy.origin = nullptr;
    copy_tensor(copy, in, {});
    args[i].tensor = std::move(copy);
  }
  return args;
}

}  // namespace

std::vector<std::string> engine_names() { return {"native", "sim"}; }

isa::ChipSpec resolve_run_target(const RunOptions& options) {
  if (options.engine != "sim" && options.engine != "native")
    fail(ErrorKind::kPlatform, {}, "unknown engine '" + options.engine + "'; available engines: " + join(engine_names()),
         "use engine=\"sim\"");
  if (auto chip = isa::chip_for_platform(options.platform)) return *chip;
  if (isa::is_hardware_platform(options.platform))
    fail(ErrorKind::kPlatform, {}, "platform '" + options.platform + "' is a real Ascend NPU, which this build cannot drive",
         "use a simulated platform: " + join(isa::simulated_platforms()));
  fail(ErrorKind::kPlatform, {}, "unknown platform '" + options.platform + "'",
       "use one of: " + join(isa::simulated_platforms()));
}

void run_kernel(const isa::Kernel& kernel, const std::vector<HostArg>& args0, const RunOptions& options) {
  const isa::ChipSpec chip = resolve_run_target(options);
  if (kernel.core == FunctionType::Group)
    fail(ErrorKind::kValue, {}, "'" + kernel.name + "' is a Group kernel (a mixed task); its parts run only inside a host program",
         "run the program whose orchestration calls it (pypto.runtime.run)");
  isa::validate_kernel(kernel, chip);
  check_args(kernel.name, kernel.params, args0);
  check_outputs(kernel.name, kernel.params, args0);
  check_declared_strides(kernel.name, kernel.params, args0, {});
  std::vector<std::unique_ptr<uint8_t[]>> copies;
  const std::vector<HostArg> args = copy_overlapping_inputs(kernel.params, args0, copies);
  // The modelled timeline comes from the sim engine: a trace request runs there.
  if (options.engine == "native" && options.trace_path.empty()) {
    std::vector<const isa::Kernel*> kernels{&kernel};
    NativeCore core(chip, native_module_for(kernels, chip), kernels);
    core.run(kernel, args);
    return;
  }
  SimEngine core(chip);
  core.set_record_events(!options.trace_path.empty());
  core.run(kernel, args);
  TraceRecorder trace;
  trace.add(0, core.timeline());
  if (!options.trace_path.empty()) trace.write_chrome_json(options.trace_path);
  if (options.stats) options.stats->modelled_cycles = trace.makespan();
}

// A program made ready to run: what every run of it needs, computed once.
struct PreparedProgram {
  const isa::HostProgram* program = nullptr;
  isa::ChipSpec chip;
  std::vector<KernelFootprint> footprints;        // per kernel (a Group kernel: its parts' union)
  std::vector<std::vector<const isa::Kernel*>> part_kernels;  // per Group kernel: its parts' kernels
  std::vector<std::vector<int>> releases;         // per pc: created-tensor slots last used there
  std::vector<int> ordinals;                      // per pc: kCall ordinal, or -1
  bool task_values = false;                       // some launch records its task id (launch_reg)
  CoreFactory native;                             // engine "native": a core running the compiled kernels
  uint64_t id = 0;                                // unique per preparation (keys the workers' cores)
};

namespace {

std::atomic<uint64_t> next_prepared_id{1};

std::shared_ptr<PreparedProgram> prepare(const isa::HostProgram& program, const isa::ChipSpec& chip, const std::string& engine) {
  isa::validate_host_program(program, chip);
  auto p = std::make_shared<PreparedProgram>();
  p->program = &program;
  p->chip = chip;
  p->task_values = std::any_of(program.code.begin(), program.code.end(),
                               [](const isa::Instr& i) { return i.attrs.count("launch_reg") > 0; });
  p->footprints.reserve(program.kernels.size());
  for (const isa::Kernel& k : program.kernels) p->footprints.push_back(analyse_footprint(k));
  // A mixed task touches what its parts touch (validation checked the part indices).
  p->part_kernels.resize(program.kernels.size());
  for (size_t i = 0; i < program.kernels.size(); ++i) {
    const isa::Kernel& k = program.kernels[i];
    if (k.core != FunctionType::Group) continue;
    std::vector<const KernelFootprint*> parts;
    for (const isa::KernelPart& part : k.parts) {
      parts.push_back(&p->footprints[part.kernel]);
      p->part_kernels[i].push_back(&program.kernels[part.kernel]);
    }
    p->footprints[i] = compose_group_footprint(k, parts);
  }
  p->releases = release_points(program);
  p->ordinals = call_ordinals(program);
  if (engine == "native") {
    std::vector<const isa::Kernel*> kernels;  // a Group kernel has no code: its parts run
    for (const isa::Kernel& k : program.kernels)
      if (k.core != FunctionType::Group) kernels.push_back(&k);
    auto module = native_module_for(kernels, chip);
    p->native = [chip, module, kernels] { return std::make_unique<NativeCore>(chip, module, kernels); };
  }
  p->id = next_prepared_id++;
  return p;
}

bool attr_flag(const isa::Instr& in, const char* key) {
  auto it = in.attrs.find(key);
  if (it == in.attrs.end()) return false;
  if (auto* b = std::get_if<bool>(&it->second)) return *b;
  if (auto* i = std::get_if<int64_t>(&it->second)) return *i != 0;
  return false;
}

// Interprets the host code of `prep` on `pool` (reset for this run): scalar control flow,
// tensor allocation, kernel calls submitted as tasks. Returns once every task has finished;
// on an error the pool's remaining tasks are cancelled before anything they use is released.
void execute(const PreparedProgram& prep, TaskPool& pool, const std::vector<HostArg>& args0, const RunOptions& options) {
  const isa::HostProgram& program = *prep.program;
  check_args(program.name, program.params, args0);
  check_outputs(program.name, program.params, args0);
  check_declared_strides(program.name, program.params, args0, {});
  std::vector<std::unique_ptr<uint8_t[]>> copies;  // outlives every task of the run
  const std::vector<HostArg> args = copy_overlapping_inputs(program.params, args0, copies);

  TensorSlots slots;  // outlives every task of the run (the pool is drained before it goes)
  slots.views.resize(std::max(program.tensors.size(), program.params.size()));
  ScalarMachine regs(program.num_regs, program.reg_is_float);
  int next_reg = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind == HostArg::kTensor) slots.views[i] = args[i].tensor;
    else regs.set(next_reg++, args[i].scalar());
  }
  // The attributes of each call, looked up once per run instead of once per task.
  struct CallAttrs {
    bool manual = false;
    std::vector<int64_t> dump_args, deps, dep_regs, no_dep_args, predicate, block_num, block_num_reg, launch_reg;
  };
  std::vector<CallAttrs> call_attrs(program.code.size());
  for (size_t pc = 0; pc < program.code.size(); ++pc) {
    const isa::Instr& in = program.code[pc];
    if (in.kind != isa::InstrKind::kCall) continue;
    CallAttrs& c = call_attrs[pc];
    c.manual = attr_flag(in, "manual");
    c.dump_args = int_list_attr(in, "dump_args");
    c.deps = int_list_attr(in, "deps");
    c.dep_regs = int_list_attr(in, "dep_regs");
    c.no_dep_args = int_list_attr(in, "no_dep_args");
    c.predicate = int_list_attr(in, "predicate");
    c.block_num = int_list_attr(in, "block_num");
    c.block_num_reg = int_list_attr(in, "block_num_reg");
    c.launch_reg = int_list_attr(in, "launch_reg");
  }
  const std::vector<std::vector<int>>& releases = prep.releases;
  const std::vector<int>& ordinals = prep.ordinals;
  std::vector<std::vector<size_t>> call_tasks(program.code.size());  // by call ordinal: its latest tasks
  std::vector<std::vector<size_t>> launches;  // launch number - 1 -> its tasks (kept when task ids are read)
  std::vector<std::vector<ScalarValue>> arrays;  // pl.array.create: zero (no task) at the start of each run
  for (const isa::ArrayDesc& a : program.arrays)
    arrays.emplace_back(static_cast<size_t>(a.size), dtype_is_float(a.dtype) ? ScalarValue::of_float(0) : ScalarValue::of_int(0));
  auto element = [&](const isa::Instr& in) -> ScalarValue& {
    const auto a = static_cast<size_t>(std::get<int64_t>(in.attrs.at("array")));
    const int64_t i = regs.get(in.a).as_int();
    if (i < 0 || i >= static_cast<int64_t>(arrays[a].size()))
      fail(ErrorKind::kRuntime, in.span,
           "index " + std::to_string(i) + " is outside pl.array '" + program.arrays[a].name + "' of " +
               std::to_string(arrays[a].size()) + " elements",
           "keep the index in 0.." + std::to_string(arrays[a].size() - 1));
    return arrays[a][static_cast<size_t>(i)];
  };
  size_t freed_early = 0;
  // Every call fills these again; stage() takes what they hold and hands back the buffers of
  // an earlier task, so a call allocates nothing once the pool has run a program this size.
  TaskSpec spec, block_spec;

  // The modelled timeline comes from the sim engine: a trace request runs there.
  const bool native = prep.native && options.trace_path.empty();
  TraceRecorder trace;  // outlives every task of the run: workers record into it
  pool.reset(native ? prep.native : CoreFactory{}, prep.id * 2 + (native ? 1 : 0), options.ring_size,
             !options.swimlane_path.empty() || options.dep_gen || options.pmu || options.scope_stats);
  std::unique_ptr<ArgsDumper> dumper;
  if (options.dump_args > 0) {
    dumper = std::make_unique<ArgsDumper>(options.dfx_dir);
    pool.set_dump_hook(dumper->hook());
  }
  pool.set_trace(&trace, !options.trace_path.empty());
  pool.set_interrupt(options.interrupt);
  auto check_interrupt = [&](const Span& span) {
    if (options.interrupt && options.interrupt->load())
      fail(ErrorKind::kRuntime, span, "the run of '" + program.name + "' was interrupted",
           "outputs may be partly written; run the program again");
  };
  try {
    const int n = static_cast<int>(program.code.size());
    for (int pc = 0; pc < n;) {
      const isa::Instr& in = program.code[pc];
      int next = regs.step(program.code, pc);
      if (next < 0) {
        switch (in.kind) {
          case isa::InstrKind::kAllocTensor: allocate(slots, program, in, regs); break;
          case isa::InstrKind::kArrayGet: regs.set(in.dst_reg, element(in)); break;
          case isa::InstrKind::kArraySet: {
            const ScalarValue v = regs.get(in.b);
            const isa::ArrayDesc& desc = program.arrays[static_cast<size_t>(std::get<int64_t>(in.attrs.at("array")))];
            element(in) = dtype_is_float(desc.dtype) ? ScalarValue::of_float(v.as_double())
                          : desc.dtype == DataType::BOOL ? ScalarValue::of_int(v.as_int() != 0)
                                                         : ScalarValue::of_int(v.as_int());
            break;
          }
          case isa::InstrKind::kCall: {
            if (in.callee < 0 || static_cast<size_t>(in.callee) >= program.kernels.size())
              fail(ErrorKind::kRuntime, in.span, "call of kernel #" + std::to_string(in.callee) + ", which does not exist",
                   "report this bug");
            check_interrupt(in.span);
            if (pool.failed()) break;  // stop submitting; wait_all rethrows the error
            const isa::Kernel& kernel = program.kernels[in.callee];
            const CallAttrs& attrs = call_attrs[pc];
            spec.kernel = &kernel;  // `spec` is empty here: stage() left it recycled
            spec.footprint = &prep.footprints[in.callee];
            spec.parts = prep.part_kernels[in.callee];
            spec.span = &in.span;
            spec.manual = attrs.manual;
            call_args(spec.args, kernel, in, slots, regs);
            if (options.dump_args >= 2) {  // every tensor argument
              for (size_t i = 0; i < kernel.params.size(); ++i)
                if (kernel.params[i].is_tensor) spec.dump.push_back(static_cast<int>(i));
            } else if (options.dump_args == 1) {  // those tagged by pl.dump_tag / dumps=
              for (int64_t i : attrs.dump_args) spec.dump.push_back(static_cast<int>(i));
            }
            for (int64_t d : attrs.deps) {
              if (d < 0 || static_cast<size_t>(d) >= call_tasks.size() || call_tasks[d].empty())
                unsatisfiable_dependency(program, ordinals, ordinals[pc], static_cast<int>(d), in.span);
              spec.deps.insert(spec.deps.end(), call_tasks[d].begin(), call_tasks[d].end());
            }
            for (int64_t r : attrs.dep_regs) {  // deps=[arr[j]]: task ids read now
              const int64_t t = regs.get(isa::Scalar::r(static_cast<int>(r))).as_int();
              if (t == isa::kNoTask) continue;  // an element never written: no edge
              if (t < 0 || t > static_cast<int64_t>(launches.size()))
                fail(ErrorKind::kRuntime, in.span,
                     "deps names task id " + std::to_string(t) + ", which no launch of this run has (" +
                         std::to_string(launches.size()) + " launches so far)",
                     "pass task ids bound by `with pl.at(...) as tid` (stored in a pl.array of pl.TASK_ID)");
              const std::vector<size_t>& tasks = launches[static_cast<size_t>(t - 1)];
              spec.deps.insert(spec.deps.end(), tasks.begin(), tasks.end());
            }
            for (const isa::Operand& op : in.ins)
              if (op.kind == isa::Operand::kTensor && static_cast<size_t>(op.index) < slots.owners.size() && slots.owners[op.index])
                spec.keep_alive.push_back(slots.owners[op.index]);
            spec.no_dep_args = attrs.no_dep_args;
            if (const std::vector<int64_t>& pr = attrs.predicate; !pr.empty()) {
              // predicate=(t[i] OP v): the element's position and v are read now, the element
              // when the task is dispatched (after its deps).
              const TensorView view = slot_tensor(slots, static_cast<int>(pr[0]), in);
              std::shared_ptr<void> owner = static_cast<size_t>(pr[0]) < slots.owners.size() ? slots.owners[pr[0]] : nullptr;
              std::vector<int64_t> index;
              for (size_t q = 3; q < pr.size(); ++q) index.push_back(regs.get(isa::Scalar::r(static_cast<int>(pr[q]))).as_int());
              const ScalarValue rhs = regs.get(isa::Scalar::r(static_cast<int>(pr[2])));
              const auto op = static_cast<BinaryOp>(pr[1]);
              const Span* span = &in.span;
              spec.predicate = [view, owner, index, rhs, op, span]() {
                const ScalarValue v = read_tensor_element(view, index, *span);
                const bool ints = !v.is_float && !rhs.is_float;
                const double a = v.as_double(), b = rhs.as_double();
                const int64_t ia = ints ? v.as_int() : 0, ib = ints ? rhs.as_int() : 0;
                if (ints) switch (op) {
                    case BinaryOp::Eq: return ia == ib;
                    case BinaryOp::Ne: return ia != ib;
                    case BinaryOp::Lt: return ia < ib;
                    case BinaryOp::Le: return ia <= ib;
                    case BinaryOp::Gt: return ia > ib;
                    case BinaryOp::Ge: return ia >= ib;
                    default: return true;
                  }
                switch (op) {
                  case BinaryOp::Eq: return a == b;
                  case BinaryOp::Ne: return a != b;
                  case BinaryOp::Lt: return a < b;
                  case BinaryOp::Le: return a <= b;
                  case BinaryOp::Gt: return a > b;
                  case BinaryOp::Ge: return a >= b;
                  default: return true;
                }
              };
            }
            const std::vector<int64_t>& bn = attrs.block_num;
            const std::vector<int64_t>& bn_reg = attrs.block_num_reg;
            const int64_t blocks = !bn_reg.empty() ? regs.get(isa::Scalar::r(static_cast<int>(bn_reg[0]))).as_int()
                                   : bn.empty()    ? 1
                                                   : bn[0];
            if (blocks < 1)
              fail(ErrorKind::kValue, in.span,
                   "pl.spmd launch of kernel '" + kernel.name + "' over " + std::to_string(blocks) +
                       " blocks: core_num must be at least 1",
                   "compute a positive core_num (pl.spmd(n) with n >= 1)");
            std::vector<size_t>& ids = call_tasks[ordinals[pc]];
            ids.clear();
            for (int64_t b = 0; b < blocks; ++b) {
              TaskSpec& block = b + 1 < blocks ? block_spec : spec;  // the last block takes `spec` itself
              if (b + 1 < blocks) block = spec;
              block.block_idx = static_cast<int>(b);
              block.block_num = static_cast<int>(blocks);
              for (size_t i = 0; i < kernel.params.size(); ++i)
                if (is_block_param(kernel.params[i])) block.args[i].set_int(kernel.params[i].name == "__block_idx" ? b : blocks);
              ids.push_back(pool.stage(block));  // enters the pool in batches (wait_all flushes)
            }
            if (prep.task_values) launches.push_back(ids);
            for (int64_t r : attrs.launch_reg)
              regs.set(static_cast<int>(r), ScalarValue::of_int(static_cast<int64_t>(launches.size())));
            break;
          }
          case isa::InstrKind::kScalarRead: {
            pool.wait_all();  // the host reads memory that tasks may still be writing
            std::vector<int64_t> index;
            for (const isa::Scalar& s : in.ins.at(1).list) index.push_back(regs.get(s).as_int());
            regs.set(in.dst_reg, read_tensor_element(slot_tensor(slots, in.ins.at(0).index, in), index, in.span));
            break;
          }
          case isa::InstrKind::kTensorView: make_view(slots, program, in, regs); break;
          case isa::InstrKind::kTensorCopy:
            pool.wait_all();  // tasks may still write the value or use the window
            copy_tensor(slot_tensor(slots, in.outs.at(0).index, in), slot_tensor(slots, in.ins.at(0).index, in), in.span);
            break;
          case isa::InstrKind::kScalarWrite: {
            pool.wait_all();  // tasks may still read or write the tensor
            std::vector<int64_t> index;
            for (const isa::Scalar& s : in.ins.at(1).list) index.push_back(regs.get(s).as_int());
            write_tensor_element(slot_tensor(slots, in.ins.at(0).index, in), index, regs.get(in.ins.at(2).scalar), in.span);
            break;
          }
          default:
            fail(ErrorKind::kRuntime, in.span, "tile instruction '" + in.mnemonic + "' in host program '" + program.name + "'",
                 "tile instructions belong in InCore kernels");
        }
        next = pc + 1;
      }
      // Past the last use of created tensors: drop the host's reference (the tasks that use
      // them hold theirs until they finish).
      for (int q = pc; q < next && q < n; ++q)
        for (int slot : releases[q])
          if (static_cast<size_t>(slot) < slots.owners.size() && slots.owners[slot]) {
            slots.owners[slot].reset();
            slots.views[slot].data = nullptr;
            if (static_cast<size_t>(slot) >= slots.is_view.size() || !slots.is_view[slot]) ++freed_early;
          }
      pc = next;
    }
    pool.wait_all();
    check_interrupt({});
  } catch (...) {
    pool.cancel();
    pool.set_trace(nullptr, false);
    pool.set_dump_hook(nullptr);
    throw;
  }
  pool.set_trace(nullptr, false);
  pool.set_dump_hook(nullptr);
  if (!options.trace_path.empty()) trace.write_chrome_json(options.trace_path);
  if (options.stats) options.stats->modelled_cycles = trace.makespan();
  if (!options.swimlane_path.empty()) write_swimlane(options.swimlane_path, pool.records(), prep.chip, pool.epoch_us());
  if (dumper) dumper->finish();
  if (options.dep_gen) write_deps_json(options.dfx_dir + "/deps.json", pool.records());
  if (options.scope_stats) write_scope_stats(options.dfx_dir + "/scope_stats/scope_stats.jsonl", pool.records());
  if (options.pmu) write_pmu_csv(options.dfx_dir + "/pmu.csv", pool.records());
  if (options.runtime_stats) {
    const PoolStats ps = pool.stats();
    RuntimeStats& st = *options.runtime_stats;
    st.tasks = ps.tasks;
    st.max_in_flight = ps.max_in_flight;
    st.ring_waits = ps.ring_waits;
    st.peak_tensor_bytes = slots.peak_bytes->load();
    st.tensors_created = slots.created;
    st.tensors_freed_early = freed_early;
  }
}

[[noreturn]] void closed_worker() {
  fail(ErrorKind::kRuntime, {}, "this ChipWorker is closed; its worker pool has stopped",
       "create a new pypto.runtime.ChipWorker(config=...) (or use the worker inside `with ChipWorker(...) as w:`)");
}

}  // namespace

void run_host_program(const isa::HostProgram& program, const std::vector<HostArg>& args, const RunOptions& options) {
  const isa::ChipSpec chip = resolve_run_target(options);
  auto prep = prepare(program, chip, options.engine);
  TaskPool pool(chip, options.num_workers);
  execute(*prep, pool, args, options);
}

namespace {

// The idle worker pools of the process, by platform and worker count: a run takes one (or
// makes one) and gives it back, so consecutive runs reuse the threads and their cores. A pool
// whose run failed with a stopped pool (a deadlock report) is not given back. The list is
// never destroyed (idle workers are left blocked at exit, not joined), and a forked child
// (its pools' threads do not exist there) drops the parent's pools unjoined.
struct IdlePools {
  std::mutex mu;
  pid_t pid = ::getpid();
  std::vector<std::pair<std::string, std::unique_ptr<TaskPool>>> idle;
  static constexpr size_t kMax = 4;
  void forked() {  // under mu
    if (pid == ::getpid()) return;
    for (auto& [key, pool] : idle) (void)pool.release();
    idle.clear();
    pid = ::getpid();
  }
};
IdlePools& idle_pools() {
  static IdlePools* pools = new IdlePools;
  return *pools;
}

}  // namespace

PreparedRun prepare_run(const isa::HostProgram& program, const RunOptions& options) {
  const isa::ChipSpec chip = resolve_run_target(options);
  return PreparedRun{prepare(program, chip, options.engine), options.platform};
}

void run_prepared(const PreparedRun& run, const std::vector<HostArg>& args, const RunOptions& options) {
  const PreparedProgram& prep = *run.prepared;
  const std::string key = run.platform + "/" + std::to_string(options.num_workers);
  IdlePools& pools = idle_pools();
  std::unique_ptr<TaskPool> pool;
  {
    std::lock_guard<std::mutex> lk(pools.mu);
    pools.forked();
    for (size_t i = 0; i < pools.idle.size(); ++i)
      if (pools.idle[i].first == key) {
        pool = std::move(pools.idle[i].second);
        pools.idle.erase(pools.idle.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
  }
  if (!pool) pool = std::make_unique<TaskPool>(prep.chip, options.num_workers);
  auto give_back = [&] {
    if (pool->stopped()) return;  // joined here, by the unique_ptr
    std::lock_guard<std::mutex> lk(pools.mu);
    pools.forked();
    if (pools.idle.size() < IdlePools::kMax) pools.idle.emplace_back(key, std::move(pool));
  };
  try {
    execute(prep, *pool, args, options);
  } catch (...) {
    give_back();
    throw;
  }
  give_back();
}

ChipWorker::ChipWorker(const RunOptions& options) : options_(options), chip_(resolve_run_target(options)) {
  pool_ = std::make_unique<TaskPool>(chip_, options_.num_workers);
}

ChipWorker::~ChipWorker() = default;

int ChipWorker::load(const isa::HostProgram& program) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!pool_) closed_worker();
  for (size_t i = 0; i < programs_.size(); ++i)
    if (programs_[i]->program == &program) return static_cast<int>(i);
  programs_.push_back(prepare(program, chip_, options_.engine));
  return static_cast<int>(programs_.size() - 1);
}

void ChipWorker::run(int handle, const std::vector<HostArg>& args, const RunOptions& per_run) {
  std::lock_guard<std::mutex> lk(mu_);  // one run at a time on this chip
  if (!pool_) closed_worker();
  if (handle < 0 || static_cast<size_t>(handle) >= programs_.size())
    fail(ErrorKind::kValue, {}, "program handle " + std::to_string(handle) + " was not loaded onto this ChipWorker",
         "register the compiled program first: worker.register(compiled)");
  RunOptions options = per_run;
  options.platform = options_.platform;
  options.engine = options_.engine;
  options.num_workers = options_.num_workers;
  try {
    execute(*programs_[handle], *pool_, args, options);
  } catch (...) {
    // A deadlock report stops the workers: start a fresh pool for the next run.
    if (pool_->stopped()) pool_ = std::make_unique<TaskPool>(chip_, options_.num_workers);
    ++runs_;
    throw;
  }
  ++runs_;
}

void ChipWorker::close() {
  std::lock_guard<std::mutex> lk(mu_);
  pool_.reset();  // joins the workers
  programs_.clear();
}

bool ChipWorker::closed() {
  std::lock_guard<std::mutex> lk(mu_);
  return !pool_;
}

size_t ChipWorker::runs() {
  std::lock_guard<std::mutex> lk(mu_);
  return runs_;
}

int ChipWorker::num_workers() {
  std::lock_guard<std::mutex> lk(mu_);
  return pool_ ? pool_->num_workers() : 0;
}

}  // namespace pypto::runtime
