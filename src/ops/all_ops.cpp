// Registers every op family of the language; each family lives in its own file.
#include "op_rules.h"

namespace pypto::ops {
void register_all_ops(OpRegistry& registry) {
  ops::register_memory_ops(registry);
  ops::register_elementwise_ops(registry);
  ops::register_reduction_ops(registry);
  ops::register_broadcast_ops(registry);
  ops::register_matmul_ops(registry);
  ops::register_shape_ops(registry);
  ops::register_compare_ops(registry);
  ops::register_math_ops(registry);
  ops::register_generate_ops(registry);
  ops::register_index_ops(registry);
  ops::register_tensor_ops(registry);
  ops::register_view_ops(registry);
  ops::register_array_ops(registry);
  ops::register_tensor_compute_ops(registry);
  ops::register_cross_core_ops(registry);
  ops::register_system_ops(registry);
  ops::register_distributed_ops(registry);
}
}  // namespace pypto::ops
