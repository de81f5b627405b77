// The ops reference (docs/ops.md) rendered from the registry, so that the documentation
// of every op's signature is the definition itself.
#include <variant>

#include "op_rules.h"

namespace pypto::ops {

namespace {

std::string default_text(const AttrValue& v) {
  struct Visitor {
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return std::to_string(d); }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(const std::string& s) const { return s.empty() ? "None" : "\"" + s + "\""; }
    std::string operator()(DataType t) const { return std::string("pl.") + dtype_name(t); }
    std::string operator()(MemorySpace m) const { return std::string("pl.MemorySpace.") + memory_space_name(m); }
    std::string operator()(PadValue p) const { return std::string("pl.PadValue.") + pad_value_name(p); }
    std::string operator()(const std::vector<int64_t>& v) const { return ops::shape_str(v); }
  };
  return std::visit(Visitor{}, v);
}

std::string signature(const OpDef& op) {
  std::string s = "pl." + op.name + "(";
  for (size_t i = 0; i < op.params.size(); ++i) {
    const ParamSpec& p = op.params[i];
    s += (i ? ", " : "") + p.name;
    if (p.default_value) s += "=" + default_text(*p.default_value);
    else if (p.optional) s += "=None";
  }
  return s + ")";
}

}  // namespace

std::string ops_reference_markdown() {
  std::string out =
      "# Ops reference\n\nGenerated from the op registry (src/ops/families/). `pl.<name>` resolves to the tile op, or to the "
      "tensor op when the first argument is a tensor; a scalar second argument selects the scalar form.\n";
  const std::pair<const char*, const char*> families[] = {
      {"tile.", "Tile ops"}, {"tensor.", "Tensor ops"}, {"array.", "Orchestration arrays"}, {"task.", "Task ids"},
      {"system.", "System ops (pl.system)"}, {"prefetch.", "Prefetch hints (pl.prefetch)"},
      {"dist.", "Distributed kernel ops (pld; docs/distributed.md)"}};
  for (const auto& [family, title] : families) {
    out += std::string("\n## ") + title + "\n\n| Signature | PTO | Also | Doc |\n|---|---|---|---|\n";
    for (const OpDef* op : OpRegistry::instance().all()) {
      if (op->name.rfind(family, 0) != 0) continue;
      std::string also;
      for (auto& a : op->aliases) also += (also.empty() ? "" : ", ") + ("`pl." + a + "`");
      if (!op->scalar_variant.empty())
        also += (also.empty() ? "" : ", ") + ("scalar form `pl." + op->scalar_variant + "`");
      out += "| `" + signature(*op) + "` | " + (op->pto.empty() ? "-" : op->pto) + " | " + also + " | " + op->doc + " |\n";
    }
  }
  return out;
}

}  // namespace pypto::ops
