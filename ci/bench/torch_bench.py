#!/usr/bin/env python3
"""The torch half of the GPU benchmark (ci/bench/run_gpu_bench.sh runs it beside
peerconf_gpu_bench and merges the rows). One process and one GPU a rank, started by torchrun or
by mpirun (the OMPI_* variables are mapped). Rank 0 prints the same tab-separated rows as the C++
binary: ROW <metric> <impl> <size> <microseconds> <note>.

  construct       torch SymmetricMemory: empty + rendezvous (+ free), slowest rank, median
  agree           gloo MIN all-reduce of one int32 (what the seed's tp_agree does), median
  allreduce-*     NCCL all_reduce, SymmetricMemory one_shot / two_shot, eager and graphed, at
                  the sizes of peerconf_gpu_bench's sweep (--sizes: 4 KiB..16 MiB by powers of 2);
                  each output checked once before it is timed (two_shot: in place, checked too)
"""
import argparse
import os
import statistics
import time

# NVLink multicast stays off on the lent machines (KINDS.md): set before torch loads NCCL.
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
if "RANK" not in os.environ and "OMPI_COMM_WORLD_RANK" in os.environ:
    os.environ["RANK"] = os.environ["OMPI_COMM_WORLD_RANK"]
    os.environ["WORLD_SIZE"] = os.environ["OMPI_COMM_WORLD_SIZE"]
    os.environ["LOCAL_RANK"] = os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "0")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

RANK = int(os.environ.get("RANK", "0"))


def row(metric, impl, size, us, note):
    if RANK == 0:
        print(f"ROW\t{metric}\t{impl}\t{size}\t{us:.3f}\t{note}", flush=True)


def size_name(nbytes):
    if nbytes >= 1 << 20 and nbytes % (1 << 20) == 0:
        return f"{nbytes >> 20}MiB"
    if nbytes >= 1024 and nbytes % 1024 == 0:
        return f"{nbytes >> 10}KiB"
    return f"{nbytes}B"


def max_over_ranks(value, gloo):
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=gloo)
    return float(t.item())


def time_eager(fn, gloo, iters=2000, warmup=50):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    dist.barrier(group=gloo)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    stop.synchronize()
    return max_over_ranks(start.elapsed_time(stop) * 1000.0 / iters, gloo)


def time_graph(fn, gloo, calls=100, replays=20):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(5):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    dist.barrier(group=gloo)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    stop.record()
    stop.synchronize()
    return max_over_ranks(start.elapsed_time(stop) * 1000.0 / (calls * replays), gloo)


def parse_sizes(text):
    sizes = [int(x) for x in text.split(",") if x]
    if not sizes or any(b <= 0 or b % 16 for b in sizes):
        raise argparse.ArgumentTypeError("sizes are positive multiples of 16 bytes")
    return sizes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=parse_sizes,
                        default=[4096 << i for i in range(13)],
                        help="all-reduce sizes in bytes, comma-separated (default 4096..16777216, "
                             "powers of 2: peerconf_gpu_bench's sweep)")
    args = parser.parse_args()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=device)
    world = dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    group_name = dist.group.WORLD.group_name
    row("meta", "torch", str(world), 0.0, f"torch {torch.__version__}")
    import torch.distributed._symmetric_memory as symm_mem

    backend = "default"
    try:
        backend = symm_mem.get_backend(device)
    except Exception:
        pass

    # 1. The handshake: SymmetricMemory allocation + rendezvous (+ free), fresh buffer each time.
    nbytes = 8 << 20
    total, rendezvous_only = [], []
    for i in range(33):
        dist.barrier(group=gloo)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        buf = symm_mem.empty(nbytes, dtype=torch.uint8, device=device)
        handle = symm_mem.rendezvous(buf, group_name)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        del handle, buf
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        a = max_over_ranks((t2 - t0) * 1e6, gloo)
        b = max_over_ranks((t1 - t0) * 1e6, gloo)
        if i >= 3:
            total.append(a)
            rendezvous_only.append(b)
    note = f"median of 30, slowest rank, backend {backend}"
    row("construct", "torch SymmetricMemory empty+rendezvous+free", size_name(nbytes),
        statistics.median(total), note)
    row("construct-only", "torch SymmetricMemory empty+rendezvous", size_name(nbytes),
        statistics.median(rendezvous_only), note)

    # 2. The agreement as the seed does it: a gloo MIN all-reduce of one int32.
    flag = torch.tensor([1], dtype=torch.int32)
    calls = []
    for i in range(2100):
        t0 = time.perf_counter()
        dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=gloo)
        ok = bool(flag.item())
        calls.append((time.perf_counter() - t0) * 1e6)
        assert ok
    row("agree", "gloo all_reduce MIN (torch.distributed)", "4B",
        max_over_ranks(statistics.median(calls[100:]), gloo),
        "median of 2000 calls, slowest rank's median")

    # 3. All-reduce: NCCL, SymmetricMemory one_shot and two_shot (float32 sum).
    for nbytes in args.sizes:
        count = nbytes // 4
        size = size_name(nbytes)
        x = torch.full((count,), float(RANK + 1), device=device)
        want = float(world * (world + 1) // 2)
        dist.all_reduce(x)
        check = "checked" if torch.all(x == want).item() else "CHECK FAILED"
        for mode, timer in (("eager", time_eager), ("graph", time_graph)):
            try:
                us = timer(lambda: dist.all_reduce(x), gloo)
                row(f"allreduce-{mode}", "NCCL all_reduce", size, us, f"float32 sum; {check}")
            except Exception as e:
                row(f"allreduce-{mode}", "NCCL all_reduce", size, -1.0, f"n/a: {e}")
        try:
            symm = symm_mem.empty(count, dtype=torch.float32, device=device)
            symm_mem.rendezvous(symm, group_name)
            symm.fill_(float(RANK + 1))
            torch.cuda.synchronize()
            dist.barrier(group=gloo)
            out = torch.ops.symm_mem.one_shot_all_reduce(symm, "sum", group_name)
            check = "checked" if torch.all(out == want).item() else "CHECK FAILED"
            torch.cuda.synchronize()
            dist.barrier(group=gloo)
            torch.ops.symm_mem.two_shot_all_reduce_(symm, "sum", group_name)
            check2 = ("in place, checked" if torch.all(symm == want).item()
                      else "in place, CHECK FAILED")
        except Exception as e:
            symm, check, check2 = None, f"n/a: {e}", ""
        for op in ("one_shot", "two_shot"):
            for mode, timer in (("eager", time_eager), ("graph", time_graph)):
                impl = f"torch SymmetricMemory {op}_all_reduce"
                if symm is None:
                    row(f"allreduce-{mode}", impl, size, -1.0, check)
                    continue
                if op == "one_shot":
                    fn = lambda: torch.ops.symm_mem.one_shot_all_reduce(symm, "sum", group_name)  # noqa: E731
                else:
                    fn = lambda: torch.ops.symm_mem.two_shot_all_reduce_(symm, "sum", group_name)  # noqa: E731
                try:
                    us = timer(fn, gloo)
                    row(f"allreduce-{mode}", impl, size, us,
                        f"float32 sum; {check if op == 'one_shot' else check2}")
                except Exception as e:
                    row(f"allreduce-{mode}", impl, size, -1.0, f"n/a: {type(e).__name__}: {e}"[:200])
        torch.cuda.synchronize()
        dist.barrier(group=gloo)

    dist.barrier(group=gloo)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
