// pl.system: barriers, events, fences and cache control of one core (timing and ordering
// only: they change no value), and pl.prefetch: value-free L2 prefetch hints.
//   pl.system.bar_v() / bar_m() / bar_all()      PIPE_BARRIER on the V pipe, the M pipe, all pipes
//   pl.system.sync_src / sync_dst(set_pipe=, wait_pipe=, event_id=)   SET_FLAG / WAIT_FLAG by hand
//   pl.system.sync_set / sync_wait(event_id, pipe=)   cross-core (Cube <-> Vector) events
//   pl.system.set_ffts(ws), fence(), cacheinvalid(...), syncall(...)
//   pl.system.task_invalid()                      the task id of no task (orchestration)
//   pl.prefetch.make_context() / async_prefetch(src, ctx) / session(ctx) / wait(evt, session)
// The sim cycle model honours the pipe barriers and hand-written flags; the native engine runs
// kernels in program order, so it needs none of them (docs/language.md, "PyPTO compatibility").
#include "../op_rules.h"
#include "pypto/ops/kernel_builder.h"
#include "pypto/isa/instructions.h"

namespace pypto::ops {

using isa::Instr;

namespace {

// The pipes PyPTO's pl.PipeType names (strings here: the parser passes pl.PipeType.V as "V").
const char* const kPipes[] = {"MTE1", "MTE2", "MTE3", "M", "V", "S", "FIX", "ALL"};

// PyPTO's keyword-only arguments without a default have a sentinel default here ("" or -1),
// so that the printer writes them as keywords; leaving one out is still an error.
void require_given(const CallSite& s, const std::string& name) {
  const AttrValue& v = s.attr(name);
  const auto* str = std::get_if<std::string>(&v);
  const auto* i = std::get_if<int64_t>(&v);
  if ((str && str->empty()) || (i && *i == -1))
    op_fail(s, ErrorKind::kType, "argument '" + name + "' is missing", "pass " + name + "=... (a keyword argument)");
}

std::string pipe_attr(const CallSite& s, const std::string& name, bool allow_all) {
  require_given(s, name);
  std::string p = string_attr(s, name);
  if (p.rfind("PIPE_", 0) == 0) p = p.substr(5);
  for (const char* k : kPipes)
    if (p == k && (allow_all || p != "ALL")) return p;
  op_fail(s, ErrorKind::kValue, "'" + name + "' = '" + string_attr(s, name) + "' names no pipe",
          std::string("pass a pl.PipeType: MTE1, MTE2, MTE3, M, V, S, FIX") + (allow_all ? " or ALL" : ""));
}

void require_core(const Call& c, const KernelBuilder& kb) {
  if (!kb.is_host()) return;
  fail(ErrorKind::kType, c.span,
       "pl." + c.op->name + " orders the pipes of one core, but it is called in the orchestration",
       "call it inside a kernel: a `with pl.at(level=pl.Level.CORE_GROUP):` block or an InCore/AIC/AIV function");
}

void emit_sync(const Call& c, KernelBuilder& kb, const std::string& mnemonic, Attrs attrs) {
  require_core(c, kb);
  Instr in;
  in.kind = isa::InstrKind::kTile;
  in.mnemonic = mnemonic;
  for (auto& [k, v] : attrs) in.attrs[k] = v;
  kb.emit(in);
}

// A scalar result known at compile time (prefetch handles, task_invalid).
void emit_imm(const Call& c, const VarPtr& dst, KernelBuilder& kb, int64_t value) {
  Instr in;
  in.kind = isa::InstrKind::kScalarMov;
  in.a = isa::Scalar::imm(value);
  in.dst_reg = dst ? kb.define_scalar(dst) : kb.new_reg(false);
  kb.emit(in);
}

TypePtr infer_none(const CallSite&) { return NoneType::make(); }

TypePtr infer_flag(const CallSite& s) {
  const std::string set = pipe_attr(s, "set_pipe", false), wait = pipe_attr(s, "wait_pipe", false);
  if (set == wait)
    op_fail(s, ErrorKind::kValue, "set_pipe and wait_pipe are both " + set + "; a flag orders two different pipes",
            "one pipe is already in order; use pl.system.bar_v()/bar_m() for a barrier");
  require_given(s, "event_id");
  const int64_t ev = int_attr(s, "event_id");
  if (ev < 0 || ev > 7)
    op_fail(s, ErrorKind::kValue, "event_id = " + std::to_string(ev) + " is outside 0..7",
            "a pipe pair has 8 event flags: pass event_id 0..7");
  return NoneType::make();
}

void lower_flag(const Call& c, const VarPtr&, KernelBuilder& kb) {
  std::string set = std::get<std::string>(c.attrs.at("set_pipe")), wait = std::get<std::string>(c.attrs.at("wait_pipe"));
  if (set.rfind("PIPE_", 0) == 0) set = set.substr(5);
  if (wait.rfind("PIPE_", 0) == 0) wait = wait.substr(5);
  emit_sync(c, kb, c.op->name == "system.sync_src" ? "SET_FLAG" : "WAIT_FLAG",
            {{"src", set}, {"dst", wait}, {"event", c.attrs.at("event_id")}});
}

void check_core_type(const CallSite& s, bool allow_none) {
  const std::string ct = string_attr(s, "core_type");
  if ((ct.empty() && allow_none) || ct == "aic" || ct == "aiv") return;
  op_fail(s, ErrorKind::kValue, "core_type = '" + ct + "' names no core type", "pass core_type=\"aic\" or \"aiv\"");
}

// Cross-core event ids: 0..13 or a run-time INDEX scalar (14 and 15 are reserved).
void check_event(const CallSite& s) {
  const ExprPtr e = s.arg("event_id");
  if (!e || !e->type || !e->type->as<ScalarType>() || !dtype_is_int(e->type->as<ScalarType>()->dtype))
    op_fail(s, ErrorKind::kType, "event_id must be an integer (0..13) or an INDEX scalar", "pass event_id=0");
  if (auto v = as_const_int(e); v && (*v < 0 || *v > 13))
    op_fail(s, ErrorKind::kValue, "event_id = " + std::to_string(*v) + " is outside 0..13 (14 and 15 are reserved)",
            "pass an event id between 0 and 13");
}

TypePtr infer_sync_set(const CallSite& s) {
  check_event(s);
  pipe_attr(s, "pipe", false);
  check_core_type(s, true);
  return NoneType::make();
}

Attrs event_attrs(const Call& c) {
  Attrs a{{"pipe", c.attrs.at("pipe")}, {"core_type", c.attrs.at("core_type")}};
  if (auto v = as_const_int(c.args[0])) a["event"] = *v;
  return a;
}

TypePtr infer_syncall(const CallSite& s) {
  const std::string ct = string_attr(s, "core_type"), mode = string_attr(s, "mode");
  if (ct != "mix" && ct != "aiv_only" && ct != "aic_only")
    op_fail(s, ErrorKind::kValue, "core_type = '" + ct + "' names no participant set",
            "pass core_type=\"mix\" (every AIC and AIV), \"aiv_only\" or \"aic_only\"");
  const int64_t used = int_attr(s, "used_cores");
  const ExprPtr ws = s.arg("gm_workspace");
  if (mode == "hard") {
    if (ws || used >= 0)
      fail(ErrorKind::kValue, s.span,
           std::string("pl.system.syncall: ") + (ws ? "gm_workspace" : "used_cores") +
               " is an argument of the soft barrier, but mode is \"hard\" (an FFTS barrier takes no operands)",
           "drop gm_workspace= and used_cores=, or pass mode=\"soft\"");
  } else if (mode == "soft") {
    if (!ws)
      op_fail(s, ErrorKind::kValue, "a soft barrier polls a counter in global memory, but gm_workspace is missing",
              "pass gm_workspace=ws: a zeroed INT32 tensor of at least 16 elements used by nothing else");
    const TensorType& t = tensor_arg(s, "gm_workspace");
    int64_t n = 1;
    bool known = true;
    for (auto& d : t.shape) {
      if (auto v = as_const_int(d)) n *= *v;
      else known = false;
    }
    if (t.dtype != DataType::INT32 || (known && n < 16))
      op_fail(s, ErrorKind::kValue,
              "gm_workspace is a " + type_str(s.arg("gm_workspace")->type) +
                  "; the soft barrier needs an INT32 tensor of at least 16 elements",
              "pass a zeroed pl.Tensor[[16], pl.INT32] (or larger) used by nothing else");
    if (used < 0)
      op_fail(s, ErrorKind::kValue, "a soft barrier needs used_cores (how many cores arrive)",
              "pass used_cores=N: the AIC + AIV cores of the launch for \"mix\", else the cores of that type");
  } else {
    op_fail(s, ErrorKind::kValue, "mode = '" + mode + "' names no barrier", "pass mode=\"hard\" or mode=\"soft\"");
  }
  return NoneType::make();
}

TypePtr infer_cacheinvalid(const CallSite& s) {
  if (s.arg("tensor")) tensor_arg(s, "tensor");
  return NoneType::make();
}

TypePtr infer_set_ffts(const CallSite& s) {
  tensor_arg(s, "workspace");
  return NoneType::make();
}

TypePtr infer_task_invalid(const CallSite&) { return ScalarType::make(DataType::TASK_ID); }

TypePtr infer_handle(const CallSite&) { return ScalarType::make(DataType::INDEX); }

TypePtr infer_async_prefetch(const CallSite& s) {
  const TensorType& t = tensor_arg(s, "src");
  for (size_t i = 0; i + 1 < t.shape.size(); ++i) {
    auto v = as_const_int(t.shape[i]);
    if (!v || *v != 1)
      op_fail(s, ErrorKind::kValue,
              "src is a " + type_str(s.arg("src")->type) + "; a prefetch source has every dimension 1 but the last",
              "prefetch a [1, ..., 1, N] tensor (reshape or slice it to one row)");
  }
  scalar_arg(s, "ctx");
  return ScalarType::make(DataType::INDEX);
}

TypePtr infer_wait(const CallSite& s) {
  scalar_arg(s, "event");
  scalar_arg(s, "session_handle");
  return ScalarType::make(DataType::BOOL);
}

}  // namespace

void register_system_ops(OpRegistry& r) {
  for (const char* name : {"system.bar_v", "system.bar_m", "system.bar_all"}) {
    const std::string n = name;
    const std::string pipe = n == "system.bar_v" ? "V" : n == "system.bar_m" ? "M" : "ALL";
    r.add({.name = n,
           .params = {},
           .infer_type = infer_none,
           .pto = "PIPE_BARRIER",
           .lower = [pipe](const Call& c, const VarPtr&, KernelBuilder& kb) {
             emit_sync(c, kb, "PIPE_BARRIER", {{"pipe", pipe}});
           },
           .doc = pipe == "ALL" ? "Barrier of every pipe of this core: later instructions wait for all earlier ones."
                                : "Barrier of the " + pipe + " pipe of this core (its instructions run in order).",
           .torch = "None",
           .effects = true});
  }
  for (const char* name : {"system.sync_src", "system.sync_dst"}) {
    const std::string n = name;
    r.add({.name = n,
           .params = {attr_param("set_pipe", std::string()), attr_param("wait_pipe", std::string()),
                      attr_param("event_id", int64_t{-1})},
           .infer_type = infer_flag,
           .pto = n == "system.sync_src" ? "SET_FLAG" : "WAIT_FLAG",
           .lower = lower_flag,
           .doc = n == "system.sync_src"
                      ? "Sets event flag `event_id` from pipe `set_pipe` to pipe `wait_pipe` (a hand-written set_flag)."
                      : "Pipe `wait_pipe` waits for event flag `event_id` set by pipe `set_pipe` (a hand-written "
                        "wait_flag).",
           .torch = "None",
           .effects = true});
  }
  r.add({.name = "system.sync_set",
         .params = {expr_param("event_id"), attr_param("pipe", std::string()), quiet(attr_param("ffts_mode", std::string())),
                    quiet(attr_param("core_type", std::string()))},
         .infer_type = infer_sync_set,
         .pto = "SYNC_SET",
         .lower = [](const Call& c, const VarPtr&, KernelBuilder& kb) {
           Attrs a = event_attrs(c);
           a["ffts_mode"] = c.attrs.at("ffts_mode");
           emit_sync(c, kb, "SYNC_SET", a);
         },
         .doc = "Sets cross-core (Cube <-> Vector) event `event_id` (0..13 or an INDEX) from `pipe`; an ordering "
                "hint here (no effect on values).",
         .torch = "None",
         .effects = true});
  r.add({.name = "system.sync_wait",
         .params = {expr_param("event_id"), attr_param("pipe", std::string()), quiet(attr_param("core_type", std::string()))},
         .infer_type = infer_sync_set,
         .pto = "SYNC_WAIT",
         .lower = [](const Call& c, const VarPtr&, KernelBuilder& kb) { emit_sync(c, kb, "SYNC_WAIT", event_attrs(c)); },
         .doc = "`pipe` waits for cross-core event `event_id`; an ordering hint here (no effect on values).",
         .torch = "None",
         .effects = true});
  r.add({.name = "system.set_ffts",
         .params = {expr_param("workspace")},
         .infer_type = infer_set_ffts,
         .pto = "SET_FFTS",
         .lower = [](const Call& c, const VarPtr&, KernelBuilder& kb) { emit_sync(c, kb, "SET_FFTS", {}); },
         .doc = "FFTS setup with a workspace tensor (A3); nothing to set up on the simulated chip.",
         .torch = "None",
         .effects = true});
  r.add({.name = "system.fence",
         .params = {},
         .infer_type = infer_none,
         .pto = "FENCE",
         .lower = [](const Call& c, const VarPtr&, KernelBuilder& kb) { emit_sync(c, kb, "FENCE", {}); },
         .doc = "Global-memory fence: this core's earlier GM writes are visible before its later ones (always true "
                "of the simulated memory).",
         .torch = "None",
         .effects = true});
  r.add({.name = "system.cacheinvalid",
         .params = {expr_param("tensor", true), list_param("shapes", true), list_param("offsets", true)},
         .infer_type = infer_cacheinvalid,
         .pto = "CACHEINVALID",
         .lower = [](const Call& c, const VarPtr&, KernelBuilder& kb) { emit_sync(c, kb, "CACHEINVALID", {}); },
         .doc = "Invalidates the data cache of all of global memory (or of the line of tensor[offsets]); the "
                "simulated memory has no stale lines.",
         .torch = "None",
         .effects = true});
  r.add({.name = "system.syncall",
         .params = {attr_param("core_type", std::string("mix")), attr_param("mode", std::string("hard")),
                    expr_param("gm_workspace", true), quiet(attr_param("used_cores", int64_t{-1}))},
         .infer_type = infer_syncall,
         .pto = "SYNCALL",
         .lower = [](const Call& c, const VarPtr&, KernelBuilder& kb) {
           emit_sync(c, kb, "SYNCALL", {{"mode", c.attrs.at("mode")}, {"core_type", c.attrs.at("core_type")}});
         },
         .doc = "Barrier of every core of the launch (`mode` \"hard\": FFTS; \"soft\": a GM counter in `gm_workspace` "
                "over `used_cores` cores); arrival only.",
         .torch = "None",
         .effects = true});
  r.add({.name = "system.task_invalid",
         .params = {},
         .infer_type = infer_task_invalid,
         .pto = "",
         .lower = [](const Call& c, const VarPtr& dst, KernelBuilder& kb) { emit_imm(c, dst, kb, 0); },
         .doc = "The task id of no task (what a fresh pl.array of TASK_ID holds): a dependency on it waits for "
                "nothing.",
         .torch = "0"});
  for (const char* name : {"system.available_aiv_count", "system.available_cluster_count"}) {
    const std::string n = name;
    r.add({.name = n,
           .params = {},
           .infer_type = infer_handle,
           .pto = "",
           .lower = [](const Call& c, const VarPtr&, KernelBuilder&) {
             fail(ErrorKind::kInternal, c.span, "pl." + c.op->name + " reached codegen unfolded", "report this bug");
           },
           .doc = n == "system.available_aiv_count"
                      ? "The number of vector cores (AIV) of the chip compiled for (a2a3sim 48, a5sim 72); a constant."
                      : "The number of clusters (1 AIC + 2 AIV) of the chip compiled for (a2a3sim 24, a5sim 36); a "
                        "constant.",
           .torch = n == "system.available_aiv_count" ? "48" : "24"});
  }
  r.add({.name = "prefetch.make_context",
         .params = {},
         .infer_type = infer_handle,
         .pto = "",
         .lower = [](const Call& c, const VarPtr& dst, KernelBuilder& kb) { emit_imm(c, dst, kb, 0); },
         .doc = "A prefetch context (an INDEX handle here): L2 prefetches are hints the simulated chip does not need.",
         .torch = "0",
         .effects = true});
  r.add({.name = "prefetch.async_prefetch",
         .params = {expr_param("src"), expr_param("ctx")},
         .infer_type = infer_async_prefetch,
         .pto = "",
         .lower = [](const Call& c, const VarPtr& dst, KernelBuilder& kb) { emit_imm(c, dst, kb, 0); },
         .doc = "Starts an L2 prefetch of `src` (every dimension 1 but the last) and returns its event; changes no "
                "value.",
         .torch = "0",
         .effects = true});
  r.add({.name = "prefetch.session",
         .params = {expr_param("ctx")},
         .infer_type = infer_handle,
         .pto = "",
         .lower = [](const Call& c, const VarPtr& dst, KernelBuilder& kb) { emit_imm(c, dst, kb, 0); },
         .doc = "A prefetch session of `ctx` (an INDEX handle here).",
         .torch = "0",
         .effects = true});
  r.add({.name = "prefetch.wait",
         .params = {expr_param("event"), expr_param("session_handle")},
         .infer_type = infer_wait,
         .pto = "",
         .lower = [](const Call& c, const VarPtr& dst, KernelBuilder& kb) { emit_imm(c, dst, kb, 1); },
         .doc = "Waits for a prefetch event; True once it completed (always, here: the prefetch moves no data).",
         .torch = "True",
         .effects = true});
}

}  // namespace pypto::ops
