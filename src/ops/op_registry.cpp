// The registry table and the generic, checked construction of op calls.
#include "pypto/ops/op_registry.h"

#include "pypto/isa/instructions.h"

#include <algorithm>

#include "pypto/ir/printer.h"

namespace pypto::ops {

OpRegistry& OpRegistry::instance() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    register_all_ops(*r);
    return r;
  }();
  return *registry;
}

const OpDef& OpRegistry::add(OpDef def) {
  PYPTO_CHECK(find(def.name) == nullptr, "op '" + def.name + "' registered twice");
  // The vector unit reads Vec: every tile operand of an op lowered to a vector-pipe
  // instruction must be in Vec, unless its family says otherwise (ParamSpec::memory).
  const isa::InstrDef* instr = def.pto.empty() ? nullptr : isa::find_instr(def.pto);
  if (!def.view && instr && instr->pipe == isa::Pipe::V)
    for (ParamSpec& p : def.params)
      if (p.kind == ParamKind::kExpr && !p.memory && !p.any_memory) p.memory = MemorySpace::Vec;
  ops_.push_back(std::make_unique<OpDef>(std::move(def)));
  return *ops_.back();
}

const OpDef* OpRegistry::find(const std::string& name) const {
  for (auto& op : ops_)
    if (op->name == name) return op.get();
  return nullptr;
}

std::vector<const OpDef*> OpRegistry::all() const {
  std::vector<const OpDef*> out;
  for (auto& op : ops_) out.push_back(op.get());
  return out;
}

const OpDef* resolve_op(const std::string& dsl_name, const std::vector<TypePtr>& arg_types) {
  auto& reg = OpRegistry::instance();
  const OpDef* op = reg.find(dsl_name);
  if (!op) {
    for (auto* cand : reg.all())
      for (auto& a : cand->aliases)
        if (a == dsl_name) op = cand;
  }
  if (!op) {
    bool first_is_tensor = !arg_types.empty() && arg_types[0] && arg_types[0]->as<TensorType>();
    op = reg.find((first_is_tensor ? "tensor." : "tile.") + dsl_name);
    if (!op) op = reg.find((first_is_tensor ? "tile." : "tensor.") + dsl_name);  // pl.load(tensor, ...)
  }
  if (op && !op->scalar_variant.empty() && arg_types.size() > 1 && arg_types[1] && arg_types[1]->as<ScalarType>())
    op = reg.find(op->scalar_variant);
  return op;
}

std::string op_signature(const OpDef& op) {
  std::string s = "pl." + op.name + "(";
  for (size_t i = 0; i < op.params.size(); ++i) {
    if (i) s += ", ";
    s += op.params[i].name;
    if (op.params[i].optional || op.params[i].default_value) s += "=...";
  }
  return s + ")";
}

