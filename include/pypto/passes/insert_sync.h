// InsertSync: the compiler step that makes a kernel's instruction stream race-free. After
// lowering (flags depend on pipes, known only per instruction), it finds every cross-pipe
// dependency on an on-chip buffer (read-after-write, write-after-read, write-after-write on
// overlapping byte ranges) and inserts set_flag / wait_flag pairs that order it.
#pragma once
#include "pypto/isa/program.h"

namespace pypto::passes {

// Inserts SET_FLAG / WAIT_FLAG instructions into `kernel.code` (jump targets are remapped).
// Returns the number of flag pairs inserted.
int insert_sync(isa::Kernel& kernel);

}  // namespace pypto::passes
