// Python bindings of the instruction-level kernel API (pypto._core.kernel): device buffers,
// lane programs built from the front end's op tuples, launches, lowering, the modelled
// timeline and the single-step executor. Conversions only.
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstring>

#include "bindings.h"
#include "pypto/kernel/launch_queue.h"
#include "pypto/kernel/lower_lanes.h"
#include "pypto/kernel/timeline.h"
#include "pypto/kernel/warp_sim.h"
#include "pypto/runtime/runtime.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace pypto::bindings {

namespace {

using namespace pypto::kernel;

LaneOpKind op_kind(const std::string& s) {
  static const std::vector<std::pair<const char*, LaneOpKind>> kinds = {
      {"const", LaneOpKind::kConst}, {"param", LaneOpKind::kParam}, {"global_id", LaneOpKind::kGlobalId},
      {"block_id", LaneOpKind::kBlockId}, {"lane_id", LaneOpKind::kLaneId}, {"binary", LaneOpKind::kBinary},
      {"load", LaneOpKind::kLoad}, {"store", LaneOpKind::kStore}, {"fma", LaneOpKind::kFma}, {"mad", LaneOpKind::kMad},
      {"if", LaneOpKind::kIf}, {"endif", LaneOpKind::kEndIf}, {"barrier", LaneOpKind::kBarrier},
      {"barrier_block", LaneOpKind::kBarrierBlock}, {"alloc_local", LaneOpKind::kAllocLocal},
      {"async_load", LaneOpKind::kAsyncLoad}, {"wait_all", LaneOpKind::kWaitAll}, {"mma", LaneOpKind::kMma},
      {"store_local", LaneOpKind::kStoreLocal}, {"stage_begin", LaneOpKind::kStageBegin},
      {"stage_end", LaneOpKind::kStageEnd}, {"pipeline_run", LaneOpKind::kPipelineRun}};
  for (auto& [n, k] : kinds)
    if (s == n) return k;
  fail(ErrorKind::kInternal, {}, "unknown lane op '" + s + "'", "report this bug");
}

// ops: (kind, dst, args, value, is_float, name, after, file, line) tuples.
std::shared_ptr<LaneProgram> make_program(const std::string& name, const std::vector<std::string>& params,
                                          const nb::list& ops, int num_values) {
  auto p = std::make_shared<LaneProgram>();
  p->name = name;
  p->params = params;
  p->num_values = num_values;
  for (nb::handle h : ops) {
    nb::tuple t = nb::cast<nb::tuple>(h);
    LaneOp op;
    op.kind = op_kind(nb::cast<std::string>(t[0]));
    op.dst = nb::cast<int>(t[1]);
    op.args = nb::cast<std::vector<int>>(t[2]);
    op.value = nb::cast<double>(t[3]);
    op.is_float = nb::cast<bool>(t[4]);
    op.name = nb::cast<std::string>(t[5]);
    op.after = nb::cast<std::string>(t[6]);
    op.span = Span{nb::cast<std::string>(t[7]), nb::cast<int>(t[8]), 0};
    p->ops.push_back(std::move(op));
  }
  return p;
}

// The Python-side handle of a device buffer. It owns a plain C++ reference, so launches
// can drop their copies on the worker thread without touching Python objects (or the GIL).
struct BufferRef {
  std::shared_ptr<DeviceBuffer> buf;
};

std::vector<LaunchArg> launch_args(const nb::list& args) {
  std::vector<LaunchArg> out;
  for (nb::handle h : args) {
    LaunchArg a;
    if (nb::isinstance<BufferRef>(h)) a.buffer = nb::cast<BufferRef&>(h).buf;
    else if (nb::isinstance<nb::bool_>(h) || nb::isinstance<nb::int_>(h)) a.i = to_int64(h), a.f = static_cast<double>(a.i);
    else if (nb::isinstance<nb::float_>(h)) a.is_float = true, a.f = nb::cast<double>(h), a.i = static_cast<int64_t>(a.f);
    else fail(ErrorKind::kType, {}, "a kernel argument must be a pto tensor, an int or a float, got " +
                  nb::cast<std::string>(nb::str(h.type())), "allocate device memory with pto.alloc_tensor");
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<std::shared_ptr<DeviceBuffer>> held(const std::vector<LaunchArg>& args) {
  std::vector<std::shared_ptr<DeviceBuffer>> out;
  for (const LaunchArg& a : args) {
    if (!a.buffer) continue;
    a.buffer->data("pto.launch");  // a freed tensor is an error at launch
    out.push_back(a.buffer);
  }
  return out;
}

nb::dict note_dict(const InstrNote& n) {
  nb::dict d;
  d["cls"] = n.cls; d["stage"] = n.stage; d["after"] = n.after; d["iteration"] = n.iteration;
  d["first_lane"] = n.first_lane; d["lanes"] = n.lanes; d["tensor_arg"] = n.tensor_arg;
  d["tensor_offset"] = n.tensor_offset; d["tile"] = n.tile; d["repeat"] = n.repeat;
  return d;
}

// The host side of a pto.memcpy_*: device tensors hold fp32 elements (the lane ops' view), so
// the array must be float32 and fit the tensor (a smaller array copies the tensor's first
// elements); the error names both sides. Returns the byte count.
int64_t check_host_copy(const char* what, const DeviceBuffer& b, const nb::ndarray<nb::device::cpu, nb::c_contig>& a,
                        const char* convert) {
  const nb::dlpack::dtype dt = a.dtype();
  const int64_t n = static_cast<int64_t>(a.size() * a.itemsize());
  const std::string tensor = "device tensor '" + b.label() + "' (" + std::to_string(b.nbytes()) + " bytes, " +
                             std::to_string(b.nbytes() / 4) + " fp32 elements)";
  if (dt != nb::dtype<float>()) {
    const char* kind = dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float)  ? "float"
                       : dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Int)  ? "int"
                       : dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::UInt) ? "uint"
                       : dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bool) ? "bool"
                                                                                        : "other";
    fail(ErrorKind::kType, {}, std::string(what) + ": the host array is " + kind + std::to_string(dt.bits) + " but " +
             tensor + " holds float32 elements; the bytes would be reinterpreted",
         std::string("pass a float32 array: ") + convert);
  }
  if (n > b.nbytes())
    fail(ErrorKind::kValue, {}, std::string(what) + ": the host array has " + std::to_string(a.size()) + " float32 elements (" +
             std::to_string(n) + " bytes) but " + tensor + " is smaller",
         "allocate the tensor with pto.alloc_tensor(x.nbytes) for a float32 x, or copy a slice that fits");
  return n;
}

