"""Lazy and eager mode, and gradient mode: functions, context managers and decorators."""
import functools

from . import _C


def mark_step():
    """Runs every pending lazy computation as one graph (compiled once per graph structure);
    the GIL is released while it compiles and runs."""
    _C.mark_step()


def set_mode(mode):
    if mode not in ("eager", "lazy"):
        raise ValueError(f"set_mode: expected 'eager' or 'lazy', got {mode!r}")
    _C.set_lazy(mode == "lazy")


def get_mode():
    return "lazy" if _C.is_lazy() else "eager"


class _Switch:
    """A context manager that is also a decorator (as torch.no_grad is)."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self.__class__(*self._args):
                return fn(*args, **kwargs)
        return wrapped

    _args = ()


class _ModeScope(_Switch):
    def __init__(self):
        self._prev = []

    def __enter__(self):
        self._prev.append(_C.is_lazy())
        _C.set_lazy(self._lazy)
        return self

    def __exit__(self, *exc):
        _C.set_lazy(self._prev.pop())
        return False


class lazy(_ModeScope):
    """Ops in this scope trace into the pending graph; lt.mark_step() runs it."""
    _lazy = True


class eager(_ModeScope):
    """Ops in this scope run at once on CPU kernels."""
    _lazy = False


class _GradScope(_Switch):
    def __init__(self):
        self._guards = []

    def __enter__(self):
        g = self._guard_type()
        g.enter()
        self._guards.append(g)
        return self

    def __exit__(self, *exc):
        self._guards.pop().exit()
        return False


class no_grad(_GradScope):
    """Ops in this scope record no autograd history."""
    _guard_type = _C.NoGradGuard


class enable_grad(_GradScope):
    """Ops in this scope record history again, inside no_grad."""
    _guard_type = _C.EnableGradGuard


def is_grad_enabled():
    return _C.grad_enabled()


# The scopes of set_grad_enabled calls not (yet) closed by a `with`: the C++ API sets the mode
# through guards only, and a guard collected with its object would restore the old mode.
_OPEN_SCOPES = []


class set_grad_enabled(_Switch):
    """As torch.set_grad_enabled: a call sets the mode at once (for good, unless it is a `with`
    statement's, whose end restores the mode before it)."""

    def __init__(self, mode):
        self._args = (mode,)
        self._scope = enable_grad() if mode else no_grad()
        self._scope.__enter__()
        _OPEN_SCOPES.append(self._scope)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _OPEN_SCOPES.remove(self._scope)
        self._scope.__exit__(*exc)
        return False


class inference_mode(no_grad):
    pass


NAMES = ["mark_step", "set_mode", "get_mode", "lazy", "eager", "no_grad", "enable_grad",
         "is_grad_enabled", "set_grad_enabled", "inference_mode"]


def set_option(name, value):
    """Overrides a setting (an LT_* variable of README's table) from code, validated as the
    variable is: a bad value raises ValueError naming what is allowed."""
    _C.set_option(name, ("1" if value else "0") if isinstance(value, bool) else str(value))
    if name == "LT_DEBUG":
        _name_every_call()


def _name_every_call():
    """While LT_DEBUG is on, the C++ side names the Python line of every traced op (recompile
    causes cite them); otherwise only the value reads' lines (their sync reasons)."""
    _C.name_every_call(_C.option("LT_DEBUG") not in ("", "0"))


def option(name):
    """A setting's effective value, as set_option takes it."""
    return _C.option(name)


def set_num_threads(nthreads):
    """The runtime's thread count for what runs next (LT_NUM_THREADS's setting), as
    torch.set_num_threads; lazytrain allows 1 to 1024."""
    if isinstance(nthreads, bool) or not isinstance(nthreads, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(nthreads).__name__}")
    if nthreads <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _C.set_num_threads(nthreads)


def get_num_threads():
    return _C.num_threads()


NAMES += ["set_option", "option", "set_num_threads", "get_num_threads"]
