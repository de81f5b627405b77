// Python bindings of the instruction stream (isa structs), the instruction table, single
// instruction execution on numpy arrays, and running programs. Conversions only: enums of
// the IR appear as their DSL spellings ("FP32", "Vec", "In"), tensors as raw views.
#include "pypto/engines/comm.h"
#include "pypto/engines/signal_events.h"
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cctype>

#include <atomic>
#include <condition_variable>
#include <thread>
#include <functional>
#include <unistd.h>
#include <mutex>
#include <chrono>
#include "bindings.h"
#include "pypto/base/env.h"
#include "pypto/base/spin.h"
#include "pypto/passes/insert_sync.h"
#include "pypto/codegen/pto_text.h"
#include "pypto/isa/instructions.h"
#include "pypto/engines/native_engine.h"
#include "pypto/runtime/run_config.h"
#include "pypto/runtime/runtime.h"
#include "pypto/runtime/single_instruction.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace pypto::bindings {

namespace {

using engines::HostArg;
using engines::TensorView;

[[noreturn]] void bad_name(const char* what, const std::string& name) {
  fail(ErrorKind::kValue, {}, std::string("unknown ") + what + " '" + name + "'", "");
}

DataType parse_dtype(const std::string& name) {
  std::string up = name;
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::toupper(c); });
  if (auto d = dtype_from_name(up)) return *d;
  bad_name("dtype", name);
}
MemorySpace parse_memory(const std::string& n) {
  if (auto m = memory_space_from_name(n)) return *m;
  bad_name("memory space", n);
}
PadValue parse_pad(const std::string& n) {
  if (auto p = pad_value_from_name(n)) return *p;
  bad_name("pad value", n);
}
ParamDirection parse_dir(const std::string& n) {
  for (auto d : {ParamDirection::In, ParamDirection::Out, ParamDirection::InOut})
    if (n == param_direction_name(d)) return d;
  bad_name("parameter direction", n);
}
FunctionType parse_function_type(const std::string& n) {
  if (auto f = function_type_from_name(n)) return *f;
  bad_name("function type", n);
}
isa::PartRole parse_part_role(const std::string& n) {
  for (auto r : {isa::PartRole::AIC, isa::PartRole::AIV0, isa::PartRole::AIV1}) {
    std::string name = isa::part_role_name(r), compact;
    for (char c : name)
      if (c != ' ') compact += c;
    if (n == name || n == compact) return r;
  }
  bad_name("part role (AIC, AIV0, AIV1)", n);
}
ir::BinaryOp parse_binary_op(const std::string& n) {
  for (int i = 0; i <= static_cast<int>(ir::BinaryOp::Or); ++i)
    if (n == ir::binary_op_symbol(static_cast<ir::BinaryOp>(i))) return static_cast<ir::BinaryOp>(i);
  bad_name("binary operator", n);
}

// Attrs <-> dict. Enum values become their names; the keys "dtype", "memory" and "pad" turn
// names back into enums.
nb::dict attrs_to_dict(const ir::Attrs& attrs) {
  nb::dict d;
  for (auto& [k, v] : attrs) {
    std::visit(
        [&](auto&& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, DataType>) d[k.c_str()] = dtype_name(x);
          else if constexpr (std::is_same_v<T, MemorySpace>) d[k.c_str()] = memory_space_name(x);
          else if constexpr (std::is_same_v<T, PadValue>) d[k.c_str()] = pad_value_name(x);
          else d[k.c_str()] = nb::cast(x);
        },
        v);
  }
  return d;
}

ir::Attrs dict_to_attrs(const nb::dict& d) {
  ir::Attrs attrs;
  for (auto [key, value] : d) {
    const std::string k = nb::cast<std::string>(key);
    if (nb::isinstance<bool>(value)) attrs[k] = nb::cast<bool>(value);
    else if (nb::isinstance<int>(value)) attrs[k] = to_int64(value);
    else if (nb::isinstance<nb::float_>(value)) attrs[k] = nb::cast<double>(value);
    else if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value)) attrs[k] = to_int64_list(value);
    else {
      const std::string s = nb::cast<std::string>(nb::str(value));
      if (k == "dtype") attrs[k] = parse_dtype(s);
      else if (k == "memory" || k == "target_memory") attrs[k] = parse_memory(s);
      else if (k == "pad") attrs[k] = parse_pad(s);
      else attrs[k] = s;
    }
  }
  return attrs;
}

// An enum field shown to Python as its name.
template <typename C, typename E>
void name_prop(nb::class_<C>& cls, const char* name, E C::*field, const char* (*to)(E), E (*from)(const std::string&)) {
  cls.def_prop_rw(
      name, [field, to](const C& c) { return std::string(to(c.*field)); },
      [field, from](C& c, const std::string& s) { c.*field = from(s); });
}

