"""Seeing inside lazy mode (docs/DEBUGGING.md): the LT_DEBUG lines, a pending graph's IR text,
the settings in effect."""
from . import _C


def set_enabled(on=True):
    """LT_DEBUG: one line per graph run (hash, nodes, cache hit or miss, times) on stderr and,
    on a recompile, its cause; take_log() returns them."""
    _C.set_debug(bool(on))


def take_log():
    """The debug lines printed since the last call."""
    return list(_C.take_debug_log())


def graph_text(*tensors):
    """The pending graph of these tensors as IR text, without running it."""
    return _C.graph_text(list(tensors))


def options_report():
    """Every setting, its value and where it came from (default, env or code)."""
    return _C.options_report()


def clear_graph_cache():
    """Empties the in-memory graph cache (the next step compiles again, or reads the disk)."""
    _C.clear_graph_cache()


def is_pending(tensor):
    """Whether a lazy tensor has work not yet run."""
    return _C.is_pending(tensor)


def metrics_report():
    """Every counter and timing of the lazy runtime (what LT_METRICS=1 prints at exit)."""
    return _C.metrics_report()


def counter(name):
    """A counter's value ("mark_step", "cache_hit", "cache_miss", "sync", ...); 0 if none."""
    return _C.metrics_counter(name)


def total_ns(name):
    """A timing's total in nanoseconds ("compile", "execute", ...); 0 if none."""
    return _C.metrics_total_ns(name)


def reset_metrics():
    _C.metrics_reset()


def memory_stats():
    """{"current_bytes", "peak_bytes"}: tensor data held now and at the most since the start or
    reset_peak_memory(), eager tensors and lazy runs' buffers alike."""
    current, peak = _C.memory_stats()
    return {"current_bytes": current, "peak_bytes": peak}


def reset_peak_memory():
    _C.reset_peak_memory()
