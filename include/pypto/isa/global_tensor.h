// Global memory as the ISA addresses it: a strided view of a caller-owned tensor. TLOAD /
// TSTORE / MGATHER / MSCATTER read and write one (their reference functions are in
// src/isa/families/memory.cpp); the engines and the runtime pass them to kernels.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pypto/base/dtype.h"

namespace pypto::isa {

// Where an orchestration view (pl.slice, x[a:b, c:d], pl.transpose) lies in the tensor it
// was cut from, its root: dependency tracking compares views of one root in the root's
// index space, so windows of one buffer that do not overlap get no edge.
struct ViewOrigin {
  const void* base = nullptr;     // the root's data
  std::vector<int64_t> strides;   // the root's strides (its index space)
  std::vector<int64_t> offset;    // the view's first element, in root indices
  std::vector<int> dims;          // view dimension d is root dimension dims[d]
};

// A strided view of a tensor in global memory (not owned). Strides are in elements.
struct TensorView {
  void* data = nullptr;
  DataType dtype = DataType::FP32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::string name;
  std::shared_ptr<const ViewOrigin> origin;  // null: the tensor is its own root

  int64_t numel() const;
  // Address of the element at `index` (one entry per dimension); no bounds check.
  uint8_t* element(const std::vector<int64_t>& index) const;
  // First and one-past-last byte this view can touch (equal when it is empty).
  std::pair<const uint8_t*, const uint8_t*> byte_range() const;
  // "name[4, 8] FP32" for error messages.
  std::string describe() const;
};

}  // namespace pypto::isa
