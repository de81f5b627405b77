// One x86-64 level's build of the optimised library's data movement (data_movement.h), the
// table a kernel compiled for that level calls (pto_frame::support). CMakeLists.txt compiles
// this file once per level (-march=x86-64, x86-64-v3, x86-64-v4; once with the default
// target elsewhere) with PTO_SUPPORT_ENTRY naming the level's entry point, and with the
// namespaces of the headers renamed per level (pto_opt -> pto_opt_<level>, ...): the three
// builds' inline functions must stay three sets of functions, not one the linker picks.
#include "pypto/isa/optimized/data_movement.h"

extern "C" const pto_support* PTO_SUPPORT_ENTRY() {
  static const pto_support table{&pto_opt::copy_region, &pto_opt::tload, &pto_opt::tstore, PTO_OPT_STREAM_PATH};
  return &table;
}
