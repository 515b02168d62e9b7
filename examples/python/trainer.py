"""The Python trainers' shared loop, with the C++ trainers' flags (examples/trainer/): eager or
(--compiler-opt) lazy steps, data-parallel over lt-launch's ranks (DistributedDataParallel, a
DistributedSampler, SyncBatchNorm), autocast (--amp bf16|fp16) and loss scaling (--loss-scale),
warmup + cosine schedule,
gradient clipping, loader threads (--num-workers), a log line and CSV row per --log-interval
(loss, lr, ms/step, samples/s, the wait for data, peak memory), rank 0's checkpoints and
--resume. Written against PyTorch's names
and run with lazytrain: `import lazytrain as torch` is the port."""
import argparse
import contextlib
import csv
import math
import os
import subprocess
import time

import lazytrain as torch

nn, F, dist = torch.nn, torch.nn.functional, torch.distributed


def add_train_flags(p, epochs, batch_size, lr, weight_decay, warmup_steps, momentum=None,
                    lrf=0.0):
    p.add_argument("--compiler-opt", action="store_true", help="lazy mode: compiled steps")
    p.add_argument("--epochs", type=int, default=epochs, help="passes over the training set")
    p.add_argument("--max-steps", type=int, default=-1,
                   help="stop at this global step, also when resumed (-1: run --epochs); the "
                        "schedule then spans this many steps")
    p.add_argument("--accum-steps", type=int, default=1,
                   help="micro-batches accumulated per optimizer step (a mark_step after each "
                        "in lazy mode)")
    p.add_argument("--batch-size", type=int, default=batch_size,
                   help="examples per step, over all ranks")
    p.add_argument("--lr", type=float, default=lr, help="peak learning rate")
    p.add_argument("--lrf", type=float, default=lrf, help="the cosine's final lr is lr * lrf")
    p.add_argument("--schedule", choices=["constant", "cosine"], default="cosine",
                   help="learning rate after the warmup")
    p.add_argument("--warmup-steps", type=int, default=warmup_steps,
                   help="linear warmup from 0 to --lr over N steps")
    p.add_argument("--weight-decay", type=float, default=weight_decay)
    if momentum is not None:
        p.add_argument("--momentum", type=float, default=momentum, help="SGD momentum")
    p.add_argument("--clip-grad", type=float, default=0.0,
                   help="clip the global gradient norm to N (0: off)")
    p.add_argument("--seed", type=int, default=0,
                   help="seeds initialization, dropout and the data order")
    p.add_argument("--train-limit", type=_limit, default=-1,
                   help="the first N training examples (-1: all)")
    p.add_argument("--test-limit", type=_limit, default=-1,
                   help="the first N test examples (-1: all)")
    p.add_argument("--log-interval", type=int, default=50, help="steps between progress lines")
    p.add_argument("--log-csv", default="", help="a CSV row per logged step and evaluation")
    p.add_argument("--eval-every", type=int, default=0,
                   help="evaluate every N steps (0: at each epoch's end); the end always")
    p.add_argument("--plot", default="",
                   help="FILE.png: the CSV log drawn with gnuplot at the end (scripts/plot_log.sh)")
    p.add_argument("--weights", default="",
                   help="start from these model weights (non-strict: what matches is copied, "
                        "the rest printed)")
    p.add_argument("--save-dir", default="",
                   help="write checkpoints DIR/step-<N>.safetensors (every --save-every steps "
                        "and at the end), the C++ trainers' files")
    p.add_argument("--save-every", type=int, default=0,
                   help="steps between checkpoints (0: only at the end)")
    p.add_argument("--resume", default="",
                   help="continue a run from its checkpoint (this trainer's, from Python or "
                        "C++): model, optimizer, schedule, RNG and data position")
    p.add_argument("--amp", choices=["off", "bf16", "fp16"], default="off",
                   help="autocast around forward and loss, in bf16 or fp16")
    p.add_argument("--loss-scale", type=_loss_scale, default=None,
                   help="loss scaling with the in-graph inf check and skip: dynamic, off, or a "
                        "static scale N > 0 (default: dynamic with --amp fp16, else off)")
    p.add_argument("--num-workers", type=int, default=0,
                   help="loader threads that make the next batches while the step runs")