// Waits until `ready(ms)` (a bounded wait without the GIL) is true, watching for Ctrl-C between
// waits: a signal cancels the launches (running kernels stop at their next loop iteration,
// queued ones do not start), and the KeyboardInterrupt is raised once they have stopped, with
// the stream ready for the next launch.
template <typename Ready>
void wait_interruptibly(Ready ready) {
  while (true) {
    {
      nb::gil_scoped_release r;
      if (ready(20)) return;
    }
    if (PyErr_CheckSignals() != 0) {
      {
        nb::gil_scoped_release r;
        cancel_launches();
      }
      throw nb::python_error();
    }
  }
}

void wait_buffer(DeviceBuffer& b) {
  wait_interruptibly([&](int ms) { return b.wait_idle_for(ms); });
}

nb::dict race_dict(const WarpRace& r) {
  nb::dict d;
  d["kernel"] = r.kernel; d["tensor"] = r.tensor; d["arg"] = r.arg; d["block"] = r.block;
  d["element"] = r.element; d["byte_offset"] = r.byte_offset;
  d["first_lane"] = r.first_lane; d["second_lane"] = r.second_lane;
  d["first_access"] = r.first_write ? "write" : "read"; d["second_access"] = r.second_write ? "write" : "read";
  d["first_line"] = r.first_line; d["second_line"] = r.second_line;
  d["first_warp"] = r.first_lane / 32; d["second_warp"] = r.second_lane / 32;
  d["step"] = r.step; d["file"] = r.span.file; d["message"] = r.message; d["fix"] = r.fix;
  d["text"] = std::string(r.error().what());
  return d;
}

nb::dict step_dict(const WarpStep& s) {
  nb::dict d;
  d["index"] = s.index; d["block"] = s.block; d["warp"] = s.warp; d["first_lane"] = s.first_lane;
  d["lanes"] = s.lanes; d["op"] = s.op; d["what"] = s.what; d["line"] = s.line; d["raced"] = s.raced;
  nb::list effects;
  for (const WarpLaneEffect& e : s.effects) effects.append(nb::make_tuple(e.lane, e.arg, e.element, e.value));
  d["effects"] = effects;
  return d;
}

}  // namespace

