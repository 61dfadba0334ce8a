"""cases.py - GPU suite cases 3-5 and the PyTorch timing of case 6.

python3 cases.py CASE [ARG]; prints one result line the runner checks.
Run under LD_PRELOAD=libgpumemguard.so by tests/gpu/run.sh.
"""
import sys
import time


def torch_oom(limit_bytes):
    import torch
    try:
        torch.empty(limit_bytes // 4 + (64 << 20), dtype=torch.float32, device="cuda")
        print("torch: allocated past the limit")
    except torch.OutOfMemoryError:
        print("torch: OutOfMemoryError")


def torch_meminfo():
    import torch
    free, total = torch.cuda.mem_get_info()
    print(f"torch: free {free} total {total}")


def torch_leak():
    import torch
    keep = []
    keep.append(torch.empty(3 << 20, dtype=torch.uint8, device="cuda"))  # 3 MiB, live at exit
    del keep[:]
    leaked = torch.empty(5 << 20, dtype=torch.uint8, device="cuda")  # noqa: F841
    import ctypes
    ctypes.CDLL(None).gpumemguard_dump()  # report while the tensor is live
    print("torch: leak made")


def keep_activations(keep):
    import torch
    for _ in range(10):
        keep.append(torch.empty(1 << 20, dtype=torch.uint8, device="cuda"))  # 1 MiB each, never dropped


def torch_list_leak():
    keep = []
    keep_activations(keep)
    import ctypes
    ctypes.CDLL(None).gpumemguard_dump()  # report while the list holds them
    print("torch: list leak made")


def torch_steady():
    import ctypes
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()
    opt = torch.optim.Adam(net.parameters())
    x = torch.randn(128, 256, device="cuda")
    y = torch.randint(0, 10, (128,), device="cuda")
    dump = ctypes.CDLL(None).gpumemguard_dump
    for step in range(1, 31):
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        if step in (5, 30):
            torch.cuda.synchronize()
            dump()
    print("torch: 30 steps")


def torch_vmm():
    import ctypes
    import torch
    t = torch.empty(100 << 20, dtype=torch.uint8, device="cuda")
    ctypes.CDLL(None).gpumemguard_dump()
    print(f"torch: vmm {t.numel()}")


def numba_oom(limit_bytes):
    import numpy as np
    from numba import cuda
    kept = cuda.device_array(3 << 20, dtype=np.uint8)  # noqa: F841 (live at the dump below)
    try:
        cuda.device_array(limit_bytes + (64 << 20), dtype=np.uint8)
        print("numba: allocated past the limit")
    except Exception as e:  # numba's CudaAPIError or cuda-bindings' error, by configuration
        print(f"numba: refused {type(e).__name__}: {e}")
    free, total = cuda.current_context().get_memory_info()
    print(f"numba: free {free} total {total}")
    import ctypes
    ctypes.CDLL(None).gpumemguard_dump()  # report while the array is live


def jax_prealloc():
    import jax
    import jax.numpy as jnp
    x = jnp.ones((1024, 1024))
    y = (x @ x).block_until_ready()
    stats = jax.devices()[0].memory_stats() or {}
    print(f"jax: ok sum {float(y.sum()):.0f} bytes_limit {stats.get('bytes_limit', 0)}")


def cupy_oom(limit_bytes):
    import cupy
    try:
        cupy.empty(limit_bytes + (64 << 20), dtype=cupy.uint8)
        print("cupy: allocated past the limit")
    except cupy.cuda.memory.OutOfMemoryError:
        print("cupy: OutOfMemoryError")
    free, total = cupy.cuda.runtime.memGetInfo()
    print(f"cupy: free {free} total {total}")


def torch_step_time():
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(64, 3, 64, 64, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    for _ in range(10):
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(100):
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    torch.cuda.synchronize()
    print(f"torch: step {(time.perf_counter() - t0) / 100 * 1e3:.3f} ms")


if __name__ == "__main__":
    case = sys.argv[1]
    arg = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    {"torch_oom": lambda: torch_oom(arg), "torch_meminfo": torch_meminfo, "torch_leak": torch_leak,
     "jax_prealloc": jax_prealloc, "cupy_oom": lambda: cupy_oom(arg),
     "torch_step_time": torch_step_time, "torch_list_leak": torch_list_leak, "torch_steady": torch_steady,
     "torch_vmm": torch_vmm, "numba_oom": lambda: numba_oom(arg)}[case]()
    sys.stdout.flush()