def _limit(text):
    n = int(text)
    if n == 0 or n < -1:
        raise argparse.ArgumentTypeError(f"expected -1 (all) or a count > 0, got {text}")
    return n


def limit(n):
    """A --train-limit or --test-limit as the datasets take it: 0 for all."""
    return max(n, 0)


def _loss_scale(text):
    if text in ("dynamic", "off"):
        return text
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    # The scale is an f32 tensor: it must stay finite and non-zero there.
    if not (0 < value < 3.4028234663852886e38):
        raise argparse.ArgumentTypeError(
            f"expected dynamic, off or a number > 0 that is finite in f32, got {text}")
    return text


def loss_scale_mode(args):
    """--loss-scale as given, or its default for --amp."""
    if args.loss_scale is not None:
        return args.loss_scale
    return "dynamic" if args.amp == "fp16" else "off"


def _make_scaler(args):
    """(the GradScaler, the static scale or None); a disabled scaler when off."""
    mode = loss_scale_mode(args)
    if mode in ("off", "dynamic"):
        return torch.amp.GradScaler(enabled=mode == "dynamic"), None
    return torch.amp.GradScaler(init_scale=float(mode)), float(mode)


class Task:
    """What a trainer supplies: the model, its optimizer, the training data (a Dataset whose
    items collate to (inputs, targets); set_epoch(e) is called before each epoch when it has
    one), the loss of a batch and an evaluation returning {name: value}."""
    name = "task"
    model = None
    train_data = None

    def make_optimizer(self, args):
        raise NotImplementedError

    def loss(self, model, inputs, targets):
        return F.cross_entropy(model(inputs), targets)

    def evaluate(self, model):
        return {}


# The C++ trainers' --log-csv columns: a "train" row per logged step, an "eval" row per
# evaluation, fields that do not apply to a row empty.
CSV_HEADER = ["kind", "step", "epoch", "loss", "lr", "samples_per_s", "ms_per_step",
              "data_wait_ms", "peak_mb", "eval_loss", "eval_acc", "eval_top5"]
# Which of a task's evaluate() results fill the eval columns (the first key present).
EVAL_COLUMNS = {"eval_loss": ("loss", "validation_loss_nats_per_byte"),
                "eval_acc": ("accuracy", "test_accuracy", "top1"), "eval_top5": ("top5",)}


def _g(v):
    """As the C++ log writes numbers: 9 significant digits (an f32 reads back exactly)."""
    return "" if v is None else f"{v:.9g}"


def split_for_weight_decay(model):
    """(matrices and kernels, the rest): weight decay on the first only, as the C++ trainers."""
    decay, no_decay = [], []
    for p in model.parameters():
        (decay if p.dim() >= 2 else no_decay).append(p)
    return decay, no_decay


def _number(v):
    """A number as the C++ side writes it (fmt's shortest form: 0.05, 1e-05, 3 for 3.0)."""
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


