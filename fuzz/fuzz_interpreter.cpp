// libFuzzer target: instruction streams built from arbitrary bytes (kernels, and a quarter of
// the time host programs with pl.array instructions and run-time task-id deps) must be
// rejected by validation or run to completion; never crash, hang or read outside their buffers.
// Build: cmake -S . -B build/fuzz -DCMAKE_CXX_COMPILER=clang++ -DPYPTO_FUZZ=ON -DPYPTO_BUILD_PYTHON=OFF
#include <cstdint>
#include <cstring>
#include <vector>

#include "pypto/passes/insert_sync.h"
#include "pypto/isa/instructions.h"
#include "pypto/runtime/runtime.h"

namespace {
using namespace pypto;

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  int small(int n) { return n > 0 ? u8() % n : 0; }
  int64_t i16() { return static_cast<int16_t>(u8() | (u8() << 8)); }
  bool done() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

constexpr DataType kDtypes[] = {DataType::FP32, DataType::FP16, DataType::BF16, DataType::INT32,
                                DataType::INT16, DataType::INT8, DataType::UINT8, DataType::BOOL};
constexpr MemorySpace kMems[] = {MemorySpace::Vec, MemorySpace::Mat, MemorySpace::Left, MemorySpace::Right,
                                 MemorySpace::Acc, MemorySpace::Bias, MemorySpace::DDR};

isa::Scalar scalar(Bytes& b, int num_regs) {
  switch (b.small(3)) {
    case 0: return isa::Scalar::imm(b.small(40) - 4);
    case 1: return isa::Scalar::immf(static_cast<double>(b.i16()) / 8.0);
    default: return isa::Scalar::r(b.small(num_regs + 2) - 1);
  }
}

isa::Operand operand(Bytes& b, int num_regs, int tiles, int params) {
  switch (b.small(4)) {
    case 0: return isa::Operand::tile(b.small(tiles + 2) - 1);
    case 1: return isa::Operand::tensor(b.small(params + 2) - 1);
    case 2: return isa::Operand::scalar_of(scalar(b, num_regs));
    default: {
      std::vector<isa::Scalar> list;
      for (int i = b.small(4); i > 0; --i) list.push_back(scalar(b, num_regs));
      return isa::Operand::list_of(list);
    }
  }
}

// Gives the loops and ifs of `code` the jumps codegen would emit, where they pair up.
void nest(std::vector<isa::Instr>& code) {
  std::vector<int> open;
  for (int pc = 0; pc < static_cast<int>(code.size()); ++pc) {
    isa::Instr& in = code[pc];
    switch (in.kind) {
      case isa::InstrKind::kLoopBegin:
      case isa::InstrKind::kIf: open.push_back(pc); break;
      case isa::InstrKind::kElse:
        if (!open.empty() && code[open.back()].kind == isa::InstrKind::kIf) {
          code[open.back()].jump = pc + 1;
          open.back() = pc;
        }
        break;
      case isa::InstrKind::kLoopEnd:
        if (!open.empty() && code[open.back()].kind == isa::InstrKind::kLoopBegin) {
          code[open.back()].jump = pc + 1;
          in.jump = open.back() + 1;
          in.dst_reg = code[open.back()].dst_reg;
          open.pop_back();
        }
        break;
      case isa::InstrKind::kEndIf:
        if (!open.empty() && code[open.back()].kind != isa::InstrKind::kLoopBegin) {
          code[open.back()].jump = pc;
          open.pop_back();
        }
        break;
      default: break;
    }
  }
}

// Host-program mode: an orchestration with pl.array instructions, task ids in registers
// (launch_reg) and run-time deps (dep_regs) around calls of one well-formed kernel; the
// validator or the run must reject bad indices, registers and task ids with a PyptoError.
void fuzz_host_program(Bytes& b) {
  static std::vector<float> a(16 * 64, 1.0f), c(16 * 64, 2.0f), out(16 * 64, 0.0f);
  isa::Kernel k;
  k.name = "add";
  for (const char* n : {"a", "b", "out"}) {
    isa::ParamDesc p;
    p.name = n;
    p.shape = {16, 64};
    p.dir = std::string(n) == "out" ? ParamDirection::Out : ParamDirection::In;
    k.params.push_back(p);
  }
  for (int i = 0; i < 3; ++i) {
    isa::TileDesc t;
    t.name = "t" + std::to_string(i);
    t.rows = 16;
    t.cols = 64;
    t.addr = i * 4096;
    t.valid_rows = isa::Scalar::imm(16);
    t.valid_cols = isa::Scalar::imm(64);
    k.tiles.push_back(t);
  }
  auto tile_instr = [](const char* m, std::vector<isa::Operand> outs, std::vector<isa::Operand> ins) {
    isa::Instr in;
    in.mnemonic = m;
    in.outs = std::move(outs);
    in.ins = std::move(ins);
    return in;
  };
  const auto zero = isa::Operand::list_of({isa::Scalar::imm(0), isa::Scalar::imm(0)});
  k.code = {tile_instr("TLOAD", {isa::Operand::tile(0)}, {isa::Operand::tensor(0), zero}),
            tile_instr("TLOAD", {isa::Operand::tile(1)}, {isa::Operand::tensor(1), zero}),
            tile_instr("TADD", {isa::Operand::tile(2)}, {isa::Operand::tile(0), isa::Operand::tile(1)}),
            tile_instr("TSTORE", {isa::Operand::tensor(2)}, {isa::Operand::tile(2), zero})};
  passes::insert_sync(k);

  isa::HostProgram p;
  p.name = "fuzz_host";
  p.params = k.params;
  p.tensors = k.params;
  p.kernels = {k};
  static constexpr DataType kArrayDtypes[] = {DataType::TASK_ID, DataType::INDEX, DataType::FP32};
  for (int i = b.small(3); i > 0; --i)
    p.arrays.push_back({"arr" + std::to_string(p.arrays.size()), kArrayDtypes[b.small(3)], b.small(10) - 1});
  p.num_regs = 2 + b.small(4);
  p.reg_is_float.assign(static_cast<size_t>(p.num_regs), false);
  static const isa::InstrKind kKinds[] = {isa::InstrKind::kScalarMov, isa::InstrKind::kScalarBin, isa::InstrKind::kLoopBegin,
                                          isa::InstrKind::kLoopEnd,   isa::InstrKind::kIf,        isa::InstrKind::kEndIf,
                                          isa::InstrKind::kCall,      isa::InstrKind::kArrayGet,  isa::InstrKind::kArraySet};
  auto reg_list = [&](int max_len) {
    std::vector<int64_t> regs;
    for (int i = b.small(max_len + 1); i > 0; --i) regs.push_back(b.small(p.num_regs + 2) - 1);
    return regs;
  };
  while (!b.done() && p.code.size() < 16) {
    isa::Instr in;
    in.kind = kKinds[b.small(9)];
    in.dst_reg = b.small(p.num_regs + 2) - 1;
    in.sop = static_cast<BinaryOp>(b.small(17));
    in.a = scalar(b, p.num_regs);
    in.b = scalar(b, p.num_regs);
    in.step = scalar(b, p.num_regs);
    in.jump = b.small(static_cast<int>(p.code.size()) + 4) - 1;
    if (in.kind == isa::InstrKind::kCall) {
      in.callee = b.small(5) ? 0 : b.small(3) - 1;
      const int n = b.small(5) ? 3 : b.small(5);
      for (int i = 0; i < n; ++i) in.ins.push_back(isa::Operand::tensor(b.small(5) ? i : b.small(5) - 1));
      if (b.small(2)) in.attrs["dep_regs"] = reg_list(2);
      if (b.small(2)) in.attrs["launch_reg"] = reg_list(1);
    } else if (in.kind == isa::InstrKind::kArrayGet || in.kind == isa::InstrKind::kArraySet) {
      in.attrs["array"] = int64_t{b.small(static_cast<int>(p.arrays.size()) + 2) - 1};
    }
    p.code.push_back(in);
  }
  if (b.small(2)) nest(p.code);
  std::vector<engines::HostArg> args;
  for (auto* buf : {&a, &c, &out}) {
    engines::TensorView v;
    v.data = buf->data();
    v.shape = {16, 64};
    v.strides = {64, 1};
    v.name = "t";
    args.push_back(engines::HostArg::of_tensor(v));
  }
  runtime::RunOptions options;
  options.num_workers = 1;
  try {
    runtime::run_host_program(p, args, options);
  } catch (const PyptoError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<const isa::InstrDef*> table = isa::all_instrs();
  Bytes b(data, size);
  if (b.small(4) == 0) {
    fuzz_host_program(b);
    return 0;
  }
  isa::Kernel k;
  k.name = "fuzz";
  std::vector<std::vector<float>> storage;
  std::vector<engines::HostArg> args;
  const int n_params = b.small(4);
  for (int i = 0; i < n_params; ++i) {
    isa::ParamDesc p;
    p.name = "p" + std::to_string(i);
    p.is_tensor = b.small(4) != 0;
    p.dtype = DataType::FP32;
    if (p.is_tensor) {
      const int64_t rows = 1 + b.small(40), cols = 1 + b.small(40);
      p.shape = {rows, cols};
      storage.emplace_back(static_cast<size_t>(rows * cols), 1.0f);
      engines::TensorView v;
      v.data = storage.back().data();
      v.dtype = DataType::FP32;
      v.shape = {rows, cols};
      v.strides = {cols, 1};
      v.name = p.name;
      args.push_back(engines::HostArg::of_tensor(v));
    } else {
      args.push_back(engines::HostArg::of_int(b.small(16)));
    }
    k.params.push_back(p);
  }
  k.num_regs = b.small(6) + n_params;
  k.reg_is_float.assign(static_cast<size_t>(k.num_regs), false);
  for (int i = b.small(6); i > 0; --i) {
    isa::TileDesc t;
    t.name = "t" + std::to_string(k.tiles.size());
    t.dtype = kDtypes[b.small(8)];
    t.memory = kMems[b.small(7)];
    t.rows = b.small(70) - 2;
    t.cols = b.small(70) - 2;
    t.addr = b.small(8) * 4096 + (b.small(8) == 0 ? b.i16() * 64 : 0);
    t.valid_rows = b.small(4) ? isa::Scalar::imm(t.rows) : scalar(b, k.num_regs);
    t.valid_cols = b.small(4) ? isa::Scalar::imm(t.cols) : scalar(b, k.num_regs);
    k.tiles.push_back(t);
  }
  const int tiles = static_cast<int>(k.tiles.size());
  while (!b.done() && k.code.size() < 24) {
    isa::Instr in;
    // While loops are left out: an endless one runs 2^24 iterations before it is reported,
    // too slow for a fuzzer.
    static const isa::InstrKind kKinds[] = {isa::InstrKind::kTile,       isa::InstrKind::kScalarBin, isa::InstrKind::kScalarMov,
                                            isa::InstrKind::kScalarRead, isa::InstrKind::kLoopBegin, isa::InstrKind::kLoopEnd,
                                            isa::InstrKind::kIf,         isa::InstrKind::kElse,      isa::InstrKind::kEndIf,
                                            isa::InstrKind::kCall,       isa::InstrKind::kAllocTensor};
    in.kind = kKinds[b.small(11)];
    if (in.kind == isa::InstrKind::kTile) {
      const isa::InstrDef* def = table[b.small(static_cast<int>(table.size()))];
      in.mnemonic = def->name;
      // Mostly well-formed operand lists, sometimes not.
      const int n_out = b.small(5) ? def->num_outs() : b.small(3);
      const int n_in = b.small(5) ? def->max_ins() : b.small(5);
      for (int i = 0; i < n_out; ++i) in.outs.push_back(operand(b, k.num_regs, tiles, n_params));
      for (int i = 0; i < n_in; ++i) in.ins.push_back(operand(b, k.num_regs, tiles, n_params));
      if (b.small(3) == 0) in.attrs["mode"] = std::string(b.small(2) ? "round" : "floor");
      if (b.small(3) == 0) in.attrs["cmp"] = std::string(b.small(2) ? "LT" : "EQ");
    } else {
      in.dst_reg = b.small(k.num_regs + 2) - 1;
      in.sop = static_cast<BinaryOp>(b.small(17));
      in.a = scalar(b, k.num_regs);
      in.b = scalar(b, k.num_regs);
      in.step = scalar(b, k.num_regs);
      in.jump = b.small(static_cast<int>(k.code.size()) + 4) - 1;
      in.callee = b.small(3) - 1;
      for (int i = b.small(3); i > 0; --i) in.ins.push_back(operand(b, k.num_regs, tiles, n_params));
    }
    k.code.push_back(in);
  }
  // Half of the inputs get well-nested jumps (as codegen emits them) so execution goes deep.
  if (b.small(2)) nest(k.code);
  runtime::RunOptions options;
  try {
    runtime::run_kernel(k, args, options);
  } catch (const PyptoError&) {
  }
  return 0;
}
