"""nn.Module as torch.nn.Module: assigning a Parameter, a Module (or registering a buffer) names
it; parameters(), state_dict() and the rest walk the tree in registration order with PyTorch's
dotted names."""
import collections
import itertools

from .. import _C
from .._modes import no_grad
from .parameter import Buffer, Parameter

Tensor = _C.Tensor


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys",
                                               ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


class Module:
    training: bool

    def __init__(self, *args, **kwargs):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", collections.OrderedDict())
        object.__setattr__(self, "_forward_hooks", collections.OrderedDict())

    # --- registration ---
    def _check_init(self):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign to a Module before Module.__init__() call")

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self._check_init()
            self._drop(name, self._parameters)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._check_init()
            self._drop(name, self._modules)
            self._modules[name] = value
        elif isinstance(value, Buffer):
            self._check_init()
            self.register_buffer(name, value.data, value.persistent)
        elif "_parameters" in self.__dict__ and name in self._parameters:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self._parameters[name] = None
        elif "_buffers" in self.__dict__ and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            self._buffers[name] = value
        elif "_modules" in self.__dict__ and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            self._modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def _drop(self, name, keep=None):
        """Forgets `name` everywhere but in `keep`, the dict it is assigned in next, where a
        name already there keeps its place (PyTorch's order after a reassignment)."""
        self.__dict__.pop(name, None)
        for d in (self._parameters, self._buffers, self._modules):
            if d is not keep:
                d.pop(name, None)
        self._non_persistent.discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) |
                      set(self._modules))

    def register_parameter(self, name, param):
        self._check_init()
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        self._drop(name, self._parameters)
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._check_init()
        if "." in name or name == "":
            raise KeyError(f"buffer name can't contain \".\" or be empty, got {name!r}")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._drop(name, self._buffers)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name, module):
        self._check_init()
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._drop(name, self._modules)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        m = self
        for part in target.split(".") if target else []:
            m = m._modules[part]
        return m

    def get_parameter(self, target):
        mod, _, name = target.rpartition(".")
        return self.get_submodule(mod)._parameters[name]

    # --- calling ---
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args, **kwargs):
        for hook in self._forward_pre_hooks.values():
            r = hook(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        out = self.forward(*args, **kwargs)
        for hook in self._forward_hooks.values():
            r = hook(self, args, out)
            if r is not None:
                out = r
        return out

    def _add_hook(self, store, hook):
        key = next(_hook_ids)
        store[key] = hook
        return _RemovableHandle(store, key)

    def register_forward_pre_hook(self, hook):
        return self._add_hook(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        return self._add_hook(self._forward_hooks, hook)

    # --- walking the tree ---
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, prefix + ("." if prefix else "") + name,
                                           remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named(self, store, prefix, recurse, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_prefix, m in mods:
            for name, t in getattr(m, store).items():
                if t is None or (remove_duplicate and id(t) in seen):
                    continue
                seen.add(id(t))
                yield mod_prefix + ("." if mod_prefix else "") + name, t

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # --- state ---
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        out = collections.OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                out[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(out, prefix + name + ".", keep_vars)
        return out

    def load_state_dict(self, state_dict, strict=True):
        """Copies values into this module's parameters and buffers in place (their handles, and
        an optimizer holding them, keep working). Values may be lazytrain tensors, torch tensors
        or numpy arrays; shapes must match."""
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for k, target in own.items():
            if k in state_dict:
                src = _as_value(state_dict[k], target)
                if tuple(src._shape) != tuple(target._shape):
                    errors.append(f"size mismatch for {k}: copying a param with shape "
                                  f"{_size_str(src)} from checkpoint, the shape in current model "
                                  f"is {_size_str(target)}.")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with no_grad():
            for k, target in own.items():
                if k in state_dict:
                    src = _as_value(state_dict[k], target)
                    target._copy_(src if src._dtype == target._dtype else src.to(target.dtype))
        return _IncompatibleKeys(missing, unexpected)

    # --- modes, gradients, dtypes ---
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad = p.grad.detach() * 0

    def _apply_to_tensors(self, fn):
        for m in self.modules():
            for store in (m._parameters, m._buffers):
                for name, t in store.items():
                    if t is not None:
                        with no_grad():
                            new = fn(t)
                        if new is t:
                            continue
                        if isinstance(t, Parameter):
                            t.data = new  # the same Parameter object, as PyTorch's
                        else:
                            store[name] = new
        return self

    def to(self, *args, **kwargs):
        from .._device import check_device
        from .._dtype import dtype as dtype_type
        dt = kwargs.get("dtype")
        if "device" in kwargs:
            check_device(kwargs["device"])
        for a in args:
            if isinstance(a, dtype_type):
                dt = a
            elif not isinstance(a, _C.Tensor):
                check_device(a)
        if dt is None or not dt.is_floating_point:
            return self
        return self._apply_to_tensors(lambda t: t.to(dt) if t.dtype.is_floating_point else t)

    def float(self):
        from .. import _dtype
        return self.to(_dtype.float32)

    def double(self):
        from .. import _dtype
        return self.to(_dtype.float64)

    def half(self):
        from .. import _dtype
        return self.to(_dtype.float16)

    def bfloat16(self):
        from .. import _dtype
        return self.to(_dtype.bfloat16)

    def cpu(self):
        return self

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # --- printing ---
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            body = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


_hook_ids = itertools.count()


class _RemovableHandle:
    def __init__(self, store, key):
        self._store, self.id = store, key

    def remove(self):
        self._store.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _as_value(v, like):
    from .._convert import as_tensor
    return v if isinstance(v, Tensor) else as_tensor(v, like)


def _size_str(t):
    return "torch.Size([" + ", ".join(str(d) for d in t._shape) + "])"