class Schedule(torch.optim.lr_scheduler.LambdaLR):
    """The C++ trainers' schedule: a linear warmup from 0 to --lr over --warmup-steps, then a
    cosine to lr * lrf at the last step (or a constant), the same numbers as theirs, and its
    kind as their checkpoints name it (lt/optim.h's schedules)."""

    def __init__(self, optimizer, args, total_steps):
        after = max(total_steps - args.warmup_steps, 1)
        lrf, warmup = args.lrf, args.warmup_steps
        if args.schedule == "cosine":
            self.kind = f"cosine(t_max={after},lrf={_number(lrf)})"

            def then(t):
                x = min(t, after) / after
                return lrf + (1 - lrf) * (1 + math.cos(math.pi * x)) / 2
        else:
            self.kind = "constant"

            def then(t):
                return 1.0

        def factor(t):
            return then(t - warmup) if t >= warmup else 0.0 + (1 - 0.0) * t / warmup
        if warmup > 0:
            self.kind = f"warmup(steps={warmup},start_factor=0)+{self.kind}"
        super().__init__(optimizer, factor if warmup > 0 else then)

    def checkpoint(self):
        return {"sched.kind": self.kind, "sched.last_step": str(self.last_epoch),
                "sched.base_lrs": ",".join(_number(b) for b in self.base_lrs)}

    def load_checkpoint(self, metadata, path):
        if metadata["sched.kind"] != self.kind:
            raise SystemExit(f"--resume {path}: Scheduler.load_state_dict: the state is of "
                             f"schedule \"{metadata['sched.kind']}\", this one is \"{self.kind}\"")
        self.last_epoch = int(metadata["sched.last_step"])
        self.base_lrs = [float(b) for b in metadata["sched.base_lrs"].split(",")]
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]


def load_weights(model, path):
    """The model's tensors found in path (a trainer checkpoint's "model", or a state dict with or
    without the "model." prefix), copied; returns what did not match."""
    state = torch.load(path)
    if isinstance(state, dict) and isinstance(state.get("model"), dict):
        state = state["model"]
    # A training checkpoint's optimizer and scaler state are not weights.
    state = {k[len("model."):] if k.startswith("model.") else k: v for k, v in state.items()
             if not k.startswith(("optim.", "scaler."))}
    own = model.state_dict()
    mismatched = [k for k, v in state.items()
                  if k in own and tuple(v.shape) != tuple(own[k].shape)]
    missing, unexpected = model.load_state_dict(
        {k: v for k, v in state.items() if k not in mismatched}, strict=False)
    return missing, unexpected, mismatched


def _evaluate(task, model, step, steps_per_epoch, log, rank, amp_dtype):
    """One evaluation in eval mode, in the training's mode (lazy: a graph per chunk, read by
    the task) and autocast, as the C++ trainers evaluate: printed on rank 0 and logged as an
    eval row."""
    model.eval()
    with torch.no_grad(), torch.autocast("cpu", dtype=amp_dtype or torch.bfloat16,
                                         enabled=amp_dtype is not None):
        results = task.evaluate(model)
    torch.mark_step()  # in lazy mode, what the task did not read
    model.train()
    if rank == 0:
        for k, v in results.items():
            print(f"{k} {v:.6f}", flush=True)
        if log and results:
            peak = torch.debug.memory_stats()["peak_bytes"] / 2**20
            row = {column: next((results[k] for k in keys if k in results), None)
                   for column, keys in EVAL_COLUMNS.items()}
            log.writerow(["eval", step, max(step - 1, 0) // steps_per_epoch + 1, "", "", "", "",
                          "", _g(peak)] + [_g(v) for v in row.values()])
    return results


def _accuracy(results, otherwise):
    return next((results[k] for k in EVAL_COLUMNS["eval_acc"] if k in results), otherwise)


def _config_metadata(args):
    """The run's configuration as the C++ trainers' checkpoints record it (config.*)."""
    flags = {"compiler_opt": "true" if args.compiler_opt else "false", "epochs": args.epochs,
             "max_steps": args.max_steps, "batch_size": args.batch_size, "lr": _number(args.lr),
             "lrf": _number(args.lrf), "schedule": args.schedule,
             "warmup_steps": args.warmup_steps, "weight_decay": _number(args.weight_decay),
             "momentum": _number(getattr(args, "momentum", 0.9)),
             "clip_grad": _number(args.clip_grad), "amp": args.amp,
             "loss_scale": loss_scale_mode(args), "accum_steps": args.accum_steps,
             "seed": args.seed, "train_limit": args.train_limit}
    return {f"config.{k}": str(v) for k, v in flags.items()}


