"""cases.py - GPU suite cases 3-5, 7-9, the PyTorch timing of case 6.

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


def _dump():
    import ctypes
    ctypes.CDLL(None).gpumemguard_dump()


def fill_device():
    """Case 7: no quota; tensors of 16 GiB until the device has no room.
    PyTorch catches the driver's first out of memory, frees its cache,
    retries, then raises torch.OutOfMemoryError."""
    import torch
    held = []
    try:
        while len(held) < 64:
            held.append(torch.empty(16 << 30, dtype=torch.uint8, device="cuda"))  # SITE: fill_device
        print("torch: the device never filled")
    except torch.OutOfMemoryError:
        print(f"torch: held {len(held)} x 16 GiB, then OutOfMemoryError")


def leak_tensor():
    import ctypes
    import torch
    t = torch.ones(5 << 20, dtype=torch.uint8, device="cuda")  # SITE: leak_tensor
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(t))  # a reference nobody drops, as a buggy extension leaves one


def torch_train(leak):
    """Case 8: a plain training loop, caching allocator on (or its
    cudaMallocAsync backend under --tensors). SNAPSHOT=PATH: at step 20,
    PyTorch's own snapshot and the guard's dump at the same moment."""
    import os
    import pickle
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                        nn.Linear(4096, 10)).cuda()
    opt = torch.optim.Adam(net.parameters())
    x = torch.randn(512, 1024, device="cuda")
    y = torch.randint(0, 10, (512,), device="cuda")
    for step in range(1, 31):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        if step == 20 and os.environ.get("SNAPSHOT"):
            torch.cuda.synchronize()
            snap = torch.cuda.memory._snapshot()
            _dump()
            with open(os.environ["SNAPSHOT"], "wb") as f:
                pickle.dump(snap, f)
    if leak:
        leak_tensor()
    torch.cuda.synchronize()
    print(f"torch: 30 steps, loss {loss.item():.3f}, torch {torch.__version__}, cuda {torch.version.cuda}")


def memviz_open(path):
    """Case 9: PyTorch's own memory_viz tooling reads the guard's file."""
    import pickle
    from torch.cuda import _memory_viz as mv
    with open(path, "rb") as f:
        data = pickle.load(f)
    done = []
    for name in ("segsum", "segment_plot", "trace_plot"):
        fn = getattr(mv, name, None)
        if fn is None:
            continue
        try:
            out = fn(data)
            done.append(f"{name} {len(out)} chars")
        except Exception as e:  # report, do not hide
            done.append(f"{name} FAILED {type(e).__name__}: {e}")
    print("memory_viz: " + "; ".join(done))


def torch_nccl():
    """Case 8: a one-rank NCCL communicator beside PyTorch's pool."""
    import os
    import torch
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_nccl_available():
        print("nccl: unavailable")
        return
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=0, world_size=1)
    t = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(t)
    torch.cuda.synchronize()
    _dump()
    print(f"nccl: all_reduce {float(t[0]):.0f}, nccl {torch.cuda.nccl.version()}")
    dist.destroy_process_group()


def jax_pool():
    """Case 8: JAX with its default preallocation (75 % of the device)."""
    import jax
    import jax.numpy as jnp
    x = jnp.ones((4096, 4096))
    y = (x @ x).block_until_ready()
    _dump()
    print(f"jax: pool {float(y[0, 0]):.0f}, jax {jax.__version__}")


def cupy_pool():
    """Case 8: CuPy's default memory pool keeps what its arrays gave back."""
    import cupy
    a = cupy.ones(64 << 20, dtype=cupy.uint8)
    b = cupy.ones(32 << 20, dtype=cupy.uint8)
    del a
    pool = cupy.get_default_memory_pool()
    _dump()
    print(f"cupy: pool used {pool.used_bytes()} total {pool.total_bytes()}, cupy {cupy.__version__} {int(b[0])}")


if __name__ == "__main__":
    case = sys.argv[1]
    arg = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 0
    {"torch_oom": lambda: torch_oom(arg), "torch_meminfo": torch_meminfo, "torch_leak": torch_leak,
     "jax_prealloc": jax_prealloc, "cupy_oom": lambda: cupy_oom(arg),
     "torch_step_time": torch_step_time, "torch_list_leak": torch_list_leak, "torch_steady": torch_steady,
     "torch_vmm": torch_vmm, "numba_oom": lambda: numba_oom(arg), "fill_device": fill_device,
     "torch_train": lambda: torch_train(False), "torch_train_leak": lambda: torch_train(True),
     "memviz_open": lambda: memviz_open(sys.argv[2]), "torch_nccl": torch_nccl, "jax_pool": jax_pool,
     "cupy_pool": cupy_pool}[case]()
    sys.stdout.flush()
