"""torch.utils.checkpoint: a function's activations recomputed in backward instead of kept.
Eagerly the block runs again when backward reaches it; in lazy mode the step graph recomputes it
through an optimization barrier, so the compiled step keeps only the block's inputs."""
from .. import _C

Tensor = _C.Tensor


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """function(*args) with its activations recomputed in backward (PyTorch's reentrant
    checkpoint: the generator is rewound for the second run, so dropout draws the same masks,
    whatever preserve_rng_state says). Tensor arguments are the block's inputs; other arguments
    and keywords are passed as they are. Returns what function returns: a tensor or a tuple of
    tensors. Where no tensor argument requires grad, the function runs plainly (its parameters
    still get their gradients)."""
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    single = []

    def block(*tensors):
        full = list(args)
        for i, t in zip(positions, tensors):
            full[i] = t
        out = function(*full, **kwargs)
        single.append(isinstance(out, Tensor))
        if not isinstance(out, (Tensor, tuple, list)):
            raise TypeError(f"checkpoint: the function must return a tensor or a tuple of "
                            f"tensors, not {type(out).__name__}")
        return out

    outs = _C.checkpoint(block, [args[i] for i in positions])
    return outs[0] if single[0] else tuple(outs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None,
                          preserve_rng_state=True):
    """torch.utils.checkpoint.checkpoint_sequential: the modules (a Sequential or a list) in
    `segments` runs of equal length, each checkpointed but the last, which runs plainly."""
    fns = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be >= 1, got {segments}")
    size = len(fns) // segments

    def run(begin, end):
        def forward(x):
            for f in fns[begin:end]:
                x = f(x)
            return x
        return forward

    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(run(start, end), input)
    return run(end, len(fns))(input)
