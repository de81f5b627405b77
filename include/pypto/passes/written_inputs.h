// The parameters a function declares as inputs but stores to (OutlineIncore makes them
// written; the parser warns at the store).
#pragma once
#include <vector>

#include "pypto/ir/stmt.h"

namespace pypto::passes {

// The parameters of `f` declared as inputs (ParamDirection::In) that its body stores to, with
// the span of the first op call that writes each and whether the body also reads it
// (outline_incore makes them Out / InOut; the parser warns at `span`). (outline_incore.cpp)
struct WrittenInput {
  int param;
  Span span;
  bool read;
};
std::vector<WrittenInput> written_inputs(const ir::Function& f);

}  // namespace pypto::passes
