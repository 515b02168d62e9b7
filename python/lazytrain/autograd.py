"""torch.autograd.grad: gradients returned rather than accumulated into .grad, optionally with
a graph of their own (create_graph) for double backward and gradient penalties; and
torch.autograd.backward, Tensor.backward's arguments (retain_graph, create_graph, inputs)."""
from . import _C
from ._creation import ones_like

Tensor = _C.Tensor


def _seq(x):
    return [x] if isinstance(x, Tensor) else list(x)


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
    for k, (y, g) in enumerate(zip(outs, gos)):
        if not y.requires_grad:
            raise RuntimeError(f"element {k} of tensors does not require grad and does not have "
                               f"a grad_fn")
        if g is None and y.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if g is None:
            gos[k] = ones_like(y)
    retain = create_graph if retain_graph is None else retain_graph
    got = _C.autograd_grad(outs, ins, gos, retain, create_graph, allow_unused)
    return tuple(g if g._defined() else None for g in got)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulates into .grad, as torch.autograd.backward: of every leaf, or with `inputs` of
    those tensors only (leaves or intermediates); create_graph gives .grad a history of its own."""
    from ._tensor import as_tensor, post_backward_callbacks
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
    for k, (y, g) in enumerate(zip(outs, gos)):
        if not y.requires_grad:
            raise RuntimeError(f"element {k} of tensors does not require grad and does not have "
                               f"a grad_fn")
        if g is None and y.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        gos[k] = ones_like(y) if g is None else as_tensor(g, y)
    retain = create_graph if retain_graph is None else retain_graph
    _C.autograd_backward(outs, gos, retain, create_graph, ins)
    for callback in post_backward_callbacks:
        callback()