// PyPTO's narrow dtypes (FP8*, HF8, FP4, HF4, INT4, UINT4) and its MX-scale / scalar memory
// spaces are accepted in annotations; no instruction of this chip model computes on them, so
// every op call that would take or make one is refused here, in one place.
static void check_supported_types(const OpDef& op, const std::vector<ExprPtr>& args, const Attrs& attrs,
                                  const Span& span) {
  auto refuse_dtype = [&](DataType d, const std::string& what) {
    fail(ErrorKind::kType, span,
         "pl." + op.name + ": " + what + " has dtype " + dtype_name(d) + "; PyPTO's narrow dtypes (FP8E4M3FN, FP8E5M2, "
             "FP8E8M0, HF8, FP4, HF4, INT4, UINT4) are accepted in annotations, but no op of this chip model computes on, "
             "loads, stores or converts them",
         "keep the data in FP16, BF16 or FP32 (convert it on the host, e.g. with ml_dtypes) and pass that tensor");
  };
  // FP8E4M3FN / FP8E5M2 move and convert: pl.load, pl.store and pl.cast take them.
  const bool fp8_io = op.name == "tile.load" || op.name == "tile.store" || op.name == "tile.cast";
  auto refuse_fp8 = [&](DataType d, const std::string& what) {
    if (fp8_io || (d != DataType::FP8E4M3FN && d != DataType::FP8E5M2)) return;
    fail(ErrorKind::kType, span,
         "pl." + op.name + ": " + what + " has dtype " + dtype_name(d) + "; FP8 tiles are loaded, stored and converted "
             "(pl.load, pl.store, pl.cast) but no other op computes on them",
         "convert the tile first: pl.cast(t, pl.FP32) (or FP16/BF16), compute, and cast the result back");
  };
  auto refuse_memory = [&](MemorySpace m, const std::string& what) {
    fail(ErrorKind::kType, span,
         "pl." + op.name + ": " + what + " lives in pl.Mem." + memory_space_name(m) +
             ", which no op of this chip model uses (LeftScale/RightScale hold A5 MX-matmul scales, ScalarLocal a "
             "core's scalar memory)",
         "place the tile in Vec, Mat, Left, Right, Acc or Bias");
  };
  size_t k = 0;
  for (const ParamSpec& p : op.params) {
    if (p.kind == ParamKind::kAttr) {
      auto it = attrs.find(p.name);
      if (it != attrs.end())
        if (auto* d = std::get_if<DataType>(&it->second)) {
          if (dtype_storage_only(*d)) refuse_dtype(*d, "argument '" + p.name + "'");
          refuse_fp8(*d, "argument '" + p.name + "'");
        }
      if (it != attrs.end())
        if (auto* m = std::get_if<MemorySpace>(&it->second);
            m && (*m == MemorySpace::LeftScale || *m == MemorySpace::RightScale || *m == MemorySpace::ScalarLocal))
          refuse_memory(*m, "argument '" + p.name + "'");
      continue;
    }
    const ExprPtr& a = k < args.size() ? args[k] : nullptr;
    ++k;
    if (!a || !a->type) continue;
    const std::string what = "argument '" + p.name + "'";
    if (auto* t = a->type->as<TensorType>()) {
      if (dtype_storage_only(t->dtype)) refuse_dtype(t->dtype, what);
      refuse_fp8(t->dtype, what);
    }
    if (auto* t = a->type->as<ScalarType>()) {
      if (dtype_storage_only(t->dtype)) refuse_dtype(t->dtype, what);
      refuse_fp8(t->dtype, what);
    }
    if (auto* t = a->type->as<TileType>()) {
      if (dtype_storage_only(t->dtype)) refuse_dtype(t->dtype, what);
      refuse_fp8(t->dtype, what);
      if (t->memory == MemorySpace::LeftScale || t->memory == MemorySpace::RightScale ||
          t->memory == MemorySpace::ScalarLocal)
        refuse_memory(t->memory, what);
    }
  }
}

// difflib's similarity (Ratcliff/Obershelp): twice the matched characters over the total.
static size_t matched(const std::string& a, const std::string& b) {
  size_t best = 0, ai = 0, bi = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b.size(); ++j) {
      size_t k = 0;
      while (i + k < a.size() && j + k < b.size() && a[i + k] == b[j + k]) ++k;
      if (k > best) best = k, ai = i, bi = j;
    }
  if (!best) return 0;
  return best + matched(a.substr(0, ai), b.substr(0, bi)) + matched(a.substr(ai + best), b.substr(bi + best));
}

