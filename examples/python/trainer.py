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


def add_train_flags(p, epochs, batch_size, lr, weight_decay, warmup_steps, momentum=None):
    p.add_argument("--compiler-opt", action="store_true", help="lazy mode: compiled steps")
    p.add_argument("--epochs", type=int, default=epochs, help="passes over the training set")
    p.add_argument("--max-steps", type=int, default=0, help="stop after N steps (0: all)")
    p.add_argument("--accum-steps", type=int, default=1,
                   help="micro-batches accumulated per optimizer step (a mark_step after each "
                        "in lazy mode)")
    p.add_argument("--batch-size", type=int, default=batch_size,
                   help="examples per step, over all ranks")
    p.add_argument("--lr", type=float, default=lr, help="peak learning rate")
    p.add_argument("--lrf", type=float, default=0.01, help="the cosine's final lr is lr * lrf")
    p.add_argument("--warmup-steps", type=int, default=warmup_steps,
                   help="linear warmup from 0 to --lr over N steps")
    p.add_argument("--weight-decay", type=float, default=weight_decay)
    if momentum is not None:
        p.add_argument("--momentum", type=float, default=momentum, help="SGD momentum")
    p.add_argument("--clip-grad", type=float, default=0.0,
                   help="clip the global gradient norm to N (0: off)")
    p.add_argument("--seed", type=int, default=0,
                   help="seeds initialization, dropout and the data order")
    p.add_argument("--train-limit", type=int, default=0, help="the first N training examples")
    p.add_argument("--test-limit", type=int, default=0, help="the first N test examples")
    p.add_argument("--log-interval", type=int, default=50, help="steps between progress lines")
    p.add_argument("--log-csv", default="", help="a CSV row per logged step and evaluation")
    p.add_argument("--eval-every", type=int, default=0,
                   help="evaluate every N steps too (0: only at the end, which always runs)")
    p.add_argument("--plot", default="",
                   help="FILE.png: the CSV log drawn with gnuplot at the end (scripts/plot_log.sh)")
    p.add_argument("--weights", default="",
                   help="start from these model weights (non-strict: what matches is copied, "
                        "the rest printed)")
    p.add_argument("--save-dir", default="", help="rank 0's checkpoint at the end, here")
    p.add_argument("--resume", default="", help="continue from a --save-dir checkpoint")
    p.add_argument("--amp", choices=["off", "bf16", "fp16"], default="off",
                   help="autocast around forward and loss, in bf16 or fp16")
    p.add_argument("--loss-scale", type=_loss_scale, default=None,
                   help="loss scaling with the in-graph inf check and skip: dynamic, off, or a "
                        "static scale N > 0 (default: dynamic with --amp fp16, else off)")
    p.add_argument("--num-workers", type=int, default=0,
                   help="loader threads that make the next batches while the step runs")


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


def _schedule(optimizer, args, total_steps):
    """Warmup to args.lr, then a cosine to args.lr * args.lrf at the last step."""
    def factor(step):
        if step < args.warmup_steps:
            return (step + 1) / args.warmup_steps
        span = max(total_steps - args.warmup_steps - 1, 1)
        t = min((step - args.warmup_steps) / span, 1.0)
        return args.lrf + (1 - args.lrf) * 0.5 * (1 + math.cos(math.pi * t))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def load_weights(model, path):
    """The model's tensors found in path (a trainer checkpoint's "model", or a state dict with or
    without the "model." prefix), copied; returns what did not match."""
    state = torch.load(path)
    if isinstance(state, dict) and isinstance(state.get("model"), dict):
        state = state["model"]
    state = {k[len("model."):] if k.startswith("model.") else k: v for k, v in state.items()}
    own = model.state_dict()
    mismatched = [k for k, v in state.items()
                  if k in own and tuple(v.shape) != tuple(own[k].shape)]
    missing, unexpected = model.load_state_dict(
        {k: v for k, v in state.items() if k not in mismatched}, strict=False)
    return missing, unexpected, mismatched


def _evaluate(task, model, step, steps_per_epoch, log, rank):
    """One evaluation in eager mode and eval mode: printed on rank 0 and logged as an eval row."""
    mode = torch.get_mode()
    torch.set_mode("eager")
    model.eval()
    with torch.no_grad():
        results = task.evaluate(model)
    model.train()
    torch.set_mode(mode)
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
    # The schedule spans every epoch; --max-steps only stops early, so that a run stopped and
    # resumed follows the run that did not stop.
    scheduler = _schedule(optimizer, args, args.epochs * steps_per_epoch)
    scaler, static_scale = _make_scaler(args)
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.amp)
    total = args.epochs * steps_per_epoch
    if args.max_steps:
        total = min(total, args.max_steps)
    step = 0
    if args.weights and not args.resume:
        missing, unexpected, mismatched = load_weights(model, args.weights)
        if rank == 0:
            print(f"--weights {args.weights}: missing {missing}, unexpected {unexpected}, "
                  f"shape mismatches {mismatched}", flush=True)
    if args.resume:
        state = torch.load(args.resume)
        if state.get("accum_steps", 1) != accum:  # the data position depends on it
            raise SystemExit(f"--resume {args.resume}: written with --accum-steps "
                             f"{state.get('accum_steps', 1)}, this run has {accum}")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        had = state.get("loss_scale", "off")
        if had != loss_scale_mode(args):  # the scaler's state goes with its mode
            raise SystemExit(f"--resume {args.resume}: written with --loss-scale {had}, resumed "
                             f"with --loss-scale {loss_scale_mode(args)}")
        scaler.load_state_dict(state.get("scaler", {}))
        step = int(state["step"])
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
            if args.eval_every and step % args.eval_every == 0 and step != total:
                _evaluate(task, model, step, steps_per_epoch, log, rank)
                t0 = time.perf_counter()
            if step == total:
                break
    torch.set_mode("eager")
    if args.save_dir and rank == 0:
        os.makedirs(args.save_dir, exist_ok=True)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "scaler": scaler.state_dict(),
                    "loss_scale": loss_scale_mode(args), "step": step, "accum_steps": accum},
                   os.path.join(args.save_dir, f"{task.name}.pt"))
    if scaler.is_enabled() and rank == 0:
        print(f"loss scaler: scale {scaler.get_scale():g} at the end, {skipped_total} of "
              f"{step - first_step} steps skipped", flush=True)
    results = _evaluate(task, model, step, steps_per_epoch, log, rank)
    model.eval()
    if log:
        log_file.close()
    if args.plot and rank == 0:
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                              "plot_log.sh")
        subprocess.run(["bash", script, csv_path, args.plot], check=True)
    return results
