// Strided views of global tensors: element addresses, byte ranges, descriptions.
#include "pypto/isa/global_tensor.h"

namespace pypto::isa {

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

uint8_t* TensorView::element(const std::vector<int64_t>& index) const {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
  return static_cast<uint8_t*>(data) + offset * dtype_bytes(dtype);
}

std::pair<const uint8_t*, const uint8_t*> TensorView::byte_range() const {
  const uint8_t* base = static_cast<const uint8_t*>(data);
  if (numel() == 0) return {base, base};
  int64_t lo = 0, hi = 0;  // element offsets of the extreme elements
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t span = (shape[d] - 1) * strides[d];
    (span < 0 ? lo : hi) += span;
  }
  const int64_t bytes = dtype_bytes(dtype);
  return {base + lo * bytes, base + (hi + 1) * bytes};
}

std::string TensorView::describe() const {
  std::string s = (name.empty() ? std::string("tensor") : "'" + name + "'") + "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "] " + dtype_name(dtype);
}

}  // namespace pypto::isa