void bind_isa_structs(nb::module_& m) {
  nb::enum_<isa::Scalar::Kind>(m, "ScalarKind").value("Imm", isa::Scalar::kImm).value("Reg", isa::Scalar::kReg);
  nb::class_<isa::Scalar>(m, "Scalar")
      .def(nb::init<>())
      .def_rw("kind", &isa::Scalar::kind)
      .def_rw("reg", &isa::Scalar::reg)
      .def_rw("is_float", &isa::Scalar::is_float)
      .def_rw("i", &isa::Scalar::i)
      .def_rw("f", &isa::Scalar::f)
      .def_static("imm", &isa::Scalar::imm)
      .def_static("immf", &isa::Scalar::immf)
      .def_static("r", &isa::Scalar::r)
      .def("__repr__", [](const isa::Scalar& s) {
        if (s.kind == isa::Scalar::kReg) return "r" + std::to_string(s.reg);
        return s.is_float ? std::to_string(s.f) : std::to_string(s.i);
      });

  auto tile = nb::class_<isa::TileDesc>(m, "TileDesc")
                  .def(nb::init<>())
                  .def(
                      "__init__",
                      [](isa::TileDesc* t, std::string name, std::string dtype, std::string memory, int64_t rows,
                         int64_t cols, int64_t addr, std::optional<isa::Scalar> vr, std::optional<isa::Scalar> vc,
                         std::string pad) {
                        new (t) isa::TileDesc{name, parse_dtype(dtype), parse_memory(memory), rows, cols, addr,
                                              vr.value_or(isa::Scalar::imm(rows)), vc.value_or(isa::Scalar::imm(cols)),
                                              parse_pad(pad)};
                      },
                      "name"_a, "dtype"_a, "memory"_a, "rows"_a, "cols"_a, "addr"_a = 0, "valid_rows"_a = nb::none(),
                      "valid_cols"_a = nb::none(), "pad"_a = "null")
                  .def_rw("name", &isa::TileDesc::name)
                  .def_rw("rows", &isa::TileDesc::rows)
                  .def_rw("cols", &isa::TileDesc::cols)
                  .def_rw("addr", &isa::TileDesc::addr)
                  .def_rw("valid_rows", &isa::TileDesc::valid_rows)
                  .def_rw("valid_cols", &isa::TileDesc::valid_cols);
  name_prop(tile, "dtype", &isa::TileDesc::dtype, dtype_name, parse_dtype);
  name_prop(tile, "memory", &isa::TileDesc::memory, memory_space_name, parse_memory);
  name_prop(tile, "pad", &isa::TileDesc::pad, pad_value_name, parse_pad);

  nb::enum_<isa::Operand::Kind>(m, "OperandKind")
      .value("Tile", isa::Operand::kTile)
      .value("Tensor", isa::Operand::kTensor)
      .value("Scalar", isa::Operand::kScalar)
      .value("ScalarList", isa::Operand::kScalarList);
  nb::class_<isa::Operand>(m, "Operand")
      .def(nb::init<>())
      .def_rw("kind", &isa::Operand::kind)
      .def_rw("index", &isa::Operand::index)
      .def_rw("scalar", &isa::Operand::scalar)
      .def_rw("list", &isa::Operand::list)
      .def_static("tile", &isa::Operand::tile)
      .def_static("tensor", &isa::Operand::tensor)
      .def_static("scalar_of", &isa::Operand::scalar_of)
      .def_static("list_of", &isa::Operand::list_of);

  nb::enum_<isa::InstrKind>(m, "InstrKind")
      .value("Tile", isa::InstrKind::kTile)
      .value("ScalarBin", isa::InstrKind::kScalarBin)
      .value("ScalarMov", isa::InstrKind::kScalarMov)
      .value("ScalarRead", isa::InstrKind::kScalarRead)
      .value("LoopBegin", isa::InstrKind::kLoopBegin)
      .value("LoopEnd", isa::InstrKind::kLoopEnd)
      .value("If", isa::InstrKind::kIf)
      .value("Else", isa::InstrKind::kElse)
      .value("EndIf", isa::InstrKind::kEndIf)
      .value("WhileBegin", isa::InstrKind::kWhileBegin)
      .value("WhileCond", isa::InstrKind::kWhileCond)
      .value("WhileEnd", isa::InstrKind::kWhileEnd)
      .value("Call", isa::InstrKind::kCall)
      .value("AllocTensor", isa::InstrKind::kAllocTensor)
      .value("ArrayGet", isa::InstrKind::kArrayGet)
      .value("ArraySet", isa::InstrKind::kArraySet)
      .value("ScalarWrite", isa::InstrKind::kScalarWrite)
      .value("ScalarCast", isa::InstrKind::kScalarCast)
      .value("TensorView", isa::InstrKind::kTensorView)
      .value("TensorCopy", isa::InstrKind::kTensorCopy);
  auto instr = nb::class_<isa::Instr>(m, "Instr")
                   .def(nb::init<>())
                   .def_rw("kind", &isa::Instr::kind)
                   .def_rw("mnemonic", &isa::Instr::mnemonic)
                   .def_rw("outs", &isa::Instr::outs)
                   .def_rw("ins", &isa::Instr::ins)
                   .def_prop_rw(
                       "attrs", [](const isa::Instr& i) { return attrs_to_dict(i.attrs); },
                       [](isa::Instr& i, const nb::dict& d) { i.attrs = dict_to_attrs(d); })
                   .def_rw("dst_reg", &isa::Instr::dst_reg)
                   .def_prop_rw(
                       "sop", [](const isa::Instr& i) { return std::string(ir::binary_op_symbol(i.sop)); },
                       [](isa::Instr& i, const std::string& s) { i.sop = parse_binary_op(s); })
                   .def_rw("a", &isa::Instr::a)
                   .def_rw("b", &isa::Instr::b)
                   .def_rw("step", &isa::Instr::step)
                   .def_rw("jump", &isa::Instr::jump)
                   .def_rw("callee", &isa::Instr::callee)
                   .def_prop_rw(
                       "span_file", [](const isa::Instr& i) { return i.span.file; },
                       [](isa::Instr& i, const std::string& f) { i.span.file = f; })
                   .def_prop_rw(
                       "span_line", [](const isa::Instr& i) { return i.span.line; },
                       [](isa::Instr& i, int l) { i.span.line = l; });
  (void)instr;

  auto param = nb::class_<isa::ParamDesc>(m, "ParamDesc")
                   .def(nb::init<>())
                   .def(
                       "__init__",
                       [](isa::ParamDesc* p, std::string name, bool is_tensor, std::string dtype,
                          std::vector<int64_t> shape, std::string dir) {
                         new (p) isa::ParamDesc{name, is_tensor, parse_dtype(dtype), shape, parse_dir(dir)};
                       },
                       "name"_a, "is_tensor"_a = true, "dtype"_a = "FP32", "shape"_a = std::vector<int64_t>{},
                       "dir"_a = "In")
                   .def_rw("name", &isa::ParamDesc::name)
                   .def_rw("is_tensor", &isa::ParamDesc::is_tensor)
                   .def_rw("shape", &isa::ParamDesc::shape);
  name_prop(param, "dtype", &isa::ParamDesc::dtype, dtype_name, parse_dtype);
  name_prop(param, "dir", &isa::ParamDesc::dir, param_direction_name, parse_dir);

  nb::class_<isa::PartArg>(m, "PartArg")
      .def(nb::init<>())
      .def_rw("param", &isa::PartArg::param, "index of the group parameter passed, or -1 for `constant`")
      .def_rw("constant", &isa::PartArg::constant);
  auto part = nb::class_<isa::KernelPart>(m, "KernelPart")
                  .def(nb::init<>())
                  .def_rw("kernel", &isa::KernelPart::kernel)
                  .def_rw("args", &isa::KernelPart::args);
  name_prop(part, "role", &isa::KernelPart::role, isa::part_role_name, parse_part_role);

  auto kernel = nb::class_<isa::Kernel>(m, "Kernel")
                    .def(nb::init<>())
                    .def_rw("name", &isa::Kernel::name)
                    .def_rw("parts", &isa::Kernel::parts)
                    .def_rw("params", &isa::Kernel::params)
                    .def_rw("tiles", &isa::Kernel::tiles)
                    .def_rw("num_regs", &isa::Kernel::num_regs)
                    .def_rw("reg_is_float", &isa::Kernel::reg_is_float)
                    .def_rw("code", &isa::Kernel::code)
                    .def_rw("pto_text", &isa::Kernel::pto_text);
  name_prop(kernel, "core", &isa::Kernel::core, function_type_name, parse_function_type);

  nb::class_<isa::ArrayDesc>(m, "ArrayDesc")
      .def(nb::init<>())
      .def_rw("name", &isa::ArrayDesc::name)
      .def_rw("dtype", &isa::ArrayDesc::dtype)
      .def_rw("size", &isa::ArrayDesc::size);
  nb::class_<isa::HostProgram>(m, "HostProgram")
      .def(nb::init<>())
      .def(nb::init<const isa::HostProgram&>(), "a copy (edits to it leave the original as it was)")
      .def_rw("name", &isa::HostProgram::name)
      .def_rw("params", &isa::HostProgram::params)
      .def_rw("tensors", &isa::HostProgram::tensors)
      .def_rw("num_regs", &isa::HostProgram::num_regs)
      .def_rw("reg_is_float", &isa::HostProgram::reg_is_float)
      .def_rw("code", &isa::HostProgram::code)
      .def_rw("kernels", &isa::HostProgram::kernels)
      .def_rw("arrays", &isa::HostProgram::arrays)
      .def_rw("returns", &isa::HostProgram::returns);
}

