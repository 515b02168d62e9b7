"""lt.save(obj, f) and lt.load(f) in safetensors (atomic writes, lt/serialize.h): a tensor or a
nested dict/list of tensors and plain values (a model's, an optimizer's and a scheduler's state
dicts, metadata). Tensors are stored under their dotted path ("model.fc.weight"), readable by
any safetensors reader; the nesting and the other values go in the file's metadata as JSON, and
any other object (an argparse Namespace, a set, a whole nn.Module) pickled, as torch.save pickles
it, with the tensors it holds stored as the file's tensors: loading it runs the unpickler, which
lt.load(weights_only=True) refuses, as torch.load does."""
import base64
import io
import json
import os
import pickle

from . import _C

_TREE = "lazytrain.tree"
Tensor = _C.Tensor


def _encode(obj, path, tensors):
    if isinstance(obj, Tensor):
        name = path or "tensor"
        while name in tensors:  # a key with a dot can spell another entry's path
            name += "_"
        tensors[name] = obj.detach()
        return {"t": name}
    if isinstance(obj, dict):
        return {"d": [[_key(k), _encode(v, _join(path, k), tensors)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return {"l" if isinstance(obj, list) else "u":
                [_encode(v, _join(path, i), tensors) for i, v in enumerate(obj)]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"v": obj}
    out = io.BytesIO()
    try:
        _Pickler(out, path or "object", tensors).dump(obj)
    except Exception as e:  # pickle raises several kinds
        raise TypeError(f"lt.save: cannot store a {type(obj).__name__} at "
                        f"'{path or '<top>'}': it is not a tensor, container or plain value, and "
                        f"pickling it failed: {e}") from None
    return {"p": base64.b64encode(out.getvalue()).decode("ascii")}


class _Pickler(pickle.Pickler):
    """Pickles an object with the tensors it holds (a module's parameters, a tensor in a custom
    class) stored as the file's tensors, not in the pickle: one entry per tensor object, so two
    references to one tensor (tied weights) load as one."""

    def __init__(self, file, path, tensors):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._path, self._tensors, self._names = path, tensors, {}

    def persistent_id(self, obj):
        if not isinstance(obj, Tensor):
            return None
        name = self._names.get(id(obj))
        if name is None:
            name = f"{self._path}.t{len(self._names)}"
            while name in self._tensors:
                name += "_"
            self._names[id(obj)] = name
            self._tensors[name] = obj.detach()  # obj lives while it is pickled: ids stay unique
        from .nn.parameter import Parameter
        return ("tensor", name, isinstance(obj, Parameter), obj.requires_grad)


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, tensors):
        super().__init__(file)
        self._tensors, self._made = tensors, {}

    def persistent_load(self, pid):
        kind, name, parameter, requires_grad = pid
        if kind != "tensor" or name not in self._tensors:
            raise pickle.UnpicklingError(f"lt.load: the pickle refers to a tensor {name!r} that "
                                         f"the file does not hold")
        if name not in self._made:
            from .nn.parameter import Parameter
            t = self._tensors[name]
            self._made[name] = Parameter(t, requires_grad) if parameter else (
                t.requires_grad_(True) if requires_grad else t)
        return self._made[name]


def _key(k):
    if not isinstance(k, (str, int)) or isinstance(k, bool):
        raise TypeError(f"lt.save: dict keys must be str or int, got {type(k).__name__}")
    return k


def _join(path, k):
    return f"{path}.{k}" if path else str(k)


def _decode(node, tensors, weights_only):
    (kind, value), = node.items()
    if kind == "t":
        return tensors[value]
    if kind == "d":
        return {k: _decode(v, tensors, weights_only) for k, v in value}
    if kind == "l":
        return [_decode(v, tensors, weights_only) for v in value]
    if kind == "u":
        return tuple(_decode(v, tensors, weights_only) for v in value)
    if kind == "p":
        if weights_only:
            raise pickle.UnpicklingError("Weights only load failed: the file holds a pickled "
                                         "object; load it with weights_only=False if you trust "
                                         "its source")
        return _Unpickler(io.BytesIO(base64.b64decode(value)), tensors).load()
    return value


def save(obj, f):
    """Writes obj to the path f (a crash leaves the old file or the new one, never a torn one);
    pending lazy tensors are materialized first, in one graph."""
    tensors = {}
    tree = _encode(obj, "", tensors)
    _C.save(os.fspath(f), tensors, {_TREE: json.dumps(tree)})


def load(f, map_location=None, weights_only=False):
    """What save(obj, f) wrote; a safetensors file from elsewhere gives its dict of tensors.
    map_location is accepted (there is one device). Pickled objects are unpickled (never load a
    file you do not trust), unless weights_only, which refuses them."""
    tensors, metadata = _C.load(os.fspath(f))
    if _TREE not in metadata:
        return dict(tensors)
    return _decode(json.loads(metadata[_TREE]), tensors, weights_only)
