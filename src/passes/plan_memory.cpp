// PlanMemory: places every tile of each InCore function at an address of its on-chip buffer
// and rejects functions that do not fit the chip. Tiles that must share storage (loop-carried
// values, branch results, views) form one group and get one address.
#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>
#include <unordered_map>

#include "pypto/ops/op_registry.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"
#include "tile_groups.h"

namespace pypto::passes {
namespace {
using namespace ir;

// Program-order positions of every tile Var's definition and uses. A Var used inside a loop
// but defined before it stays live until the loop ends (the next iteration reads it again).
class Liveness : public IRVisitor {
 public:
  struct Interval {
    int begin = -1, end = -1;
  };
  std::unordered_map<const Var*, Interval> live;

 protected:
  void visit(const StmtPtr& s) override {
    ++pos_;
    IRVisitor::visit(s);
  }
  using IRVisitor::visit;
  void visit_def(const VarPtr& v) override {
    if (!is_placed(v->type)) return;
    auto& iv = live[v.get()];
    if (iv.begin < 0) iv.begin = pos_;
    iv.end = std::max(iv.end, pos_);
  }
  void visit_var(const VarPtr& v) override {
    if (!is_placed(v->type)) return;
    auto& iv = live[v.get()];
    if (iv.begin < 0) iv.begin = pos_;
    iv.end = std::max(iv.end, pos_);
    for (auto& loop : loops_)
      if (iv.begin < loop.first) iv.end = std::max(iv.end, loop.second);
  }
  void visit_for(const ForStmt& s) override {
    loop(s.iter_args, [&](Liveness& v) { v.IRVisitor::visit_for(s); });
  }
  // A while loop's condition and body run again after the body: like a for loop's body,
  // every value they read from before the loop stays live until the loop ends.
  void visit_while(const WhileStmt& s) override {
    loop(s.iter_args, [&](Liveness& v) { v.IRVisitor::visit_while(s); });
  }

  template <typename Walk>
  void loop(const std::vector<VarPtr>& iter_args, Walk walk) {
    int start = pos_;
    // The loop's extent is known only after its body is walked: walk once to measure it.
    Liveness probe;
    probe.pos_ = pos_;
    walk(probe);
    int end = probe.pos_;
    loops_.push_back({start, end});
    walk(*this);
    loops_.pop_back();
    for (auto& v : iter_args)
      if (v->type->as<TileType>()) {
        auto& iv = live[v.get()];
        iv.begin = std::min(iv.begin < 0 ? start : iv.begin, start);
        iv.end = std::max(iv.end, end);
      }
  }

 private:
  int pos_ = 0;
  std::vector<std::pair<int, int>> loops_;
};

class AddressRewriter : public IRMutator {
 public:
  AddressRewriter(std::unordered_map<const Var*, int64_t> addr, int64_t align) : addr_(std::move(addr)), align_(align) {}

 protected:
  VarPtr mutate_def(const VarPtr& v) override {
    auto it = addr_.find(v.get());
    if (it == addr_.end()) return v;
    if (v->type->as<TileType>() && v->type->as<TileType>()->addr == it->second) return v;
    return Var::make(v->name, placed_at(v->type, it->second, align_), v->span);
  }

 private:
  std::unordered_map<const Var*, int64_t> addr_;
  int64_t align_;
};

// The tiles made as buffers (pl.tile.create / pl.full, and pl.create_tensor in kernel code),
// which are rejected on their own when one alone exceeds its memory.
class Buffers : public IRVisitor {
 public:
  std::vector<VarPtr> vars;