// A run argument: int / float scalars, or a tensor tuple
// (data_ptr, dtype_name, shape, strides_in_elements, name).
HostArg to_host_arg(const nb::handle& h) {
  if (nb::isinstance<nb::tuple>(h)) {
    auto t = nb::cast<nb::tuple>(h);
    if (t.size() != 5)
      fail(ErrorKind::kValue, {}, "a tensor argument is (data_ptr, dtype, shape, strides, name), got " +
                                      std::to_string(t.size()) + " fields");
    TensorView v;
    v.data = reinterpret_cast<void*>(nb::cast<uintptr_t>(t[0]));
    v.dtype = parse_dtype(nb::cast<std::string>(t[1]));
    v.shape = nb::cast<std::vector<int64_t>>(t[2]);
    v.strides = nb::cast<std::vector<int64_t>>(t[3]);
    v.name = nb::cast<std::string>(t[4]);
    if (v.shape.size() != v.strides.size())
      fail(ErrorKind::kValue, {}, "tensor '" + v.name + "' has " + std::to_string(v.shape.size()) + " dims but " +
                                      std::to_string(v.strides.size()) + " strides");
    return HostArg::of_tensor(std::move(v));
  }
  // Python's float and int types (isinstance<float> / <int> would test for values that fit a
  // C float / int and reject 0.1 or 2**40).
  if (nb::isinstance<nb::float_>(h)) return HostArg::of_float(nb::cast<double>(h));
  if (nb::isinstance<nb::int_>(h) || nb::isinstance<nb::bool_>(h)) return HostArg::of_int(to_int64(h));
  fail(ErrorKind::kType, {}, "a run argument must be an int, a float or a tensor tuple, got " +
                                 nb::cast<std::string>(nb::str(h.type())));
}

std::vector<HostArg> to_host_args(const nb::list& args) {
  std::vector<HostArg> out;
  for (nb::handle h : args) out.push_back(to_host_arg(h));
  return out;
}

using Array = nb::ndarray<nb::device::cpu>;

DataType array_dtype(const Array& a) {
  const nb::dlpack::dtype d = a.dtype();
  using C = nb::dlpack::dtype_code;
  const auto code = static_cast<C>(d.code);
  if (code == C::Float && d.bits == 32) return DataType::FP32;
  if (code == C::Float && d.bits == 16) return DataType::FP16;
  if (code == C::Bfloat && d.bits == 16) return DataType::BF16;
  if (code == C::Bool) return DataType::BOOL;
  if (code == C::Int && d.bits == 8) return DataType::INT8;
  if (code == C::Int && d.bits == 16) return DataType::INT16;
  if (code == C::Int && d.bits == 32) return DataType::INT32;
  if (code == C::Int && d.bits == 64) return DataType::INT64;
  if (code == C::UInt && d.bits == 8) return DataType::UINT8;
  if (code == C::UInt && d.bits == 16) return DataType::UINT16;
  if (code == C::UInt && d.bits == 32) return DataType::UINT32;
  if (code == C::UInt && d.bits == 64) return DataType::UINT64;
  fail(ErrorKind::kType, {}, "array dtype (code " + std::to_string(d.code) + ", " + std::to_string(d.bits) +
                                 " bits) has no pypto equivalent");
}

