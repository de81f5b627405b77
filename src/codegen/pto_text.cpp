// The `.pto` text of a kernel: one PTO instruction per line in destination-passing form,
// `pto.tadd ins(%a, %b : !pto.tile<...>, !pto.tile<...>) outs(%c : !pto.tile<...>)`, with
// scf.for / scf.while / scf.if for structure. Tile types carry location, dtype, shape, block and box
// layout, valid shape, pad and address, so the text alone shows the memory plan
// (docs/pto-format.md describes the format).
#include "pypto/codegen/pto_text.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <variant>

#include "pypto/isa/instructions.h"

namespace pypto::codegen {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string dtype_text(DataType t) {
  switch (t) {
    case DataType::BOOL: return "i1";
    case DataType::INT8: return "i8";
    case DataType::INT16: return "i16";
    case DataType::INT32: return "i32";
    case DataType::INT64: return "i64";
    case DataType::UINT8: return "u8";
    case DataType::UINT16: return "u16";
    case DataType::UINT32: return "u32";
    case DataType::UINT64: return "u64";
    case DataType::FP16: return "f16";
    case DataType::BF16: return "bf16";
    case DataType::FP32: return "f32";
    case DataType::INDEX: return "index";
    case DataType::TASK_ID: return "task_id";  // orchestration only: no kernel sees one
    case DataType::FP8E4M3FN: return "f8E4M3FN";
    case DataType::FP8E5M2: return "f8E5M2";
    case DataType::FP8E8M0: return "f8E8M0";
    case DataType::FP4: return "f4E2M1";
    case DataType::HF4: return "hf4";
    case DataType::HF8: return "hf8";
    case DataType::INT4: return "i4";
    case DataType::UINT4: return "u4";
  }
  return "?";
}

std::string number(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string scalar_text(const isa::Scalar& s) {
  if (s.kind == isa::Scalar::kReg) return "%r" + std::to_string(s.reg);
  return s.is_float ? number(s.f) : std::to_string(s.i);
}

std::string attr_text(const ir::AttrValue& v) {
  struct Visitor {
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return number(d); }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
    std::string operator()(DataType t) const { return dtype_text(t); }
    std::string operator()(MemorySpace m) const { return lower(memory_space_name(m)); }
    std::string operator()(PadValue p) const { return pad_value_name(p); }
    std::string operator()(const std::vector<int64_t>& v) const {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
      return out + "]";
    }
  };
  return std::visit(Visitor{}, v);
}

class PtoWriter {
 public:
  explicit PtoWriter(const isa::Kernel& k) : k_(k) {
    std::map<std::string, int> seen;
    for (auto& t : k.tiles) ++seen[t.name];
    for (size_t i = 0; i < k.tiles.size(); ++i) {
      std::string n = k.tiles[i].name.empty() ? "t" : k.tiles[i].name;
      tile_names_.push_back(seen[k.tiles[i].name] > 1 ? "%" + n + "." + std::to_string(i) : "%" + n);
    }
  }

  std::string run() {
    bool cube = k_.core == FunctionType::AIC;
    out_ << "// pto kernel " << k_.name << ": " << (cube ? "AIC (cube core)" : "AIV (vector core)") << ", "
         << k_.tiles.size() << " tiles, " << k_.num_regs << " scalar registers\n";
    out_ << "func.func @" << k_.name << "(";
    int reg = 0;
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const auto& p = k_.params[i];
      out_ << (i ? ", " : "");
      if (p.is_tensor) out_ << "%" << p.name << ": " << tensor_type(p);
      else out_ << "%r" << reg++ << ": " << dtype_text(p.dtype);
    }
    out_ << ") attributes {pto.core = \"" << (cube ? "aic" : "aiv") << "\"} {\n";
    for (const auto& in : k_.code) instr(in);
    out_ << "  return\n}\n";
    return out_.str();
  }

 private:
  std::string tensor_type(const isa::ParamDesc& p) {
    std::ostringstream os;
    os << "!pto.tensor<" << dtype_text(p.dtype) << ", ";
    for (size_t i = 0; i < p.shape.size(); ++i) {
      if (i) os << "x";
      if (p.shape[i] < 0) os << "?";
      else os << p.shape[i];
    }
    os << ", " << lower(param_direction_name(p.dir)) << ">";
    return os.str();
  }

  // !pto.tile<loc, dtype, RxC, blayout=row_major, slayout=none_box, valid=[vr, vc], pad=p, addr=0x..>.
  // Every tile of the instruction stream is stored row-major without inner boxes (that is
  // how the engines hold it); a matmul operand's ND/DN/NZ reading is an instruction attr.
  std::string tile_type(const isa::TileDesc& t) {
    std::ostringstream os;
    os << "!pto.tile<" << lower(memory_space_name(t.memory)) << ", " << dtype_text(t.dtype) << ", " << t.rows << "x"
       << t.cols << ", blayout=row_major, slayout=none_box, valid=[" << scalar_text(t.valid_rows) << ", "
       << scalar_text(t.valid_cols) << "], pad=" << pad_value_name(t.pad) << ", addr=0x" << std::hex << t.addr << ">";
    return os.str();
  }