 protected:
  void visit_assign(const AssignStmt& s) override {
    if (auto* c = s.value->as<Call>(); c && (c->op->name == "tile.create" || c->op->name == "tile.full"))
      vars.push_back(s.var);
    IRVisitor::visit_assign(s);
  }
};

void check_buffers_fit(const FunctionPtr& f, const isa::ChipSpec& chip) {
  Buffers buffers;
  buffers.visit_function(*f);
  for (auto& v : buffers.vars) {
    auto* t = v->type->as<TileType>();
    int64_t bytes = placed_bytes(v->type, chip.alignment_bytes, v->span, v->name), cap = chip.capacity(t->memory);
    if (bytes <= cap) continue;
    std::ostringstream shape;
    for (size_t i = 0; i < t->shape.size(); ++i) {
      auto d = as_const_int(t->shape[i]);
      shape << (i ? ", " : "[") << (d ? std::to_string(*d) : std::string("?"));
    }
    shape << "]";
    fail(ErrorKind::kCapacity, v->span,
         "the on-chip buffer '" + v->name + "' (" + shape.str() + " " + dtype_name(t->dtype) + ", " + std::to_string(bytes) +
             " bytes) does not fit " + buffer_name(t->memory) + ": the " + chip.platform + " chip has " +
             std::to_string(cap) + " bytes per core (in kernel code pl.create_tensor, like pl.create_tile and pl.full, "
             "makes a tile in on-chip memory)",
         "make the buffer at most " + std::to_string(cap) + " bytes and loop over the data in chunks, or create the "
         "tensor in the orchestration (outside pl.at) and pass it to the kernel");
  }
}

FunctionPtr plan_function(const FunctionPtr& f, const isa::ChipSpec& chip) {
  check_buffers_fit(f, chip);
  GroupCollector collector;
  collector.align = chip.alignment_bytes;
  collector.visit_function(*f);
  TileGroups& groups = collector.groups;

  struct Group {
    MemorySpace memory;
    int64_t bytes = 0;
    std::vector<VarPtr> members;
  };
  std::map<int, Group> by_root;
  for (auto& v : groups.vars()) {
    const TileType* t = &first_tile(v->type);
    int root = groups.group_of(v.get());
    auto [it, fresh] = by_root.try_emplace(root, Group{t->memory, 0, {}});
    Group& g = it->second;
    if (!fresh && g.memory != t->memory)
      fail(ErrorKind::kType, v->span,
           "tile '" + v->name + "' must share storage with '" + g.members[0]->name + "' (a loop-carried value, branch result "
           "or view) but lives in " + memory_space_name(t->memory) + " instead of " + memory_space_name(g.memory),
           "keep loop-carried and yielded tiles in one memory space; use pl.move before the loop or after it");
    int64_t off = collector.offset.count(v.get()) ? collector.offset.at(v.get()) : 0;
    g.bytes = std::max(g.bytes, off + placed_bytes(v->type, chip.alignment_bytes, v->span, v->name));
    g.members.push_back(v);
  }

  // Groups whose lifetimes overlap get disjoint addresses; others may reuse bytes.
  Liveness liveness;
  liveness.visit_function(*f);
  struct Placed {
    int begin, end;
    int64_t addr, size;
  };
  std::map<MemorySpace, std::vector<Placed>> placed;
  std::map<MemorySpace, int64_t> used;
  std::unordered_map<const Var*, int64_t> addr;
  const int64_t align = chip.alignment_bytes;
  std::vector<std::pair<int, Group*>> order;
  std::map<int, std::pair<int, int>> lifetime;
  for (auto& [root, g] : by_root) {
    int begin = INT32_MAX, end = -1;
    for (auto& v : g.members) {
      auto it = liveness.live.find(v.get());
      if (it == liveness.live.end()) continue;
      begin = std::min(begin, it->second.begin);
      end = std::max(end, it->second.end);
    }
    if (end < 0) begin = end = 0;
    lifetime[root] = {begin, end};
    order.push_back({begin, &g});
  }
  std::sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [begin, g] : order) {
    int root = groups.group_of(g->members[0].get());
    auto [b, e] = lifetime[root];
    int64_t size = (g->bytes + align - 1) / align * align;
    // First fit: the lowest address clear of every placed group alive at the same time.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (auto& p : placed[g->memory])
      if (p.begin <= e && b <= p.end) busy.push_back({p.addr, p.addr + p.size});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (auto& [lo, hi] : busy) {
      if (offset + size <= lo) break;
      offset = std::max(offset, hi);
    }
    placed[g->memory].push_back({b, e, offset, size});
    used[g->memory] = std::max(used[g->memory], offset + size);
    for (auto& v : g->members)
      addr[v.get()] = offset + (collector.offset.count(v.get()) ? collector.offset.at(v.get()) : 0);
  }
  for (auto& [memory, bytes] : used) {
    int64_t cap = chip.capacity(memory);
    if (bytes <= cap) continue;
    std::vector<const Group*> tiles;
    for (auto& [root, g] : by_root)
      if (g.memory == memory) tiles.push_back(&g);
    std::sort(tiles.begin(), tiles.end(), [](auto* a, auto* b) { return a->bytes > b->bytes; });
    std::ostringstream msg;
    msg << "InCore function '" << f->name << "' needs " << bytes << " bytes of " << buffer_name(memory) << " but the "
        << chip.platform << " chip has " << cap << " bytes per core; largest tiles:";
    for (size_t i = 0; i < tiles.size() && i < 4; ++i) {
      const VarPtr& v = tiles[i]->members[0];
      msg << " '" << v->name << "' " << tiles[i]->bytes << " B";
      if (v->span.line > 0) msg << " (line " << v->span.line << ")";
      msg << (i + 1 < tiles.size() && i < 3 ? "," : "");
    }
    fail(ErrorKind::kCapacity, f->span, msg.str(),
         "use smaller tiles and loop over the data in chunks (e.g. 64 or 128 rows per iteration)");
  }
  AddressRewriter rewriter(std::move(addr), align);
  return rewriter.mutate_function(f);
}

}  // namespace

ProgramPtr plan_memory(const ProgramPtr& program, const PassContext& ctx) {
  return map_kernels(program, [&](const FunctionPtr& f) { return plan_function(f, ctx.chip); });
}

}  // namespace pypto::passes