// One isa_execute operand. Arrays keep their memory (outputs are written in place);
// `dtype` overrides the array's element type (e.g. "BF16" for uint16 bit patterns).
runtime::LooseOperand to_loose(const nb::handle& h, const std::string& name, const std::optional<std::string>& dtype,
                               const std::optional<std::string>& memory) {
  runtime::LooseOperand op;
  if (nb::isinstance<Array>(h)) {
    Array a = nb::cast<Array>(h);
    op.kind = runtime::LooseOperand::kArray;
    op.array.data = a.data();
    op.array.dtype = dtype ? parse_dtype(*dtype) : array_dtype(a);
    if (dtype && dtype_bytes(op.array.dtype) * 8 != a.dtype().bits)
      fail(ErrorKind::kType, {}, "operand '" + name + "': dtype " + *dtype + " does not match the array's " +
                                     std::to_string(a.dtype().bits) + "-bit elements");
    for (size_t d = 0; d < a.ndim(); ++d) {
      op.array.shape.push_back(static_cast<int64_t>(a.shape(d)));
      op.array.strides.push_back(static_cast<int64_t>(a.stride(d)));
    }
    op.array.name = name;
    if (memory) op.memory = parse_memory(*memory);
  } else if (nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h)) {
    op.kind = runtime::LooseOperand::kList;
    op.list = to_int64_list(h);
  } else if (nb::isinstance<nb::float_>(h)) {
    op.kind = runtime::LooseOperand::kScalar;
    op.scalar = engines::ScalarValue::of_float(nb::cast<double>(h));
  } else {
    op.kind = runtime::LooseOperand::kScalar;
    op.scalar = engines::ScalarValue::of_int(to_int64(h));
  }
  return op;
}

void isa_execute(const std::string& mnemonic, const nb::list& outs, const nb::list& ins, const nb::dict& attrs,
                 std::optional<std::vector<int64_t>> valid_shape, std::optional<std::vector<std::optional<std::string>>> dtypes,
                 std::optional<std::vector<std::optional<std::string>>> memories, const std::string& pad,
                 const std::string& platform, const std::string& engine) {
  auto pick = [](const std::optional<std::vector<std::optional<std::string>>>& v, size_t i) {
    return v && i < v->size() ? (*v)[i] : std::nullopt;
  };
  std::vector<runtime::LooseOperand> o, in;
  size_t i = 0;
  for (nb::handle h : outs) {
    o.push_back(to_loose(h, "out" + std::to_string(o.size()), pick(dtypes, i), pick(memories, i)));
    o.back().pad = parse_pad(pad);
    ++i;
  }
  for (nb::handle h : ins) {
    in.push_back(to_loose(h, "in" + std::to_string(in.size()), pick(dtypes, i), pick(memories, i)));
    ++i;
  }
  if (valid_shape) {
    if (valid_shape->size() != 2) fail(ErrorKind::kValue, {}, "valid_shape is [rows, cols]");
    for (auto* list : {&o, &in})
      for (auto& op : *list) {
        op.valid_rows = (*valid_shape)[0];
        op.valid_cols = (*valid_shape)[1];
      }
  }
  ir::Attrs a = dict_to_attrs(attrs);
  nb::gil_scoped_release release;
  if (engine == "native") runtime::execute_instruction_native(mnemonic, o, in, a, platform);
  else if (engine == "sim") runtime::execute_instruction(mnemonic, o, in, a, platform);
  else fail(ErrorKind::kPlatform, {}, "unknown engine '" + engine + "'", "use \"sim\" or \"native\"");
}

const isa::InstrDef& instr_or_fail(const std::string& name) {
  const isa::InstrDef* d = isa::find_instr(name);
  if (!d) fail(ErrorKind::kValue, {}, "unknown PTO instruction '" + name + "'", "see instruction_names()");
  return *d;
}

}  // namespace

namespace {

// The helper threads of run_interruptibly, kept between calls (starting and joining a thread
// costs ~85 us on the 2-core development VM: more than a small program's whole run). A call
// takes an idle one (or starts one) and gives it back once its run has ended. The threads live
// as long as the process, blocked while idle; a forked child, where the parent's threads do
// not exist, drops the parent's list.
struct CallThread {
  std::mutex mu;
  std::condition_variable cv;
  std::function<void()> job;         // empty: idle
  std::atomic<bool> has_job{false};  // job is set (read without the lock while the thread spins)
};
// A helper thread waits this long for its next call without sleeping (a program called in a
// loop from Python calls again within ~100 us; waking a sleeping thread takes 10-50 us).
constexpr long kCallThreadSpinUs = 300;
constexpr long kRunSpinUs = 100;  // the caller's wait for a run, before it sleeps
struct CallThreads {
  std::mutex mu;
  pid_t pid = ::getpid();
  std::vector<CallThread*> idle;
};
CallThreads& call_threads() {
  static CallThreads* threads = new CallThreads;  // never destroyed: its threads are never joined
  return *threads;
}
CallThread* take_call_thread() {
  CallThreads& ts = call_threads();
  {
    std::lock_guard<std::mutex> lk(ts.mu);
    if (ts.pid != ::getpid()) {
      ts.idle.clear();
      ts.pid = ::getpid();
    }
    if (!ts.idle.empty()) {
      CallThread* t = ts.idle.back();
      ts.idle.pop_back();
      return t;
    }
  }
  auto* t = new CallThread;
  std::thread([t] {
    std::unique_lock<std::mutex> lk(t->mu);
    while (true) {
      t->cv.wait(lk, [t] { return static_cast<bool>(t->job); });
      std::function<void()> job = std::move(t->job);
      t->job = nullptr;
      t->has_job.store(false, std::memory_order_relaxed);
      lk.unlock();
      job();
      spin_until([t] { return t->has_job.load(std::memory_order_acquire); }, kCallThreadSpinUs);
      lk.lock();
    }
  }).detach();
  return t;
}
void give_back_call_thread(CallThread* t) {
  CallThreads& ts = call_threads();
  std::lock_guard<std::mutex> lk(ts.mu);
  if (ts.pid == ::getpid()) ts.idle.push_back(t);
}

}  // namespace