def _save(task, args, optimizer, scheduler, scaler, step, steps_per_epoch, best_accuracy, rank):
    """Rank 0's checkpoint DIR/step-<N>.safetensors in the C++ trainers' layout
    (examples/trainer/training_checkpoint.h): model.*, optim.*, sched.*, scaler.*, config.*,
    train.*; one file resumes a run of this trainer from either language."""
    if rank != 0:
        return
    optimizer._sync_options()  # the scheduler's rate for the next step, as C++ holds it
    tensors, metadata = optimizer._cpp.checkpoint()
    tensors = dict(tensors)
    metadata = dict(metadata)
    for name, t in task.model.state_dict().items():
        tensors["model." + name] = t
    metadata.update(scheduler.checkpoint())
    metadata.update(_config_metadata(args))
    if scaler.is_enabled():
        scaler_tensors, scaler_metadata = scaler._cpp.checkpoint()
        tensors.update(scaler_tensors)
        metadata.update(scaler_metadata)
    seed, counter = torch._C._rng_state()
    # Where the run is: `step` steps done, the last of them in `epoch` after `batch` of its
    # micro-batches.
    epoch, batch = ((step - 1) // steps_per_epoch,
                    ((step - 1) % steps_per_epoch + 1) * args.accum_steps) if step else (0, 0)
    metadata.update({"train.trainer": task.name, "train.step": str(step),
                     "train.epoch": str(epoch), "train.batch": str(batch),
                     "train.rng_seed": str(seed), "train.rng_counter": str(counter),
                     "train.best_eval_acc": _number(best_accuracy)})
    os.makedirs(args.save_dir, exist_ok=True)
    path = os.path.join(args.save_dir, f"step-{step}.safetensors")
    torch._C.save(path, tensors, metadata)
    print(f"saved {path}", flush=True)


def _resume(path, task, args, optimizer, scheduler, scaler):
    """Loads a checkpoint of this trainer (_save's, or the C++ trainer's) into the run and the
    global generator; returns (its step, its best accuracy). Refuses another trainer's, another
    batch size or accumulation (the data position depends on them) and another loss scaling."""
    try:
        tensors, metadata = torch._C.load(path)
    except (OSError, RuntimeError, ValueError) as e:
        raise SystemExit(f"--resume: {e}")

    def need(key):
        if key not in metadata:
            raise SystemExit(f"{path}: not a training checkpoint: no metadata '{key}'")
        return metadata[key]
    if need("train.trainer") != task.name:
        raise SystemExit(f"{path}: a checkpoint of {metadata['train.trainer']}, not of "
                         f"{task.name}")
    config = _config_metadata(args)
    for flag, key in (("--batch-size", "config.batch_size"),
                      ("--accum-steps", "config.accum_steps")):
        if need(key) != config[key]:
            raise SystemExit(f"{path}: written with {flag} {metadata[key]}, resumed with {flag} "
                             f"{config[key]} (the data position depends on it)")
    had = metadata.get("config.loss_scale", "off")
    if had != loss_scale_mode(args):
        raise SystemExit(f"{path}: written with --loss-scale {had}, resumed with --loss-scale "
                         f"{loss_scale_mode(args)} (the loss scaler's state is part of the run)")
    task.model.load_state_dict({k[len("model."):]: v for k, v in tensors.items()
                                if k.startswith("model.")})
    optimizer._cpp.load_checkpoint({k: v for k, v in tensors.items() if k.startswith("optim.")},
                                   metadata)
    scheduler.load_checkpoint(metadata, path)
    if scaler.is_enabled():
        scaler._cpp.load_checkpoint(
            {k: v for k, v in tensors.items() if k.startswith("scaler.")}, metadata)
    torch._C._set_rng_state(int(need("train.rng_seed")), int(need("train.rng_counter")))
    return int(need("train.step")), float(need("train.best_eval_acc"))


