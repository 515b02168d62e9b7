#!/usr/bin/python3
"""The migration guides' ImageNet table on this machine: samples/s of torchvision's ResNet
(--arch, default resnet50) training on mock ImageNet images (--image-size, default 224; SGD
momentum 0.9, weight decay 1e-4; --batch-size images a step over all ranks), native PyTorch
(eager, DistributedDataParallel over gloo for 2 processes, bf16 through torch.autocast) against
lazytrain's examples/imagenet_resnet50 eager and with --compiler-opt, f32 and --amp bf16, on
1 process x all cores and on 2 processes x 1 core, all in one run. Each step's FLOPs (3x the
forward's multiply-adds x 2, torchvision's counts at 224 scaled by the image area) over its
time is printed beside the machine's own GEMM rate at 1024^3 in f32 and bf16, measured in the
same run (build/bench/lt_bench_gemm_bf16 on 1 thread, x the cores of the configuration).

PyTorch runs in its fastest configuration (torch_peer.py: the OpenMP OpenBLAS, its AVX-512
kernels, a malloc that keeps memory), in both memory formats, channels-first and
channels_last; the faster is its figure. lazytrain's mock data is drawn on the host during the
step (--num-workers 0: on 2 cores a loader thread would take a core from the step); PyTorch
trains on one fixed batch.

  /usr/bin/python3 bench/imagenet_vs_torch.py [--build build] [--arch resnet50]
      [--image-size 224] [--batch-size 16] [--steps 8] [--ranks 1,2] [--precisions f32,bf16]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peer  # noqa: E402

# torchvision's multiply-adds of one forward pass at 224x224 (its model documentation).
GMACS_224 = {"resnet18": 1.81, "resnet34": 3.66, "resnet50": 4.09, "resnet101": 7.80}


def step_gflop(arch, size, batch):
    return 3 * 2 * GMACS_224[arch] * (size / 224) ** 2 * batch


def torch_worker(rank, world, args, bf16, channels_last, port, out):
    import torch
    import torch.distributed as dist
    import torchvision
    threads = os.cpu_count() if world == 1 else 1
    if world > 1:
        os.sched_setaffinity(0, {rank})
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = getattr(torchvision.models, args.arch)()
    local = args.batch_size // world
    x = torch.randn(local, 3, args.image_size, args.image_size)
    y = torch.randint(0, 1000, (local,))
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    if world > 1:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=world)
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    ms = statistics.median(times) * 1e3
    if world > 1:
        t = torch.tensor([ms])
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        ms = t.item()
    if rank == 0:
        out.put((ms, torch_peer.mapped_blas()))
        out.close()
        out.join_thread()
    # No teardown: PyTorch 1.13's DistributedDataParallel deadlocked destroying its process
    # group here (its gloo thread waits for the GIL the destructor holds).
    os._exit(0)


def torch_ms(args, world, bf16, channels_last, port):
    ms, blas = torch_peer.run_processes(torch_worker, world, (args, bf16, channels_last, port),
                                        f"imagenet_vs_torch: the {world}-process PyTorch run")
    if not any("openblas-openmp" in b for b in blas):
        sys.exit(f"imagenet_vs_torch: PyTorch did not map the OpenMP OpenBLAS ({blas})")
    return ms


def lazytrain_ms(args, world, bf16, lazy):
    steps = args.steps + 1
    cmd = [os.path.join(args.build, "examples", "imagenet_resnet50"), "--arch", args.arch,
           "--image-size", str(args.image_size), "--batch-size", str(args.batch_size),
           "--max-steps", str(steps), "--train-limit", str(steps * args.batch_size),
           "--test-limit", str(args.batch_size // world), "--log-interval", str(steps),
           "--warmup-steps", "0", "--num-workers", "0", "--quiet"]
    if lazy:
        cmd.append("--compiler-opt")
    if bf16:
        cmd += ["--amp", "bf16"]
    if world > 1:
        cmd = [os.path.join(args.build, "tools", "lt-launch"), "-n", str(world), "-t", "1",
               "--"] + cmd
    else:
        cmd += ["--threads", str(os.cpu_count())]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"imagenet_vs_torch: {' '.join(cmd)} failed:\n{out.stdout}{out.stderr}")
    # The median over all steps: the first (a lazy run's compile) is one of steps + 1.
    m = re.search(r"median ([0-9.]+) ms/step", out.stdout)
    return float(m.group(1))


def gemm_gflops(build):
    """1-thread GFLOP/s at 1024^3 (lt_bench_gemm_bf16's last shape): f32 through oneDNN, and
    bf16 x bf16 -> f32."""
    import json
    exe = os.path.join(build, "bench", "lt_bench_gemm_bf16")
    out = subprocess.run([exe, "--benchmark_filter=shape:14/path:[12]/threads:1/cold:0/",
                          "--benchmark_min_time=0.3", "--benchmark_format=json"],
                         capture_output=True, text=True, check=True).stdout
    rates = {}
    for b in json.loads(out[out.index("{"):])["benchmarks"]:
        if b["label"].startswith("peak"):
            rates[int(re.search(r"/path:(\d)", b["name"]).group(1))] = b["GFLOP/s"]
    return rates[1], rates[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--arch", default="resnet50", choices=sorted(GMACS_224))
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--steps", type=int, default=8, help="timed steps per run (after one)")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--precisions", default="f32,bf16")
    args = ap.parse_args()
    # torch is imported by the workers only, which check the BLAS it maps.
    note = torch_peer.exec_in_torch_env()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "unknown CPU")
    cores = os.cpu_count()
    f32_rate, bf16_rate = gemm_gflops(args.build)
    print(f"{cpu}, {cores} cores; {note}")
    print(f"GEMM 1024^3 on 1 thread: f32 {f32_rate:.0f} GFLOP/s, bf16 {bf16_rate:.0f} GFLOP/s "
          f"(lt_bench_gemm_bf16)")
    gflop = step_gflop(args.arch, args.image_size, args.batch_size)
    print(f"{args.arch} at {args.image_size}x{args.image_size}, global batch {args.batch_size}: "
          f"{gflop:.0f} GFLOP a step; median of {args.steps} steps\n")
    print("| processes x threads | precision | PyTorch samples/s | lazytrain eager | "
          "lazytrain --compiler-opt | compiler over PyTorch | compiler over eager | "
          "compiler's GFLOP/s (% of GEMM) |")
    print("|---|---|---|---|---|---|---|---|")
    ports = iter(range(20000 + os.getpid() % 20000, 65000))
    for world in [int(w) for w in args.ranks.split(",")]:
        threads = cores if world == 1 else 1
        for precision in args.precisions.split(","):
            bf16 = precision == "bf16"
            peer = min(torch_ms(args, world, bf16, cl, next(ports)) for cl in (False, True))
            eager = lazytrain_ms(args, world, bf16, lazy=False)
            lazy = lazytrain_ms(args, world, bf16, lazy=True)
            rate = (bf16_rate if bf16 else f32_rate) * world * threads
            sps = lambda ms: args.batch_size * 1e3 / ms  # noqa: E731
            achieved = gflop / (lazy / 1e3)
            print(f"| {world} x {threads} | {precision} | {sps(peer):.1f} | {sps(eager):.1f} | "
                  f"{sps(lazy):.1f} | {peer / lazy:.2f}x | {eager / lazy:.2f}x | "
                  f"{achieved:.0f} ({100 * achieved / rate:.0f}%) |", flush=True)


if __name__ == "__main__":
    main()
