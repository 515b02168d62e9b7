"""torch.autograd.grad: gradients returned rather than accumulated into .grad, optionally with
a graph of their own (create_graph) for double backward and gradient penalties; and
torch.autograd.backward, Tensor.backward's arguments (retain_graph, create_graph, inputs); and
torch.autograd.Function, a gradient written by hand."""
import functools

from . import _C
from ._convert import as_tensor
from ._creation import ones_like
from ._modes import no_grad

Tensor = _C.Tensor


def _seq(x):
    return [x] if isinstance(x, Tensor) else list(x)


def _seeds(outs, gos):
    """Each output's gradient: the one given (as a tensor like the output), or ones for a scalar
    output; PyTorch's errors."""
    seeds = []
    for k, (y, g) in enumerate(zip(outs, gos)):
        if not y.requires_grad:
            raise RuntimeError(f"element {k} of tensors does not require grad and does not have "
                               f"a grad_fn")
        if g is None and y.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        seeds.append(ones_like(y) if g is None else as_tensor(g, y))
    return seeds


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False, is_grads_batched=False):
    """PyTorch's arguments and errors; a tuple with one gradient per input (None for an unused
    input with allow_unused). No leaf's .grad changes."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad: is_grads_batched (vmap over grad_outputs) is "
                                  "not supported")
    outs, ins = _seq(outputs), _seq(inputs)
    gos = [None] * len(outs) if grad_outputs is None else _seq(grad_outputs)
    if len(gos) != len(outs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(gos)} for "
                           f"{len(outs)} outputs")
    gos = _seeds(outs, gos)
    retain = create_graph if retain_graph is None else retain_graph
    got = _C.autograd_grad(outs, ins, gos, retain, create_graph, allow_unused)
    return tuple(g if g._defined() else None for g in got)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulates into .grad, as torch.autograd.backward: of every leaf, or with `inputs` of
    those tensors only (leaves or intermediates); create_graph gives .grad a history of its own."""
    from ._tensor import post_backward_callbacks
    if grad_variables is not None:
        grad_tensors = grad_variables
    outs = _seq(tensors)
    if grad_tensors is None:
        gos = [None] * len(outs)
    else:
        gos = [grad_tensors] if isinstance(grad_tensors, Tensor) else list(grad_tensors)
    if len(gos) != len(outs):
        raise RuntimeError(f"grad_tensors has {len(gos)} tensors for {len(outs)} tensors")
    ins = []
    if inputs is not None:
        ins = _seq(inputs)
        if not ins:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    gos = _seeds(outs, gos)
    retain = create_graph if retain_graph is None else retain_graph
    _C.autograd_backward(outs, gos, retain, create_graph, ins)
    for callback in post_backward_callbacks:
        callback()


class FunctionCtx:
    """What a Function's forward and backward share (torch's ctx): save_for_backward,
    saved_tensors, needs_input_grad, mark_non_differentiable, and any attribute the forward
    sets."""

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{i} is of type {type(t).__name__}")
        self.to_save = tensors

    def mark_non_differentiable(self, *args):
        """These outputs of the forward do not require grad; their gradients in backward are
        zeros (as PyTorch's, which materializes them)."""
        self._non_differentiable = args

    def mark_dirty(self, *args):
        raise NotImplementedError("ctx.mark_dirty (in-place forward) is not supported; return "
                                  "new tensors")

    def set_materialize_grads(self, value):
        if not value:
            raise NotImplementedError("set_materialize_grads(False): lazytrain always passes "
                                      "zeros for outputs no gradient reached")


class Function:
    """torch.autograd.Function: subclass it with static forward(ctx, *args) and
    backward(ctx, *grad_outputs), and call Cls.apply(*args). The forward's ops record no history;
    the call is one node whose gradient is the backward (C++: lt::apply_function), in eager and
    lazy mode alike. backward returns one gradient (or None) per forward argument."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    @classmethod
    def apply(cls, *args):
        name = cls.__name__ + "Backward"
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx = FunctionCtx()
        ctx.to_save, ctx._non_differentiable = (), ()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        single = []

        def forward(tensors):
            call = list(args)
            for p, t in zip(positions, tensors):
                call[p] = t
            out = cls.forward(ctx, *call)
            single.append(isinstance(out, Tensor))
            outs = [out] if single[0] else list(out)
            for k, y in enumerate(outs):
                if not isinstance(y, Tensor):
                    raise TypeError(f"{cls.__name__}.forward: output {k} is a "
                                    f"{type(y).__name__}; lazytrain's Functions return tensors")
                if any(y is t for t in tensors):
                    outs[k] = y.clone()  # an input returned as it is: a new tensor, as torch's
            ctx._detach = [k for k, y in enumerate(outs)
                           if any(y is t for t in ctx._non_differentiable)]
            saved = [t for t in ctx.to_save if t is not None]
            ctx._saved_slots = [t is not None for t in ctx.to_save]
            return outs, saved

        def backward(inputs, outputs, saved, grad_outputs, needs):
            it = iter(saved)
            ctx.saved_tensors = tuple(next(it) if s else None for s in ctx._saved_slots)
            grads = cls.backward(ctx, *grad_outputs)
            grads = (grads,) if not isinstance(grads, (tuple, list)) else tuple(grads)
            if len(grads) != len(args):
                raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                                   f"(expected {len(args)}, got {len(grads)})")
            for i, g in enumerate(grads):
                if g is not None and i not in positions:
                    raise RuntimeError(f"function {name} returned a gradient different than None "
                                       f"at position {i + 1}, but the corresponding forward "
                                       "input was not a Variable")
            return [None if grads[p] is None else _as_like(grads[p], args[p]) for p in positions]

        outs = _C.apply_function(name, [args[p] for p in positions], forward, backward)
        outs = [o.detach() if k in ctx._detach else o for k, o in enumerate(outs)]
        return outs[0] if single[0] else tuple(outs)


def _as_like(g, x):
    return g if isinstance(g, Tensor) else as_tensor(g, x)


def once_differentiable(fn):
    """torch.autograd.function.once_differentiable: the backward runs without recording."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