void bind_kernel(nb::module_& root) {
  nb::module_ m = root.def_submodule("kernel", "instruction-level @pto.kernel API");

  nb::class_<BufferRef>(m, "DeviceBuffer")
      .def("__init__", [](BufferRef* self, int64_t nbytes, const std::string& label) {
             new (self) BufferRef{std::make_shared<DeviceBuffer>(nbytes, label)};
           }, "nbytes"_a, "label"_a = "tensor")
      .def_prop_ro("nbytes", [](const BufferRef& r) { return r.buf->nbytes(); })
      .def_prop_ro("freed", [](const BufferRef& r) { return r.buf->freed(); })
      .def_prop_ro("pending", [](const BufferRef& r) { return r.buf->pending(); })
      .def_prop_rw("label", [](const BufferRef& r) { return r.buf->label(); },
                   [](BufferRef& r, const std::string& l) { r.buf->set_label(l); })
      .def("wait_idle", [](BufferRef& r) { wait_buffer(*r.buf); })
      .def("free", [](BufferRef& r) {
        wait_buffer(*r.buf);
        nb::gil_scoped_release g;
        r.buf->free();
      })
      .def("copy_from", [](BufferRef& r, nb::ndarray<nb::device::cpu, nb::c_contig> a) {
        DeviceBuffer& b = *r.buf;
        b.data("pto.memcpy_h2d");
        const int64_t n = check_host_copy("pto.memcpy_h2d", b, a, "x.astype(np.float32)");
        uint8_t* dst = b.data("pto.memcpy_h2d");
        wait_buffer(b);
        std::memcpy(dst, a.data(), static_cast<size_t>(n));
      })
      .def("copy_to", [](BufferRef& r, nb::ndarray<nb::device::cpu, nb::c_contig> a) {
        DeviceBuffer& b = *r.buf;
        b.data("pto.memcpy_d2h");
        const int64_t n = check_host_copy("pto.memcpy_d2h", b, a, "np.zeros(n, dtype=np.float32)");
        wait_buffer(b);
        raise_launch_error();
        std::memcpy(a.data(), b.data("pto.memcpy_d2h"), static_cast<size_t>(n));
      });

  nb::class_<LaneProgram>(m, "LaneProgram")
      .def_ro("name", &LaneProgram::name)
      .def_ro("params", &LaneProgram::params)
      .def_prop_ro("num_ops", [](const LaneProgram& p) { return p.ops.size(); })
      .def_prop_ro("lowers_to_tiles", [](const LaneProgram& p) { return lowers_to_tiles(p); });
  m.def("lane_program", &make_program, "name"_a, "params"_a, "ops"_a, "num_values"_a);

  nb::class_<LoweredKernel>(m, "LoweredKernel")
      .def_prop_ro("kernel", [](const LoweredKernel& l) { return l.kernel; })
      // Instruction indices below are user-visible ones (LoweredKernel::lane_pcs): the lane
      // program's tile instructions, without InsertSync's flags or loop control.
      .def_prop_ro("num_instrs", [](const LoweredKernel& l) { return l.lane_pcs.size(); })
      .def_prop_ro("num_code", [](const LoweredKernel& l) { return l.kernel.code.size(); })
      .def_prop_ro("num_sync", [](const LoweredKernel& l) {
        size_t n = 0;
        for (const InstrNote& note : l.notes) n += note.cls == "SYNC";
        return n;
      })
      .def_prop_ro("num_loops", [](const LoweredKernel& l) {
        size_t n = 0;
        for (const isa::Instr& in : l.kernel.code) n += in.kind == isa::InstrKind::kLoopBegin;
        return n;
      })
      .def_ro("chunk_lanes", &LoweredKernel::chunk_lanes)
      .def_ro("pipelined", &LoweredKernel::pipelined)
      .def("pc", [](const LoweredKernel& l, int i) { return l.lane_pcs.at(i); }, "index"_a)
      .def("mnemonic", [](const LoweredKernel& l, int i) { return l.kernel.code.at(l.lane_pcs.at(i)).mnemonic; })
      .def("line", [](const LoweredKernel& l, int i) { return l.kernel.code.at(l.lane_pcs.at(i)).span.line; })
      .def("note", [](const LoweredKernel& l, int i) { return note_dict(l.notes.at(l.lane_pcs.at(i))); })
      .def("code_mnemonics", [](const LoweredKernel& l) {
        std::vector<std::string> out;
        for (const isa::Instr& in : l.kernel.code)
          out.push_back(in.kind == isa::InstrKind::kTile ? in.mnemonic
                        : in.kind == isa::InstrKind::kLoopBegin ? "LOOP"
                        : in.kind == isa::InstrKind::kLoopEnd ? "END_LOOP"
                        : in.kind == isa::InstrKind::kIf ? "IF"
                        : in.kind == isa::InstrKind::kEndIf ? "END_IF" : "SCALAR");
        return out;
      })
      .def("timeline", [](const LoweredKernel& l) {
        nb::list out;
        for (const TimelineEntry& e : model_timeline(l)) out.append(nb::make_tuple(e.instr, e.start, e.end, e.pipe));
        return out;
      })
      .def_ro("chunk_range", &LoweredKernel::chunk_range)
      .def_ro("independent_chunks", &LoweredKernel::independent_chunks)
      .def_ro("total_lanes", &LoweredKernel::total_lanes)
      .def("run", [](const LoweredKernel& l, const std::string& platform, const std::string& engine, int cores) {
        nb::gil_scoped_release r;
        const auto t0 = std::chrono::steady_clock::now();
        run_lowered(l, platform, engine, cores);
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }, "platform"_a = "a2a3sim", "engine"_a = "sim", "cores"_a = 0);

  m.def("lower", [](const LaneProgram& p, const nb::list& args, int64_t grid, int64_t block, const std::string& platform,
                    int64_t chunk_blocks, bool unroll) {
        return std::make_shared<LoweredKernel>(lower_lanes(p, launch_args(args), {grid, block}, platform, chunk_blocks, unroll));
      }, "program"_a, "args"_a, "grid"_a, "block"_a, "platform"_a = "a2a3sim", "chunk_blocks"_a = 0, "unroll"_a = false);

  m.def("launch", [](const LaneProgram& program, const nb::list& args, int64_t grid, int64_t block,
                     const std::string& platform, const std::string& engine) {
        std::vector<LaunchArg> la = launch_args(args);
        auto p = std::make_shared<LaneProgram>(program);  // owned by C++ (the job ends off the GIL)
        runtime::resolve_run_target({platform, engine, 1});
        // A submission that must wait for the stream (its task list is full) waits here,
        // where Ctrl-C can stop it.
        if (launch_would_wait(platform)) wait_interruptibly([](int ms) { return wait_launches_for(ms); });
        if (lowers_to_tiles(*p)) {
          auto lowered = std::make_shared<const LoweredKernel>(lower_lanes(*p, la, {grid, block}, platform));
          nb::gil_scoped_release r;  // a submission may wait (the stream's task list is full)
          enqueue_lowered(lowered, held(la), platform, engine);
        } else {
          nb::gil_scoped_release r;
          enqueue_warps(p, std::move(la), {grid, block}, platform);
        }
      }, "program"_a, "args"_a, "grid"_a, "block"_a, "platform"_a = "a2a3sim", "engine"_a = "sim");

  m.def("sync", [] {
    wait_interruptibly([](int ms) { return wait_launches_for(ms); });
    nb::gil_scoped_release r;
    sync_launches();
  });
  m.def("cancel_launches", [] {
    nb::gil_scoped_release r;
    cancel_launches();
  });
  m.def("raise_launch_error", &raise_launch_error);
  m.def("launches_in_flight", &launches_in_flight);
  m.def("last_launch_blocks", &last_launch_blocks);
  m.def("stream_workers", &stream_workers);
  m.def("run_warps", [](const LaneProgram& p, const nb::list& args, int64_t grid, int64_t block) {
    std::vector<LaunchArg> la = launch_args(args);
    nb::gil_scoped_release r;
    run_warps(p, la, {grid, block});
  }, "program"_a, "args"_a, "grid"_a, "block"_a);

  // The warp model one step at a time (the debugger of kernels with barriers).
  nb::class_<WarpStepper>(m, "WarpStepper")
      .def(nb::new_([](const LaneProgram& p, const nb::list& args, int64_t grid, int64_t block) {
             std::vector<LaunchArg> la = launch_args(args);
             held(la);  // a freed tensor is an error here
             return std::make_shared<WarpStepper>(std::make_shared<const LaneProgram>(p), std::move(la),
                                                  LaunchShape{grid, block}, true);
           }), "program"_a, "args"_a, "grid"_a, "block"_a)
      .def_prop_ro("done", &WarpStepper::done)
      .def_prop_ro("finished", &WarpStepper::finished)
      .def_prop_ro("stopped", &WarpStepper::stopped)
      .def_prop_ro("steps", &WarpStepper::steps)
      .def("next", [](const WarpStepper& s) { return step_dict(s.next()); })
      .def("step", [](WarpStepper& s) { return step_dict(s.step()); })
      .def_prop_ro("race", [](const WarpStepper& s) -> nb::object {
        if (!s.race()) return nb::none();
        return race_dict(*s.race());
      });

  nb::class_<KernelStepper>(m, "KernelStepper")
      .def(nb::new_([](std::shared_ptr<LoweredKernel> l, const std::string& platform) {
             return std::make_shared<KernelStepper>(l, platform);
           }), "lowered"_a, "platform"_a = "a2a3sim")
      .def_prop_ro("pc", &KernelStepper::pc)
      .def_prop_ro("done", &KernelStepper::done)
      .def("step", &KernelStepper::step)
      .def("tile_values", &KernelStepper::tile_values, "tile"_a, "start"_a, "count"_a);
}

}  // namespace pypto::bindings