  // Operands and their types, in MLIR's `ins(a, b : ta, tb)` order; a scalar list indexes
  // the tensor before it.
  std::string operands(const std::vector<isa::Operand>& ops) {
    std::vector<std::string> names, types;
    for (const auto& o : ops) {
      switch (o.kind) {
        case isa::Operand::kTile:
          names.push_back(tile_names_[o.index]);
          types.push_back(tile_type(k_.tiles[o.index]));
          break;
        case isa::Operand::kTensor:
          names.push_back("%" + k_.params[o.index].name);
          types.push_back(tensor_type(k_.params[o.index]));
          break;
        case isa::Operand::kScalar:
          names.push_back(scalar_text(o.scalar));
          types.push_back(o.scalar.is_float || (o.scalar.kind == isa::Scalar::kReg && is_float_reg(o.scalar.reg)) ? "f32" : "index");
          break;
        case isa::Operand::kScalarList: {
          std::string l = "[";
          for (size_t i = 0; i < o.list.size(); ++i) l += (i ? ", " : "") + scalar_text(o.list[i]);
          l += "]";
          if (!names.empty()) names.back() += l;
          else names.push_back(l);
          break;
        }
      }
    }
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
    if (!types.empty()) out += " : ";
    for (size_t i = 0; i < types.size(); ++i) out += (i ? ", " : "") + types[i];
    return out;
  }

  bool is_float_reg(int reg) const { return reg >= 0 && reg < static_cast<int>(k_.reg_is_float.size()) && k_.reg_is_float[reg]; }

  std::string reg_type(int reg) const { return is_float_reg(reg) ? "f32" : "index"; }

  // pto.set_flag[PIPE_MTE2, PIPE_V, EVENT_ID0], pto.wait_flag[...], pto.pipe_barrier[PIPE_ALL].
  static std::string sync_text(const isa::InstrDef& def, const isa::Instr& in) {
    auto str = [&](const char* key) {
      auto it = in.attrs.find(key);
      const std::string* s = it == in.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
      return s ? *s : std::string("ALL");
    };
    if (def.name == "PIPE_BARRIER") return isa::pto_mnemonic(def) + "[PIPE_" + str("pipe") + "]";
    if (def.name != "SET_FLAG" && def.name != "WAIT_FLAG") {  // pl.system ops: pto.fence, pto.syncall {...}
      std::string out = isa::pto_mnemonic(def);
      if (in.attrs.empty()) return out;
      out += " {";
      bool first = true;
      for (auto& [k, v] : in.attrs) {
        out += (first ? "" : ", ") + k + " = ";
        first = false;
        if (auto* s = std::get_if<std::string>(&v)) out += "\"" + *s + "\"";
        else if (auto* i = std::get_if<int64_t>(&v)) out += std::to_string(*i);
      }
      return out + "}";
    }
    auto ev = in.attrs.find("event");
    const int64_t event = ev != in.attrs.end() && std::holds_alternative<int64_t>(ev->second) ? std::get<int64_t>(ev->second) : 0;
    return isa::pto_mnemonic(def) + "[PIPE_" + str("src") + ", PIPE_" + str("dst") + ", EVENT_ID" + std::to_string(event) + "]";
  }

  void line(const std::string& s) { out_ << std::string(2 * depth_, ' ') << s << "\n"; }