// Runs `run` on a helper thread while this thread, holding the GIL between short waits,
// watches for signals: Ctrl-C sets options.interrupt, the run stops starting tasks and
// ends, and the KeyboardInterrupt is raised here. Returns only once the run has ended.
template <typename Run>
void run_interruptibly(runtime::RunOptions& options, Run run) {
  std::atomic<bool> interrupt{false};
  options.interrupt = &interrupt;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::atomic<bool> ended{false};  // done, readable without the lock (the short first wait spins)
  std::exception_ptr error;
  CallThread* helper = take_call_thread();
  {
    std::lock_guard<std::mutex> lk(helper->mu);
    helper->job = [&] {
      try {
        run();
      } catch (...) {
        error = std::current_exception();
      }
      // The last use of this frame's objects: once `done` is seen, the caller returns.
      std::lock_guard<std::mutex> done_lk(mu);
      done = true;
      ended.store(true, std::memory_order_release);
      cv.notify_all();
    };
    helper->has_job.store(true, std::memory_order_release);
  }
  helper->cv.notify_one();
  {
    // A small program's run ends within tens of microseconds: wait for it without sleeping
    // first. `ended` is set under `mu`, so the lock below still orders the run's writes.
    nb::gil_scoped_release release;
    spin_until([&] { return ended.load(std::memory_order_acquire); }, kRunSpinUs);
  }
  bool signalled = false;
  while (true) {
    {
      nb::gil_scoped_release release;
      std::unique_lock<std::mutex> lk(mu);
      if (cv.wait_for(lk, std::chrono::milliseconds(20), [&] { return done; })) break;
    }
    if (!signalled && PyErr_CheckSignals() != 0) {
      signalled = true;  // the Python exception stays set; wait for the run to wind down
      interrupt = true;
    }
  }
  give_back_call_thread(helper);
  // A Ctrl-C that ended the run before the loop saw it (it also stops a kernel compiler in
  // the terminal's process group) is reported as the KeyboardInterrupt, not as that failure.
  if (!signalled && PyErr_CheckSignals() != 0) signalled = true;
  if (signalled) throw nb::python_error();
  if (error) std::rethrow_exception(error);
}

// A run's statistics as the dict CompiledProgram.last_run_stats holds.
nb::dict stats_dict(const runtime::RunStats& model, const runtime::RuntimeStats& stats) {
  nb::dict d;
  d["modelled_cycles"] = model.modelled_cycles;
  d["tasks"] = stats.tasks;
  d["max_in_flight"] = stats.max_in_flight;
  d["ring_waits"] = stats.ring_waits;
  d["peak_tensor_bytes"] = stats.peak_tensor_bytes;
  d["tensors_created"] = stats.tensors_created;
  d["tensors_freed_early"] = stats.tensors_freed_early;
  return d;
}

// A run with a RunConfig's run fields (`output_dir`: the build directory when config.output_dir
// is unset): `run(host_args, options)` on the helper thread; returns the run's statistics.
template <typename Run>
nb::dict run_with_config(const nb::list& args, const runtime::RunConfig& config, const std::string& output_dir, Run run) {
  std::vector<HostArg> host_args = to_host_args(args);
  runtime::RuntimeStats stats;
  runtime::RunStats model;
  runtime::RunOptions options = runtime::run_options(config, output_dir);
  options.stats = &model;
  options.runtime_stats = &stats;
  run_interruptibly(options, [&] { run(host_args, options); });
  return stats_dict(model, stats);
}

// RunConfig: one named field per entry of PYPTO_RUN_CONFIG_FIELDS, with its default.
void bind_run_config(nb::module_& m) {
  auto cls = nb::class_<runtime::RunConfig>(
      m, "RunConfig",
      "The options of one compile-and-run with their defaults (include/pypto/runtime/run_config.h); "
      "pypto.runtime.RunConfig builds one (RunConfig.options()).");
  cls.def(nb::init<>());
#define PYPTO_BIND_RUN_CONFIG_FIELD(type, name, def, use, doc) cls.def_rw(#name, &runtime::RunConfig::name, doc);
  PYPTO_RUN_CONFIG_FIELDS(PYPTO_BIND_RUN_CONFIG_FIELD)
#undef PYPTO_BIND_RUN_CONFIG_FIELD
  cls.def("compile_key", &runtime::RunConfig::compile_key,
          "The fields the compile step reads, printed: the jit cache key's part of the options.");
  cls.def("any_dfx", &runtime::RunConfig::any_dfx);
  cls.def(
      "run_paths",
      [](const runtime::RunConfig& config, const std::string& output_dir) {
        const runtime::RunOptions o = runtime::run_options(config, output_dir);
        nb::dict d;
        d["trace_path"] = o.trace_path;
        d["swimlane_path"] = o.swimlane_path;
        d["dfx_dir"] = o.dfx_dir;
        return d;
      },
      "output_dir"_a, "Where a run with this config writes (trace_path, swimlane_path, dfx_dir; \"\" when none).");
  cls.def_static(
      "fields",
      [] {
        std::vector<std::tuple<std::string, bool, std::string>> out;
        for (const auto& f : runtime::run_config_fields())
          out.emplace_back(f.name, f.use == runtime::ConfigUse::kCompile, f.doc);
        return out;
      },
      "(name, read by the compile step, description) of every field, in order.");
}

