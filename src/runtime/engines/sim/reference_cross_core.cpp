// TPUSH / TPOP / TFREE: the cross-core tile FIFOs of a cluster. The reference library
// reaches the FIFOs of the mixed task the calling thread runs a part of (cluster.h); the
// sim engine sets the part's timing hook around each of them, the native engine runs them
// here unchanged (they have no fast path).
#include "pypto/runtime/cluster.h"
#include "pypto/runtime/reference.h"

namespace pypto::runtime {

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
}

}  // namespace pypto::runtime
