"""Lazy and eager mode, gradient mode, and errors as PyTorch's exception types carrying
lazytrain's message with the caller's Python line."""
import gc
import inspect
import os

import numpy as np
import pytest
import torch

import lazytrain as lt


def _line():
    frame = inspect.currentframe().f_back
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def test_mode_switches():
    assert lt.get_mode() == "eager"
    with lt.lazy():
        assert lt.get_mode() == "lazy"
        with lt.eager():
            assert lt.get_mode() == "eager"
        assert lt.get_mode() == "lazy"
    assert lt.get_mode() == "eager"
    lt.set_mode("lazy")
    assert lt.get_mode() == "lazy"
    lt.set_mode("eager")
    with pytest.raises(ValueError, match="'eager' or 'lazy'"):
        lt.set_mode("graph")

    @lt.lazy()
    def traced():
        return lt.get_mode()
    assert traced() == "lazy" and lt.get_mode() == "eager"


def test_lazy_values_are_pending_until_mark_step():
    with lt.lazy():
        x = lt.ones(3) * 2 + 1
        assert lt._C.is_pending(x)
        lt.mark_step()
        assert not lt._C.is_pending(x)
        assert x.tolist() == [3.0, 3.0, 3.0]


def test_lazy_training_step_matches_eager():
    w_np = np.linspace(-1, 1, 6).reshape(2, 3)
    grads = {}
    for m in ("eager", "lazy"):
        lt.set_mode(m)
        w = lt.tensor(w_np, requires_grad=True)
        for _ in range(3):
            loss = ((w @ lt.ones(3, 1, dtype=lt.float64)).tanh() ** 2).sum()
            loss.backward()
            with lt.no_grad():
                w -= 0.1 * w.grad
            w.grad = None
            lt.mark_step()
        grads[m] = w.detach().numpy()
    lt.set_mode("eager")
    np.testing.assert_allclose(grads["lazy"], grads["eager"], rtol=1e-12)


def test_changing_python_numbers_do_not_recompile():
    x = lt.ones(4)
    lt._C.clear_graph_cache()
    lt._C.set_debug(True)
    try:
        with lt.lazy():
            for scale in (0.5, 2.5, 7.25):
                y = (x * scale + scale / 2).exp()
                lt.mark_step()
                assert y.tolist() == pytest.approx([np.exp(1.5 * scale)] * 4, rel=1e-6)
        runs = [line for line in lt._C.take_debug_log() if "cache=" in line]
    finally:
        lt._C.set_debug(False)
    assert len(runs) == 3 and "cache=miss" in runs[0], runs
    assert all("cache=hit" in line for line in runs[1:]), runs


def test_no_grad_and_enable_grad():
    x = lt.ones(2, requires_grad=True)
    with lt.no_grad():
        assert not lt.is_grad_enabled()
        assert not (x * 2).requires_grad
        with lt.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad

    @lt.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad and lt.is_grad_enabled()
    with lt.set_grad_enabled(False):
        assert not lt.is_grad_enabled()
    assert lt.is_grad_enabled()
    lt.set_grad_enabled(False)  # a plain call, as torch's, lasts
    gc.collect()
    assert not lt.is_grad_enabled() and not (x * 2).requires_grad
    lt.set_grad_enabled(True)
    assert lt.is_grad_enabled()


def test_detach_requires_grad():
    x = lt.ones(2)
    assert not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad
    y = (x * 3).detach()
    assert not y.requires_grad
    x.requires_grad = False
    assert not x.requires_grad


def test_shape_error_is_runtime_error_naming_the_python_line():
    a, b = lt.ones(2, 3), lt.ones(4, 5)
    with pytest.raises(RuntimeError) as e:
        here = _line(); a + b  # noqa: E702 - the error names this line
    msg = str(e.value)
    with pytest.raises(RuntimeError):
        torch.ones(2, 3) + torch.ones(4, 5)  # PyTorch raises the same type
    assert "add" in msg and "[2,3]" in msg and "[4,5]" in msg
    assert here in msg, msg
    assert "call_site.cpp" not in msg


def test_errors_through_the_package_name_the_users_line():
    x = lt.ones(2, 3)
    with pytest.raises(RuntimeError) as e:
        here = _line(); x.reshape(4, 4)  # noqa: E702
    assert here in str(e.value), str(e.value)
    with pytest.raises(RuntimeError) as e:
        here = _line(); lt.nn.functional.linear(x, lt.ones(5, 4))  # noqa: E702
    assert here in str(e.value), str(e.value)


def test_argument_type_errors():
    with pytest.raises(TypeError):
        lt.ones(2) + "a"
    with pytest.raises(TypeError):
        torch.ones(2) + "a"
    assert (lt.ones(2) == None) is False and (lt.ones(2) != "x") is True  # noqa: E711
    with pytest.raises(TypeError):
        lt.zeros("x")
    with pytest.raises(TypeError):
        torch.zeros("x")