void bind_runtime(nb::module_& m) {
  bind_isa_structs(m);
  bind_run_config(m);

  // pld: this rank process's view of the domain's shared memory (include/pypto/engines/comm.h).
  m.def("comm_attach", &engines::comm::attach, nb::arg("base"), nb::arg("window_bytes"), nb::arg("rank"), nb::arg("nranks"),
        nb::arg("timeout_s"));
  m.def("comm_attach_mpi", &engines::comm::attach_mpi, nb::arg("base"), nb::arg("window_bytes"), nb::arg("rank"),
        nb::arg("nranks"), nb::arg("timeout_s"), nb::arg("win"), nb::arg("handles"),
        "Attaches to an MPI RMA window (the MPI transport; handles from mpi4py's MPI._handleof).");
  m.def(
      "comm_get",
      [](int peer, int64_t disp, int64_t nbytes) {
        const engines::comm::Domain* d = engines::comm::domain();
        if (!d) throw std::runtime_error("comm_get: this process is attached to no domain");
        std::string out(static_cast<size_t>(nbytes), '\0');
        d->transport->get(peer, disp, out.data(), nbytes);
        return nb::bytes(out.data(), out.size());
      },
      nb::arg("peer"), nb::arg("disp"), nb::arg("nbytes"), "nbytes at byte disp of rank peer's region (header, window).");
  m.def(
      "comm_put",
      [](int peer, int64_t disp, nb::bytes data) {
        const engines::comm::Domain* d = engines::comm::domain();
        if (!d) throw std::runtime_error("comm_put: this process is attached to no domain");
        d->transport->put(peer, disp, data.c_str(), static_cast<int64_t>(data.size()));
      },
      nb::arg("peer"), nb::arg("disp"), nb::arg("data"), "Writes data at byte disp of rank peer's region.");
  m.def("comm_transport", [] {
    const engines::comm::Domain* d = engines::comm::domain();
    return std::string(d ? d->transport->name() : "");
  }, "The attached domain's transport: \"shm\", \"mpi\" or \"\" (not attached).");
  m.def("comm_detach", &engines::comm::detach);
  m.def("comm_set_state", &engines::comm::set_state, nb::arg("state"));
  m.def("comm_abort", &engines::comm::abort_domain, nb::arg("message"));
  m.def("comm_abort_message", &engines::comm::abort_message);
  m.def("comm_abort_segment", &engines::comm::abort_segment, nb::arg("segment"), nb::arg("rank"), nb::arg("message"));
  m.def("comm_record_signals", &engines::record_signal_events, nb::arg("on"),
        "Starts (True) or stops recording this rank's notify / wait events (the swimlane's arrows).");
  m.def(
      "comm_take_signals",
      [] {
        nb::list out;
        for (const auto& e : engines::take_signal_events())
          out.append(nb::make_tuple(std::string(1, e.kind), e.t_us, e.rank, e.peer, e.cell_offset, e.value, e.where));
        return out;
      },
      "The recorded signal events since the last call: (kind 'n'|'w', t_us, rank, peer, cell_offset, value, where).");
  m.def("comm_header_bytes", [] { return engines::comm::kHeaderBytes; });

  m.def(
      "run_host_program",
      [](const isa::HostProgram& program, const nb::list& args, const std::string& platform, const std::string& engine,
         int num_workers, const std::optional<std::string>& trace_path, size_t ring_size,
         const std::string& swimlane_path, const std::string& dfx_dir, int dump_args, bool dep_gen, bool pmu, bool scope_stats) {
        std::vector<HostArg> host_args = to_host_args(args);
        runtime::RuntimeStats stats;
        runtime::RunStats model;
        runtime::RunOptions options{platform, engine, num_workers};
        options.trace_path = trace_path.value_or("");
        options.stats = &model;
        options.ring_size = ring_size;
        options.swimlane_path = swimlane_path;
        options.runtime_stats = &stats;
        options.dfx_dir = dfx_dir;
        options.dump_args = dump_args;
        options.dep_gen = dep_gen;
        options.pmu = pmu;
        options.scope_stats = scope_stats;
        run_interruptibly(options, [&] { runtime::run_host_program(program, host_args, options); });
        return stats_dict(model, stats);
      },
      "program"_a, "args"_a, "platform"_a = "a2a3sim", "engine"_a = runtime::RunConfig{}.engine,
      "num_workers"_a = runtime::RunConfig{}.num_workers, "trace_path"_a = nb::none(),
      "ring_size"_a = runtime::RunConfig{}.ring_size, "swimlane_path"_a = "", "dfx_dir"_a = "", "dump_args"_a = 0,
      "dep_gen"_a = false, "pmu"_a = false, "scope_stats"_a = false,
      "Runs an orchestration; tensors are (data_ptr, dtype, shape, strides_in_elements, name) tuples. trace_path "
      "writes the modelled timeline (sim engine); ring_size bounds the tasks in flight (0 = unbounded); "
      "swimlane_path writes the chip swimlane. Returns the run's statistics, modelled cycles included.");
  m.def(
      "run_host_program",
      [](const isa::HostProgram& program, const nb::list& args, const runtime::RunConfig& config,
         const std::string& output_dir) {
        return run_with_config(args, config, output_dir, [&](const std::vector<HostArg>& host_args,
                                                             const runtime::RunOptions& options) {
          runtime::run_host_program(program, host_args, options);
        });
      },
      "program"_a, "args"_a, "config"_a, "output_dir"_a,
      "Runs an orchestration with a RunConfig (its run fields; `output_dir`: the build directory when "
      "config.output_dir is unset). Returns the run's statistics.");
  nb::class_<runtime::PreparedRun>(m, "PreparedRun",
                                   "A host program prepared for repeated runs (pypto.jit keeps one per compiled program, "
                                   "platform, engine and kernel-compile environment).");
  m.def(
      "prepared_run_key",
      [](const runtime::RunConfig& config) {
        const runtime::RunOptions o = runtime::run_options(config, "");
        return o.platform + "|" + o.engine + "|" + cache_key_env();
      },
      "config"_a, "What a PreparedRun depends on besides its program: platform, engine, kernel-compile environment.");
  m.def(
      "prepare_run",
      [](const isa::HostProgram& program, const runtime::RunConfig& config) {
        runtime::RunOptions options = runtime::run_options(config, "");
        runtime::PreparedRun run;
        run_interruptibly(options, [&] { run = runtime::prepare_run(program, options); });  // may compile kernels
        return run;
      },
      "program"_a, "config"_a, nb::keep_alive<0, 1>(), "Prepares a host program for run_prepared.");
  m.def(
      "run_prepared",
      [](const runtime::PreparedRun& run, const nb::list& args, const runtime::RunConfig& config,
         const std::string& output_dir) {
        return run_with_config(args, config, output_dir, [&](const std::vector<HostArg>& host_args,
                                                             const runtime::RunOptions& options) {
          runtime::run_prepared(run, host_args, options);
        });
      },
      "run"_a, "args"_a, "config"_a, "output_dir"_a,
      "run_host_program on a PreparedRun, on an idle worker pool of the process.");
  nb::class_<runtime::ChipWorker>(m, "ChipWorker",
                                  "A virtual chip whose worker pool stays up between runs (see pypto.runtime.ChipWorker).")
      .def(
          "__init__",
          [](runtime::ChipWorker* w, const std::string& platform, const std::string& engine, int num_workers) {
            runtime::RunOptions options{platform, engine, num_workers};
            new (w) runtime::ChipWorker(options);
          },
          "platform"_a = "a2a3sim", "engine"_a = runtime::RunConfig{}.engine,
          "num_workers"_a = runtime::RunConfig{}.num_workers)
      .def(
          "__init__",
          [](runtime::ChipWorker* w, const runtime::RunConfig& config) {
            new (w) runtime::ChipWorker(runtime::run_options(config, ""));
          },
          "config"_a)
      .def(
          "load",
          [](runtime::ChipWorker& w, const isa::HostProgram& program) {
            nb::gil_scoped_release release;  // loading may compile native kernels
            return w.load(program);
          },
          "program"_a, nb::keep_alive<1, 2>(), "Prepares a host program for runs on this worker; returns its handle.")
      .def(
          "run",
          [](runtime::ChipWorker& w, int handle, const nb::list& args, const std::optional<std::string>& trace_path,
             size_t ring_size, const std::string& swimlane_path, const std::string& dfx_dir, int dump_args, bool dep_gen,
             bool pmu, bool scope_stats) {
            std::vector<HostArg> host_args = to_host_args(args);
            runtime::RuntimeStats stats;
            runtime::RunStats model;
            runtime::RunOptions options;
            options.trace_path = trace_path.value_or("");
            options.stats = &model;
            options.ring_size = ring_size;
            options.swimlane_path = swimlane_path;
            options.runtime_stats = &stats;
            options.dfx_dir = dfx_dir;
            options.dump_args = dump_args;
            options.dep_gen = dep_gen;
            options.pmu = pmu;
        options.scope_stats = scope_stats;
            run_interruptibly(options, [&] { w.run(handle, host_args, options); });
            return stats_dict(model, stats);
          },
          "handle"_a, "args"_a, "trace_path"_a = nb::none(), "ring_size"_a = runtime::RunConfig{}.ring_size,
          "swimlane_path"_a = "",
          "dfx_dir"_a = "", "dump_args"_a = 0, "dep_gen"_a = false, "pmu"_a = false, "scope_stats"_a = false,
          "Runs a loaded program on the worker's pool; arguments and result as run_host_program.")
      .def(
          "run",
          [](runtime::ChipWorker& w, int handle, const nb::list& args, const runtime::RunConfig& config,
             const std::string& output_dir) {
            return run_with_config(args, config, output_dir, [&](const std::vector<HostArg>& host_args,
                                                                 const runtime::RunOptions& options) {
              w.run(handle, host_args, options);
            });
          },
          "handle"_a, "args"_a, "config"_a, "output_dir"_a,
          "Runs a loaded program with a RunConfig's run fields (platform, engine and workers are the worker's).")
      .def(
          "close",
          [](runtime::ChipWorker& w) {
            nb::gil_scoped_release release;
            w.close();
          },
          "Stops the workers; later runs are errors.")
      // These wait while another thread runs on the worker: without the GIL.
      .def_prop_ro("closed", [](runtime::ChipWorker& w) { nb::gil_scoped_release r; return w.closed(); })
      .def_prop_ro("runs", [](runtime::ChipWorker& w) { nb::gil_scoped_release r; return w.runs(); })
      .def_prop_ro("num_workers", [](runtime::ChipWorker& w) { nb::gil_scoped_release r; return w.num_workers(); })
      .def_prop_ro("platform", &runtime::ChipWorker::platform)
      .def_prop_ro("engine", &runtime::ChipWorker::engine);
  m.def(
      "run_kernel",
      [](const isa::Kernel& kernel, const nb::list& args, const std::string& platform, const std::string& engine,
         const std::optional<std::string>& trace_path) {
        std::vector<HostArg> host_args = to_host_args(args);
        runtime::RunStats stats;
        nb::gil_scoped_release release;
        runtime::run_kernel(kernel, host_args, {platform, engine, 1, trace_path.value_or(""), &stats});
        return stats.modelled_cycles;
      },
      "kernel"_a, "args"_a, "platform"_a = "a2a3sim", "engine"_a = "sim", "trace_path"_a = nb::none(),
      "Runs one kernel on one virtual core; returns its modelled cycles.");
  m.def(
      "insert_sync",
      [](isa::Kernel kernel) {
        passes::insert_sync(kernel);
        return kernel;
      },
      "kernel"_a, "A copy of `kernel` with the set_flag/wait_flag pairs it needs (the compiler's InsertSync step).");
  m.def("emit_pto", &codegen::emit_pto, "kernel"_a, "The `.pto` text of a kernel.");
  m.def("instruction_table_markdown", &isa::instruction_table_markdown, "The instruction table as Markdown (docs/isa.md).");
  m.def("instruction_memories", [](const std::string& name) {
    std::vector<std::string> out;
    for (MemorySpace ms : instr_or_fail(name).memories) out.push_back(memory_space_name(ms));
    return out;
  });
  m.def("engine_names", &runtime::engine_names);
  m.def("tensor_self_overlap", &engines::self_overlap, "shape"_a, "strides"_a,
        "Why two elements of a view with this shape and these strides (in elements) share memory; \"\" when none do.");
  m.def("set_native_include_dir", &engines::set_native_include_dir, "dir"_a,
        "Where the native engine's generated C++ finds pypto/isa/optimized/ (the package's include/).");
  m.def("native_include_dir", &engines::native_include_dir);
  m.def(
      "native_kernel_sources",
      [](const isa::HostProgram& program, const std::string& platform) {
        runtime::RunOptions options{platform, "native"};
        const isa::ChipSpec chip = runtime::resolve_run_target(options);
        std::vector<std::pair<std::string, std::string>> out;
        for (const isa::Kernel& k : program.kernels) {
          std::vector<bool> natives;
          std::string source = engines::generate_native_source({&k}, chip, natives);
          out.emplace_back(k.name, natives.empty() || !natives[0] ? std::string() : source);
        }
        return out;
      },
      "program"_a, "platform"_a = "a2a3sim",
      "The C++ the native engine compiles for each kernel of a host program: (kernel name, source) pairs; the source "
      "is empty for a kernel that runs on the reference library.");
  m.def(
      "native_kernel_report",
      [](const isa::HostProgram& program, const std::string& platform) {
        runtime::RunOptions options{platform, "native"};
        const isa::ChipSpec chip = runtime::resolve_run_target(options);
        std::vector<std::tuple<std::string, bool, std::vector<std::string>, std::vector<std::string>>> out;
        for (const isa::Kernel& k : program.kernels) {
          engines::NativeKernelReport r = engines::native_kernel_report(k, chip);
          out.emplace_back(k.name, r.native, std::move(r.fast), std::move(r.reference));
        }
        return out;
      },
      "program"_a, "platform"_a = "a2a3sim",
      "What the native engine makes of each kernel: (kernel name, compiled, tile instructions with a fast path, tile "
      "instructions through the reference library).");
  m.def("native_library_paths", &engines::native_library_paths,
        "The optimised library's paths the kernel compiler builds here, e.g. \"vector=avx512 f16=f16c\" (compiles a "
        "probe kernel once; disk cache).");
  m.def("native_cache_dir", &engines::native_cache_dir);
  m.def("native_matmul_paths", &engines::native_matmul_paths,
        "The matmul fast path native kernels compile to now, by operand dtype ('FP32', 'FP16', 'BF16'), and 'isa': "
        "the PYPTO_NATIVE_ISA target (docs/isa.md \"Matmul fast paths\").");
  m.def("cache_key_env_vars", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& v : cache_key_env_vars()) out.emplace_back(v.name, v.summary);
    return out;
  }, "The environment variables that change the native engine's kernel cache key: (name, summary) pairs.");
  m.def("env_vars", [] {
    std::vector<std::tuple<std::string, std::string, bool>> out;
    for (const auto& v : env_vars()) out.emplace_back(v.name, v.summary, v.cache_key);
    return out;
  }, "Every environment variable pypto reads: (name, summary, changes the kernel cache key) tuples.");
  m.def(
      "chip_clock_ghz",
      [](const std::string& platform) {
        runtime::RunOptions options{platform, "sim"};
        return runtime::resolve_run_target(options).clock_ghz;
      },
      "platform"_a, "The modelled clock of a platform's chip (GHz): modelled cycles / clock_ghz = modelled ns.");

  m.def("isa_execute", &isa_execute, "mnemonic"_a, "outs"_a, "ins"_a, "attrs"_a = nb::dict(),
        "valid_shape"_a = nb::none(), "dtypes"_a = nb::none(), "memories"_a = nb::none(), "pad"_a = "null",
        "platform"_a = "a2a3sim", "engine"_a = "sim",
        "Runs one tile instruction (engine \"sim\": the reference library; \"native\": the optimised library) on numpy arrays (outputs in place). Operands follow the "
        "instruction's signature; arrays are tiles (or global tensors for TLOAD/TSTORE), ints/floats scalars, lists "
        "offsets. valid_shape [rows, cols] clamps every tile's valid region; dtypes/memories (outs then ins) override.");
  m.def("instruction_names", [] {
    std::vector<std::string> names;
    for (const isa::InstrDef* d : isa::all_instrs()) names.push_back(d->name);
    return names;
  });
  m.def(
      "instruction_cost",
      [](const std::string& name, const std::string& dtype, int64_t rows, int64_t cols, int64_t k) {
        return isa::instr_cost_cycles(instr_or_fail(name), parse_dtype(dtype), rows, cols, k);
      },
      "name"_a, "dtype"_a, "rows"_a, "cols"_a, "k"_a = 0, "Modelled cycles (chip-model.md); matmul: M=rows, N=cols, K=k.");
  m.def("instruction_pipe", [](const std::string& name) { return std::string(isa::pipe_name(instr_or_fail(name).pipe)); });
  m.def(
      "kernel_pipes",
      [](const isa::Kernel& k) {
        std::vector<std::string> pipes;
        for (const isa::Instr& i : k.code) pipes.push_back(isa::pipe_name(isa::pipe_of(i, k)));
        return pipes;
      },
      "kernel"_a, "The pipe of each instruction of `kernel` (scalar and control instructions: S).");
  m.def("instruction_signature", [](const std::string& name) {
    const isa::InstrDef& d = instr_or_fail(name);
    std::vector<std::string> dts;
    for (DataType t : d.dtypes) dts.push_back(dtype_name(t));
    return nb::make_tuple(d.outs_sig, d.ins_sig, dts, d.summary);
  });
}

}  // namespace pypto::bindings