  void instr(const isa::Instr& in) {
    static const char* kOps[] = {"add", "sub", "mul", "div", "floordiv", "rem", "min", "max",
                                 "cmp.eq", "cmp.ne", "cmp.lt", "cmp.le", "cmp.gt", "cmp.ge", "and", "or"};
    std::string r = "%r" + std::to_string(in.dst_reg);
    switch (in.kind) {
      case isa::InstrKind::kTile: {
        const isa::InstrDef* def = isa::find_instr(in.mnemonic);
        if (def && def->family == isa::InstrFamily::kSync) {
          line(sync_text(*def, in));
          break;
        }
        const std::string mnemonic = def ? isa::pto_mnemonic(*def) : "pto." + lower(in.mnemonic);
        std::string s = mnemonic + " ins(" + operands(in.ins) + ") outs(" + operands(in.outs) + ")";
        if (!in.attrs.empty()) {
          s += " {";
          bool first = true;
          for (auto& [k, v] : in.attrs) {
            s += (first ? "" : ", ") + k + " = " + attr_text(v);
            first = false;
          }
          s += "}";
        }
        if (def) s += "  // pipe " + std::string(isa::pipe_name(isa::pipe_of(in, k_)));
        line(s);
        break;
      }
      case isa::InstrKind::kScalarBin:
        line(r + " = arith." + kOps[static_cast<int>(in.sop)] + " " + scalar_text(in.a) + ", " + scalar_text(in.b) +
             " : " + reg_type(in.dst_reg));
        break;
      case isa::InstrKind::kScalarCast: {
        auto it = in.attrs.find("dtype");
        const DataType* d = it == in.attrs.end() ? nullptr : std::get_if<DataType>(&it->second);
        line(r + " = arith.cast " + scalar_text(in.a) + " : " + (d ? dtype_name(*d) : "?") + " -> " + reg_type(in.dst_reg));
        break;
      }
      case isa::InstrKind::kScalarMov: line(r + " = arith.mov " + scalar_text(in.a) + " : " + reg_type(in.dst_reg)); break;
      case isa::InstrKind::kScalarRead: line(r + " = pto.read_scalar ins(" + operands(in.ins) + ") : " + reg_type(in.dst_reg)); break;
      case isa::InstrKind::kScalarWrite: line("pto.write_scalar ins(" + operands(in.ins) + ")"); break;
      case isa::InstrKind::kLoopBegin:
        line("scf.for " + r + " = " + scalar_text(in.a) + " to " + scalar_text(in.b) + " step " + scalar_text(in.step) + " {");
        ++depth_;
        break;
      case isa::InstrKind::kLoopEnd:
        --depth_;
        line("}");
        break;
      case isa::InstrKind::kIf:
        line("scf.if " + scalar_text(in.a) + " {");
        ++depth_;
        break;
      case isa::InstrKind::kElse:
        --depth_;
        line("} else {");
        ++depth_;
        break;
      case isa::InstrKind::kEndIf:
        --depth_;
        line("}");
        break;
      // scf.while: the `before` region computes the condition, `do` is the body.
      case isa::InstrKind::kWhileBegin:
        line("scf.while {");
        ++depth_;
        break;
      case isa::InstrKind::kWhileCond:
        line("scf.condition " + scalar_text(in.a));
        --depth_;
        line("} do {");
        ++depth_;
        break;
      case isa::InstrKind::kWhileEnd:
        --depth_;
        line("}");
        break;
      case isa::InstrKind::kCall:
      case isa::InstrKind::kAllocTensor:
      case isa::InstrKind::kArrayGet:
      case isa::InstrKind::kArraySet:
      case isa::InstrKind::kTensorView:
      case isa::InstrKind::kTensorCopy: line("// host instruction in a kernel"); break;
    }
  }

  const isa::Kernel& k_;
  std::vector<std::string> tile_names_;
  std::ostringstream out_;
  int depth_ = 1;
};

}  // namespace

std::string emit_pto(const isa::Kernel& kernel) { return PtoWriter(kernel).run(); }

std::string emit_group_pto(const isa::Kernel& group, const std::vector<isa::Kernel>& kernels) {
  std::ostringstream out;
  out << "// pto group " << group.name << ": a mixed task on one cluster (1 AIC + 2 AIV); its parts run at once and "
      << "exchange tiles through the cluster's FIFOs\n";
  out << "func.func @" << group.name << "(";
  int reg = 0;
  std::vector<std::string> names;
  for (size_t i = 0; i < group.params.size(); ++i) {
    const auto& p = group.params[i];
    out << (i ? ", " : "");
    if (p.is_tensor) {
      std::string shape;
      for (size_t d = 0; d < p.shape.size(); ++d) shape += (d ? "x" : "") + (p.shape[d] < 0 ? std::string("?") : std::to_string(p.shape[d]));
      out << "%" << p.name << ": !pto.tensor<" << dtype_text(p.dtype) << ", " << shape << ", "
          << lower(param_direction_name(p.dir)) << ">";
      names.push_back("%" + p.name);
    } else {
      out << "%r" << reg << ": " << dtype_text(p.dtype);
      names.push_back("%r" + std::to_string(reg++));
    }
  }
  out << ") attributes {pto.core = \"mix\"} {\n";
  for (const isa::KernelPart& part : group.parts) {
    std::string role = isa::part_role_name(part.role);
    role.erase(std::remove(role.begin(), role.end(), ' '), role.end());
    out << "  pto.part[" << lower(role) << "] @"
        << (part.kernel >= 0 && part.kernel < static_cast<int>(kernels.size()) ? kernels[part.kernel].name : "?") << "(";
    for (size_t a = 0; a < part.args.size(); ++a) {
      const isa::PartArg& pa = part.args[a];
      out << (a ? ", " : "")
          << (pa.param >= 0 && pa.param < static_cast<int>(names.size()) ? names[pa.param] : scalar_text(pa.constant));
    }
    out << ")\n";
  }
  out << "  return\n}\n";
  return out.str();
}

}  // namespace pypto::codegen