def test_lazy_errors_are_raised_where_traced():
    with lt.lazy():
        with pytest.raises(RuntimeError) as e:
            here = _line(); lt.ones(3) @ lt.ones(4)  # noqa: E702
        assert here in str(e.value)
        lt.mark_step()


def test_gil_is_released_during_mark_step():
    """Another Python thread runs while the step's graph compiles and runs."""
    import threading
    import time
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)
    thread = threading.Thread(target=ticker)
    thread.start()
    with lt.lazy():
        x = lt.randn(512, 512, dtype=lt.float64)
        for _ in range(30):
            x = (x @ x).tanh()
        t0 = time.perf_counter()
        lt.mark_step()
        t1 = time.perf_counter()
    stop.set()
    thread.join()
    inside = [t for t in ticks if t0 + 0.01 < t < t1 - 0.01]
    assert t1 - t0 > 0.05, "the step must take long enough to see the other thread"
    assert len(inside) >= 3, (t1 - t0, len(inside))


def test_bad_settings_raise_value_error_with_lazytrains_message():
    before = lt.option("LT_OPT_LEVEL")
    with pytest.raises(ValueError, match="LT_OPT_LEVEL=7 \\(set in code\\): expected an integer "
                                         "from 0 to 2"):
        lt.set_option("LT_OPT_LEVEL", 7)
    assert lt.option("LT_OPT_LEVEL") == before
    lt.set_option("LT_OPT_LEVEL", 1)
    try:
        with lt.lazy():
            y = lt.ones(3) * 3
            lt.mark_step()
        assert y.tolist() == [3.0, 3.0, 3.0]
    finally:
        lt.set_option("LT_OPT_LEVEL", before)


def test_set_num_threads_is_torchs():
    before = lt.get_num_threads()
    for bad, message in ((0, "set_num_threads expects a positive integer"),
                         (1.5, "set_num_threads expects an int, but got float")):
        with pytest.raises(RuntimeError, match=message):
            lt.set_num_threads(bad)
        with pytest.raises(RuntimeError, match=message):
            torch.set_num_threads(bad)
    with pytest.raises(ValueError, match="LT_NUM_THREADS=2000 \\(set in code\\)"):
        lt.set_num_threads(2000)
    try:
        lt.set_num_threads(1)
        assert lt.get_num_threads() == 1
        with lt.lazy():
            y = lt.ones(4, 4) @ lt.ones(4, 4)
            lt.mark_step()
        assert y.tolist() == [[4.0] * 4] * 4
    finally:
        lt.set_num_threads(before)
    assert lt.get_num_threads() == before


def test_debug_graph_text_and_log():
    with lt.lazy():
        x = lt.ones(2, 3)
        lt.mark_step()
        y = (x * 2.5).sum(dim=1)
        assert lt.debug.is_pending(y)
        text = lt.debug.graph_text(y)
        assert "mul" in text and "sum" in text and "f32[2]" in text, text
        lt.debug.clear_graph_cache()
        lt.debug.set_enabled(True)
        try:
            lt.mark_step()
            log = lt.debug.take_log()
        finally:
            lt.debug.set_enabled(False)
    assert any("cache=miss" in line for line in log), log
    assert "LT_OPT_LEVEL" in lt.debug.options_report()


def test_metrics_and_memory():
    lt.debug.reset_metrics()
    with lt.lazy():
        x = lt.ones(64, 64) * 3
        lt.mark_step()
        x.sum().item()
    assert lt.debug.counter("mark_step") >= 1 and lt.debug.counter("sync") >= 1
    assert "mark_step" in lt.debug.metrics_report()
    lt.debug.reset_peak_memory()
    before = lt.debug.memory_stats()
    big = lt.zeros(1024, 1024)
    after = lt.debug.memory_stats()
    assert after["current_bytes"] >= before["current_bytes"] + 4 * 1024 * 1024
    assert after["peak_bytes"] >= after["current_bytes"]
    del big


def test_dim_out_of_range_is_index_error_as_torch():
    for f in (lambda m: m.ones(2, 3).sum(dim=5), lambda m: m.ones(2, 3).transpose(0, 4),
              lambda m: m.ones(2, 3).unsqueeze(4)):
        with pytest.raises(IndexError):
            f(torch)
        with pytest.raises(IndexError, match="out of range for rank"):
            f(lt)


def test_sync_reasons_name_the_python_line():
    x = lt.ones(4)
    with lt.lazy():
        y = x * 2
        total, at = y.sum().item(), _line()
        lt.mark_step()
    assert total == 8.0
    assert lt.debug.counter(f"sync: item at {at}") == 1


def test_recompile_causes_name_the_python_lines_the_ops_were_traced_at():
    lt.debug.set_enabled(True)
    try:
        lt.debug.take_log()
        with lt.lazy():
            for n in (5, 6):
                w, traced = lt.ones(n) * 3, _line()
                lt.mark_step()
        log = lt.debug.take_log()
    finally:
        lt.debug.set_enabled(False)
    causes = [line for line in log if "recompile" in line]
    assert causes and f"(traced at {traced})" in causes[-1], log
