"""Optimizers with PyTorch's constructor arguments and param_groups over the C++ optimizers,
whose update is traced into the step graph (no sync) with every option entering it as data: an
edited g["lr"] takes effect at the next step() and does not recompile it."""
from .. import _C
from .._modes import enable_grad


class Optimizer:
    _cpp_type = None

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, _C.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + type(params).__name__)
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self.param_groups = []
        self.state = {}
        for g in groups:
            g = dict(g)
            g["params"] = [g["params"]] if isinstance(g["params"], _C.Tensor) else list(
                g["params"])
            for k, v in defaults.items():
                g.setdefault(k, v)
            self._check(g)
            self.param_groups.append(g)
        self._cpp = self._cpp_type([(g["params"], g) for g in self.param_groups])

    def _check(self, group):
        if group["lr"] < 0:
            raise ValueError(f"Invalid learning rate: {group['lr']}")
        if group.get("weight_decay", 0) < 0:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}")

    def add_param_group(self, param_group):
        """A new group (PyTorch's checks and defaults), as when fine-tuning unfreezes layers:
        the C++ optimizer is made again over every group, the existing groups' state carried
        over, so their next step is the one they would have taken."""
        if not isinstance(param_group, dict):
            raise TypeError("param group must be a dict")
        g = dict(param_group)
        params = g.get("params")
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        g["params"] = [params] if isinstance(params, _C.Tensor) else list(params)
        for p in g["params"]:
            if not isinstance(p, _C.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            g.setdefault(k, v)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in g["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self._check(g)
        self._sync_options()
        state = self._cpp.state_tensors()
        cpp = self._cpp_type([(group["params"], group) for group in self.param_groups + [g]])
        cpp.load_state_tensors(state)
        self.param_groups.append(g)
        self._cpp = cpp

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._sync_options()
        self._cpp.step()
        return loss

    def _sync_options(self):
        """The param_groups' options, edited or not, into the C++ optimizer's."""
        for i, g in enumerate(self.param_groups):
            self._check(g)
            self._cpp.set_options(i, g)

    def zero_grad(self, set_to_none=True):
        self._cpp.zero_grad(set_to_none)

    def _slots(self, tensors, group, index):
        prefix = f"optim.{group}.{index}."
        return {k[len(prefix):]: (k, v) for k, v in tensors.items() if k.startswith(prefix)}

    def state_dict(self):
        """PyTorch's layout: {"state": {param id: {slot: tensor}}, "param_groups": [options with
        "params": ids]}, ids counting the parameters across groups in order. The slots are the
        C++ optimizer's (PyTorch's names; SGD also keeps its "step")."""
        tensors = self._cpp.state_tensors()
        state, groups, pid = {}, [], 0
        for gi, g in enumerate(self.param_groups):
            ids = list(range(pid, pid + len(g["params"])))
            for pi, i in enumerate(ids):
                slots = {name: t for name, (_, t) in self._slots(tensors, gi, pi).items()}
                if slots:
                    state[i] = slots
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
            pid += len(ids)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Options and state from state_dict(), this library's or PyTorch's (a PyTorch SGD state
        has no step count: a momentum buffer means the parameter has had its first step)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, saved in zip(self.param_groups, groups):
            if len(g["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        from .._convert import as_tensor
        tensors, new = self._cpp.state_tensors(), {}
        for gi, saved in enumerate(groups):
            for pi, pid in enumerate(saved["params"]):
                src = state_dict["state"].get(pid, {})
                for slot, (key, current) in self._slots(tensors, gi, pi).items():
                    value = src.get(slot)
                    if value is None and slot == "step" and src.get("momentum_buffer") is not None:
                        value = 1.0
                    if value is not None:
                        new[key] = as_tensor(value, current).to(current.dtype)
        self._cpp.load_state_tensors(new)
        for g, saved in zip(self.param_groups, groups):
            g.update({k: v for k, v in saved.items() if k != "params"})

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


class SGD(Optimizer):
    _cpp_type = _C.SGD

    def __init__(self, params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        if maximize:
            raise NotImplementedError("SGD: maximize is not supported yet")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def _check(self, group):
        super()._check(group)
        if group["momentum"] < 0:
            raise ValueError(f"Invalid momentum value: {group['momentum']}")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")


class _AdamBase(Optimizer):
    def __init__(self, params, lr, betas, eps, weight_decay, amsgrad, maximize, capturable,
                 differentiable, fused):
        if maximize or fused:
            raise NotImplementedError(f"{type(self).__name__}: maximize and fused are not "
                                      "supported yet")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad))

    def _check(self, group):
        super()._check(group)
        if group["eps"] < 0:
            raise ValueError(f"Invalid epsilon value: {group['eps']}")
        for i, b in enumerate(group["betas"]):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {b}")


class Adam(_AdamBase):
    _cpp_type = _C.Adam

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize, capturable,
                         differentiable, fused)


class AdamW(_AdamBase):
    _cpp_type = _C.AdamW

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize, capturable,
                         differentiable, fused)


class RMSprop(Optimizer):
    _cpp_type = _C.RMSprop

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, foreach=None, maximize=False, differentiable=False):
        if maximize:
            raise NotImplementedError("RMSprop: maximize is not supported yet")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered))

    def _check(self, group):
        super()._check(group)
        if group["eps"] < 0:
            raise ValueError(f"Invalid epsilon value: {group['eps']}")
        if group["momentum"] < 0:
            raise ValueError(f"Invalid momentum value: {group['momentum']}")
        if group["alpha"] < 0:
            raise ValueError(f"Invalid alpha value: {group['alpha']}")


class Adagrad(Optimizer):
    _cpp_type = _C.Adagrad

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False):
        if maximize:
            raise NotImplementedError("Adagrad: maximize is not supported yet")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps))

    def _check(self, group):
        super()._check(group)
        if group["lr_decay"] < 0:
            raise ValueError(f"Invalid lr_decay value: {group['lr_decay']}")
        if group["initial_accumulator_value"] < 0:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{group['initial_accumulator_value']}")
        if group["eps"] < 0:
            raise ValueError(f"Invalid epsilon value: {group['eps']}")