std::vector<size_t> bind_op_arguments(const OpDef& op, size_t positional, const std::vector<std::string>& keywords,
                                      const std::string& shown, const Span& span) {
  const std::string sig = "call it as " + op_signature(op);
  if (positional > op.params.size())
    fail(ErrorKind::kType, span,
         "pl." + shown + " takes at most " + std::to_string(op.params.size()) + " arguments, got " + std::to_string(positional),
         sig);
  std::vector<size_t> slot;
  std::vector<bool> given(op.params.size(), false);
  for (size_t i = 0; i < positional; ++i) slot.push_back(i), given[i] = true;
  for (auto& k : keywords) {
    size_t i = 0;
    while (i < op.params.size() && !op.params[i].accepts(k)) ++i;
    if (i == op.params.size()) {  // the closest spelling, as Python's difflib.get_close_matches(n=1)
      std::string near;
      double score = 0.6;
      for (auto& p : op.params) {
        std::vector<std::string> spellings = p.aliases;
        spellings.insert(spellings.begin(), p.name);
        for (auto& c : spellings) {
          double r = 2.0 * matched(k, c) / double(k.size() + c.size());
          if (r > score || (r == score && (near.empty() || c > near))) score = r, near = c;
        }
      }
      fail(ErrorKind::kType, span, "pl." + shown + " has no keyword argument '" + k + "'",
           (near.empty() ? "" : "did you mean '" + near + "='? ") + sig);
    }
    if (given[i]) fail(ErrorKind::kType, span, "pl." + shown + " got argument '" + k + "' twice", sig);
    given[i] = true;
    slot.push_back(i);
  }
  return slot;
}

ExprPtr make_op_call(const std::string& op_name, const std::vector<ExprPtr>& args,
                     const std::vector<std::pair<std::string, ExprPtr>>& kwargs, const Attrs& attr_kwargs,
                     const Span& span) {
  const OpDef* op = OpRegistry::instance().find(op_name);
  if (!op) fail(ErrorKind::kType, span, "unknown op 'pl." + op_name + "'", "see docs/ops.md for the ops of the language");

  std::vector<std::string> keywords;
  for (auto& kv : kwargs) keywords.push_back(kv.first);
  for (auto& kv : attr_kwargs) keywords.push_back(kv.first);
  const std::vector<size_t> slot = bind_op_arguments(*op, args.size(), keywords, op_name, span);

  std::vector<ExprPtr> call_args;
  Attrs attrs;
  std::vector<bool> given(op->params.size(), false);
  std::vector<ExprPtr> by_param(op->params.size());
  size_t n = 0;
  for (auto& a : args) by_param[slot[n++]] = a;
  for (auto& kv : kwargs) by_param[slot[n++]] = kv.second;
  for (auto& [name, value] : attr_kwargs) {
    size_t i = slot[n++];
    if (op->params[i].kind != ParamKind::kAttr)
      fail(ErrorKind::kType, span, "pl." + op_name + ": argument '" + name + "' must be a value, not a compile-time constant");
    attrs[op->params[i].name] = value;
  }
  for (size_t i : slot) given[i] = true;
  for (size_t i = 0; i < op->params.size(); ++i) {
    const ParamSpec& p = op->params[i];
    if (p.kind == ParamKind::kAttr) {
      if (by_param[i])
        fail(ErrorKind::kType, span, "pl." + op_name + ": argument '" + p.name + "' must be a compile-time constant",
             "pass a literal, a closure constant or a pl.* enum value");
      if (!given[i]) {
        if (!p.default_value)
          fail(ErrorKind::kType, span, "pl." + op_name + " is missing argument '" + p.name + "'", "call it as " + op_signature(*op));
        attrs[p.name] = *p.default_value;
      }
      continue;
    }
    if (!given[i] && !p.optional)
      fail(ErrorKind::kType, span, "pl." + op_name + " is missing argument '" + p.name + "'", "call it as " + op_signature(*op));
    if (by_param[i] && p.kind == ParamKind::kExprList && !by_param[i]->as<ListExpr>())
      fail(ErrorKind::kType, span, "pl." + op_name + ": argument '" + p.name + "' must be a list such as [0, 0]");
    call_args.push_back(by_param[i]);
  }
  check_supported_types(*op, call_args, attrs, span);
  return Call::make(op, std::move(call_args), std::move(attrs), span);
}

}  // namespace pypto::ops
