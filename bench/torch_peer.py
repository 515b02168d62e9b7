"""PyTorch's configuration in the comparisons (ddp_torch.py, step_vs_torch.py, torch_compare.py).

BLAS: the OpenMP build (libopenblas0-openmp, put first by LD_LIBRARY_PATH; the
pthread build oversubscribes inside torch's OpenMP threads), with the kernels OpenBLAS picks for
the CPU. An OPENBLAS_CORETYPE in the environment overrides that pick, and the machines here have
come with OPENBLAS_CORETYPE=Haswell set for every process: on an AVX-512 CPU that runs OpenBLAS's
AVX2 kernels, and the MLP's forward GEMM (64x784 by 784x128) then takes 1.7x as long as with the
AVX-512 ones OpenBLAS picks itself (Cooperlake, on an AMD Zen 5). So a core type without AVX-512
kernels, on a CPU with AVX-512, is dropped from the peer's environment (and the line returned
with the environment says so); any other one is kept.

Memory: glibc's malloc gives large blocks back to the kernel when they are freed and maps them
anew on the next allocation, and PyTorch frees and allocates its activations and gradients every
step. On the virtual machines here each page of such a block then faults on first touch, at a
cost that varies from run to run: PyTorch's 1-thread CNN step took 62-87 ms so, and 24.5-25 ms
with malloc told to keep its memory (MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_, glibc's
own tunables; PyTorch's tuning guide gives the same advice through jemalloc or tcmalloc). So the
peer runs with both set, unless the environment sets either or preloads an allocator.
"""
import ctypes
import os
import subprocess
import sys

OPENMP_BLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
# The cores of OpenBLAS 0.3.21 whose single-precision GEMM kernels use AVX-512.
AVX512_CORES = {"SkylakeX", "Cooperlake", "SapphireRapids"}
# Blocks up to 1 GiB come from the heap, and the heap is never trimmed below 4 GiB.
KEEP_MEMORY = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(4 << 30)}


def _core_of(env):
    """The core (kernel set) the OpenMP OpenBLAS picks in a process with `env`."""
    code = ("import ctypes; lib = ctypes.CDLL(%r); lib.openblas_get_corename.restype = "
            "ctypes.c_char_p; print(lib.openblas_get_corename().decode())"
            % os.path.join(OPENMP_BLAS, "libopenblas.so.0"))
    return subprocess.run([sys.executable, "-c", code], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def _cpu_has_avx512():
    with open("/proc/cpuinfo") as f:
        return any(line.startswith("flags") and " avx512f" in line for line in f)


def torch_env(env=None):
    """(env, note): `env` (default os.environ) for a PyTorch process on the OpenMP OpenBLAS with
    the fastest kernels this CPU runs and a malloc that keeps its memory, and a line saying which
    kernels and what malloc does."""
    env = dict(os.environ if env is None else env)
    if any(k in env for k in KEEP_MEMORY) or env.get("LD_PRELOAD"):
        memory = "malloc as the environment sets it"
    else:
        env.update(KEEP_MEMORY)
        memory = "malloc keeps its memory (" + " ".join(f"{k}={v}" for k, v in
                                                        KEEP_MEMORY.items()) + ")"
    env, kernels = _blas_env(env)
    return env, f"{kernels}; {memory}"


def _blas_env(env):
    """(env, note) for the OpenMP OpenBLAS with its fastest kernels."""
    paths = [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
    if OPENMP_BLAS not in paths:
        env["LD_LIBRARY_PATH"] = ":".join([OPENMP_BLAS] + paths)
    if not os.path.exists(os.path.join(OPENMP_BLAS, "libopenblas.so.0")):
        sys.exit(f"no OpenMP OpenBLAS in {OPENMP_BLAS} (apt-get install libopenblas0-openmp)")
    given = env.get("OPENBLAS_CORETYPE")
    if given is None:
        return env, f"OpenBLAS kernels: {_core_of(env)} (its own choice)"
    core = _core_of(env)
    if core in AVX512_CORES or not _cpu_has_avx512():
        return env, f"OpenBLAS kernels: {core} (OPENBLAS_CORETYPE={given} as given)"
    del env["OPENBLAS_CORETYPE"]
    return env, (f"OpenBLAS kernels: {_core_of(env)} (its own choice; OPENBLAS_CORETYPE={given} "
                 f"dropped: {core} kernels do not use this CPU's AVX-512)")


def exec_in_torch_env():
    """Re-runs this script in torch_env() unless it already runs there (then returns the note)."""
    if os.environ.get("LT_TORCH_PEER_NOTE"):
        return os.environ["LT_TORCH_PEER_NOTE"]
    env, note = torch_env()
    env["LT_TORCH_PEER_NOTE"] = note
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def mapped_blas():
    """The BLAS libraries this process has mapped (after torch has run a GEMM)."""
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f
                       if "blas" in line.split()[-1] and line.split()[-1].startswith("/")})


def blas_core():
    """The core of the OpenBLAS this process has mapped, or None."""
    for path in mapped_blas():
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
    return None


def run_processes(target, world, args, what):
    """Starts `world` processes running target(rank, world, *args, out) and returns the one value
    rank 0 puts in `out`. A worker that dies, or all of them ending without a value, ends the
    script with `what` and their exit codes, instead of a wait that never returns."""
    import queue
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=target, args=(r, world, *args, out)) for r in range(world)]
    for p in procs:
        p.start()
    value = None
    while value is None:  # gloo once reset a connection here: a worker died, the others waited
        codes = [p.exitcode for p in procs]
        ended = any(c not in (None, 0) for c in codes) or all(c is not None for c in codes)
        try:  # after the workers end, a last wait for a value put just before
            value = out.get(timeout=5.0 if ended else 1.0)
        except queue.Empty:
            if ended:
                for p in procs:
                    p.kill()
                sys.exit(f"{what} ended without a result (worker exit codes {codes})")
    for p in procs:
        p.join()
    return value
