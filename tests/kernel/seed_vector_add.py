# The seed's vector_add sample, verbatim (tests/kernel/test_seed_samples.py runs it).
import pypto as pto
import numpy as np

# 定义 kernel（用 PTO 指令）
# 不需要写 C++——Python 函数直接对应 PTO kernel
@pto.kernel
def vector_add(a, b, o, n):
    # PTO 的并行模型：256 个 lane 同时执行
    # get_global_id() 获取当前 lane 的全局编号
    i = pto.get_global_id()

    # 边界检查（类似 CUDA 的 if (i < n）)
    if i < n:
        # PTO 的 LOAD 指令：从 HBM 加载数据到 L1
        a_val = pto.load(a + i)
        b_val = pto.load(b + i)

        # PTO 的 FMA 指令（fused multiply-add）
        # 一条指令完成 o[i] = a[i] + b[i]
        # 不需要单独 add 和 store
        pto.fma(o + i, a_val, b_val, 0.0)

# 准备数据
n = 1024
a = np.random.rand(n).astype(np.float32)
b = np.random.rand(n).astype(np.float32)
o = np.zeros(n, dtype=np.float32)

# 分配 NPU 内存
d_a = pto.alloc_tensor(n * 4)
d_b = pto.alloc_tensor(n * 4)
d_o = pto.alloc_tensor(n * 4)

pto.memcpy_h2d(d_a, a)
pto.memcpy_h2d(d_b, b)

# 启动 kernel（类似 CUDA 的 <<<grid, block>>>）
# 256 个 lane 一组，1024 个元素需要 4 组
pto.launch(vector_add, grid=(4, 1, 1), block=(256, 1, 1),
          args=(d_a, d_b, d_o, n))

pto.memcpy_d2h(o, d_o)

# 验证
assert np.allclose(o, a + b)
print(f"pypto: vector_add {n} elements passed")