def train(task, args):
    dist.init_process_group()  # the job lt-launch started; alone, a job of one rank
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} is not a multiple of {world} ranks")
    model = task.model
    net = nn.parallel.DistributedDataParallel(model) if world > 1 else model
    optimizer = task.make_optimizer(args)
    sampler = torch.utils.data.DistributedSampler(task.train_data, world, rank, shuffle=True,
                                                  seed=args.seed, drop_last=True)
    loader = torch.utils.data.DataLoader(task.train_data, batch_size=args.batch_size // world,
                                         sampler=sampler, drop_last=True,
                                         num_workers=getattr(args, "num_workers", 0))
    accum = args.accum_steps
    if accum < 1:
        raise SystemExit(f"--accum-steps {accum}: must be at least 1")
    steps_per_epoch = len(loader) // accum
    if not steps_per_epoch:
        raise SystemExit(f"{len(task.train_data)} training examples make no step of --batch-size "
                         f"{args.batch_size} x --accum-steps {accum}")
    # As the C++ trainers: --max-steps is where the run stops and what the schedule spans.
    total = args.max_steps if args.max_steps >= 0 else args.epochs * steps_per_epoch
    scheduler = Schedule(optimizer, args, max(total, 1))
    scaler, static_scale = _make_scaler(args)
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.amp)
    step, best_accuracy = 0, -1.0
    if args.resume:
        step, best_accuracy = _resume(args.resume, task, args, optimizer, scheduler, scaler)
        if rank == 0:
            print(f"{task.name}: resumed from {args.resume} at step {step}", flush=True)
    if args.weights:
        missing, unexpected, mismatched = load_weights(model, args.weights)
        if rank == 0:
            print(f"--weights {args.weights}: missing {missing}, unexpected {unexpected}, "
                  f"shape mismatches {mismatched}", flush=True)
    log = None
    csv_path = args.log_csv or (args.plot + ".csv" if args.plot else "")
    if csv_path and rank == 0:
        append = args.resume and os.path.exists(csv_path) and os.path.getsize(csv_path)
        log_file = open(csv_path, "a" if append else "w", newline="")
        log = csv.writer(log_file, lineterminator="\n")  # the C++ trainers' line ends
        if not append:
            log.writerow(CSV_HEADER)
    if rank == 0:
        params = sum(p.numel() for p in model.parameters())
        amp = "" if amp_dtype is None else f", {args.amp} autocast"
        if scaler.is_enabled():
            amp += f", {loss_scale_mode(args)} loss scale"
        print(f"{task.name}: {params} parameters, {world} rank(s), "
              f"{'lazy' if args.compiler_opt else 'eager'}{amp}, {total} steps", flush=True)
    if args.compiler_opt:
        torch.set_mode("lazy")
    model.train()
    t0 = time.perf_counter()
    waited = 0.0  # seconds spent waiting for batches since the last log line
    skipped = torch.zeros(())  # steps the loss scaler skipped since the last log line
    skipped_total, first_step = 0, step
    while step < total:
        epoch = step // steps_per_epoch
        sampler.set_epoch(epoch)
        if hasattr(task.train_data, "set_epoch"):
            task.train_data.set_epoch(epoch)
        batches = iter(loader)
        for i in range(steps_per_epoch):
            if i < step % steps_per_epoch:  # a resumed epoch skips the steps it took
                for _ in range(accum):
                    next(batches)
                continue
            optimizer.zero_grad(set_to_none=True)
            # The step's loss: the micro-batches' losses, each divided by their number, summed;
            # DDP reduces the gradients in the last micro-batch's backward only.
            loss = None
            for a in range(accum):
                t_wait = time.perf_counter()
                inputs, targets = next(batches)
                waited += time.perf_counter() - t_wait
                last = a + 1 == accum
                with contextlib.ExitStack() as scope:
                    if world > 1 and not last:
                        scope.enter_context(net.no_sync())
                    with torch.autocast("cpu", dtype=amp_dtype or torch.bfloat16,
                                        enabled=amp_dtype is not None):
                        micro = task.loss(net, inputs, targets)
                    if accum > 1:
                        micro = micro * (1.0 / accum)
                    scaler.scale(micro).backward()
                loss = micro.detach() if loss is None else loss + micro.detach()
                if args.compiler_opt and not last:
                    torch.mark_step()
            if args.clip_grad:
                scaler.unscale_(optimizer)  # clip the true gradients
                nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
            scaler.step(optimizer)  # skipped in the graph where a gradient is not finite
            if scaler.is_enabled():
                skipped = skipped + scaler.found_inf(optimizer)
                scaler.update(static_scale)
            scheduler.step()
            torch.mark_step()
            step += 1
            if step % args.log_interval == 0 or step == total:
                # Every rank reads the loss (the mean over ranks); rank 0 prints it.
                value = loss.detach().clone()
                dist.all_reduce(value, op=dist.ReduceOp.AVG)
                value = value.item()
                steps_done = args.log_interval if step % args.log_interval == 0 else (
                    step % args.log_interval)
                ms = (time.perf_counter() - t0) * 1e3 / steps_done
                wait_ms = waited * 1e3 / steps_done
                t0, waited = time.perf_counter(), 0.0
                scale_text = ""
                if scaler.is_enabled():
                    n_skipped = round(skipped.item())
                    skipped, skipped_total = torch.zeros(()), skipped_total + n_skipped
                    scale_text = f"  scale {scaler.get_scale():g}  skipped {n_skipped}"
                if rank == 0:
                    lr = optimizer.param_groups[0]["lr"]
                    rate = args.batch_size * accum * 1e3 / ms
                    peak = torch.debug.memory_stats()["peak_bytes"] / 2**20
                    print(f"step {step:5d}  epoch {epoch}  loss {value:.6f}  lr {lr:.3e}  "
                          f"{ms:.1f} ms/step  {rate:.1f} samples/s  data wait {wait_ms:.1f} ms  "
                          f"peak {peak:.0f} MB{scale_text}", flush=True)
                    if log:
                        log.writerow(["train", step, epoch + 1] +
                                     [_g(v) for v in (value, lr, rate, ms, wait_ms, peak)] +
                                     ["", "", ""])
            if step == total:
                break
            # As the C++ trainers: every --eval-every steps, or at each epoch's end; the end's
            # evaluation comes after the loop.
            if (args.eval_every and step % args.eval_every == 0) or (
                    not args.eval_every and i + 1 == steps_per_epoch):
                results = _evaluate(task, model, step, steps_per_epoch, log, rank, amp_dtype)
                best_accuracy = max(best_accuracy, _accuracy(results, best_accuracy))
                t0 = time.perf_counter()
            if args.save_dir and args.save_every and step % args.save_every == 0:
                _save(task, args, optimizer, scheduler, scaler, step, steps_per_epoch,
                      best_accuracy, rank)
    if scaler.is_enabled() and rank == 0:
        print(f"loss scaler: scale {scaler.get_scale():g} at the end, {skipped_total} of "
              f"{step - first_step} steps skipped", flush=True)
    results = _evaluate(task, model, step, steps_per_epoch, log, rank, amp_dtype)
    best_accuracy = max(best_accuracy, _accuracy(results, best_accuracy))
    torch.set_mode("eager")
    if args.save_dir:
        _save(task, args, optimizer, scheduler, scaler, step, steps_per_epoch, best_accuracy,
              rank)
    model.eval()
    if log:
        log_file.close()
    if args.plot and rank == 0:
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                              "plot_log.sh")
        subprocess.run(["bash", script, csv_path, args.plot], check=True)
    return results
