// The global-memory footprint of a kernel call: which index box of each tensor parameter a
// call reads and writes. The kernel's TLOAD/TSTORE offsets are analysed once as affine
// forms of its scalar parameters and loop variables; each call evaluates them on its args.
#pragma once
#include <cstdint>
#include <vector>

#include "pypto/isa/program.h"
#include "pypto/engines/tensor.h"

namespace pypto::runtime {

// c + sum(coef * symbol). Symbols 0..P-1 are the kernel's scalar parameters (in order),
// symbols P.. are its loops (see KernelFootprint::loops). `known` false: not affine.
struct AffineForm {
  bool known = true;
  int64_t c = 0;
  std::vector<std::pair<int, int64_t>> terms;  // (symbol, coefficient), sorted by symbol
};

// One TLOAD (read) or TSTORE (write) of a tensor parameter.
struct TensorAccess {
  int param = -1;
  bool write = false;
  bool whole = false;               // offsets not affine: the whole tensor
  std::vector<AffineForm> offsets;  // one per tensor dimension
  int64_t rows = 1, cols = 1;       // the tile's static extent (covers its valid region)
};

struct KernelFootprint {
  struct Loop {
    AffineForm start, stop;
    int64_t step = 1;
  };
  int num_scalar_params = 0;
  std::vector<int> scalar_param_index;  // k-th scalar parameter -> index in Kernel::params
  std::vector<Loop> loops;
  std::vector<TensorAccess> accesses;
};

// Analyses the scalar code of `kernel` (straight-line, loops, if/else).
KernelFootprint analyse_footprint(const isa::Kernel& kernel);
// The footprint of a Group kernel (a mixed task): the union of its parts' footprints
// (parts[i] is the footprint of group.parts[i]'s kernel), each part's scalar parameters
// replaced by the group parameters or constants they are given and its tensor accesses
// moved to the group's tensor parameters.
KernelFootprint compose_group_footprint(const isa::Kernel& group, const std::vector<const KernelFootprint*>& parts);

// An index box [lo, hi) of a tensor (one pair per dimension); empty when any hi <= lo.
constexpr int kMaxBoxDims = 6;
struct IndexBox {
  bool whole = false;  // the whole tensor (also used above kMaxBoxDims dimensions)
  int ndim = 0;
  int64_t lo[kMaxBoxDims] = {}, hi[kMaxBoxDims] = {};
  bool empty() const;
};

// The read box and write box of one tensor parameter for one call (hulls of its accesses).
struct ParamFootprint {
  bool reads = false, writes = false;
  IndexBox read, write;
};
// Footprints of every tensor parameter of a call (index = parameter index).
void evaluate_footprint(const KernelFootprint& fp, const std::vector<engines::HostArg>& args,
                        std::vector<ParamFootprint>& out);

}  // namespace pypto::runtime
