// TPUSH / TPOP / TFREE: the cross-core tile FIFOs of a cluster. The reference library
// reaches the FIFOs of the mixed task the calling thread runs a part of (cluster.h); the
// sim engine sets the part's timing hook around each of them, the native engine runs them
// here unchanged (they have no fast path).
#include "pypto/engines/cluster.h"
#include "pypto/engines/reference.h"

#include <variant>

namespace pypto::engines {

namespace {

ClusterPart& part_of(const TileCall& call) {
  ClusterPart* part = current_cluster_part();
  if (part == nullptr || part->fifos == nullptr)
    call.fail_runtime("exchanges tiles with another core of the cluster and runs only inside a mixed task (a Group kernel)",
                      "call the kernel from a @pl.function(type=pl.FunctionType.Group) function together with its peer");
  return *part;
}

}  // namespace

void add_cross_core_instrs(ReferenceTable& t) {
  t["TPUSH"] = [](const TileCall& c) {
    ClusterPart& p = part_of(c);
    p.fifos->push(p, c);
  };
  t["TPOP"] = [](const TileCall& c) {
    ClusterPart& p = part_of(c);
    p.fifos->pop(p, c);
  };
  t["TFREE"] = [](const TileCall& c) {
    ClusterPart& p = part_of(c);
    p.fifos->free(p, c);
  };
  // pl.system.sync_set / sync_wait: in a mixed task the event goes to the other side of the
  // cluster and a wait blocks until it is set (so a global-memory handoff between the parts
  // reads what the peer wrote); the sim engine's timing hook times both. In a task of one
  // core they move nothing (the sim cycle model pairs them).
  auto event_of = [](const TileCall& c) {
    auto it = c.instr.attrs.find("event");
    const int64_t* v = it == c.instr.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
    return v ? *v : int64_t{0};
  };
  t["SYNC_SET"] = [event_of](const TileCall& c) {
    ClusterPart* p = current_cluster_part();
    if (p == nullptr || p->fifos == nullptr) return;
    const double fired = p->timing ? p->timing(0) : 0;
    p->fifos->event_set(*p, event_of(c), fired);
  };
  t["SYNC_WAIT"] = [event_of](const TileCall& c) {
    ClusterPart* p = current_cluster_part();
    if (p == nullptr || p->fifos == nullptr) return;
    const double fired = p->fifos->event_wait(*p, c.instr, event_of(c));
    if (p->timing) p->timing(fired);
  };
}

}  // namespace pypto::engines
