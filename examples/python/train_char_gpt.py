"""Trains a byte-level GPT (examples/python/models.py: 2 layers, d_model 128, 4 heads, context
64) on the fortune-cookie texts of Debian's `fortunes` package, split 90/10 by whole fortunes,
with AdamW (weight decay on matrices only), warmup + cosine and gradient clipping: the C++
char_gpt's recipe and flags from Python. Reports the validation loss in nats per byte against
the unigram entropy of the validation text, then samples from a prompt."""
import argparse
import math
import os

import numpy as np

import lazytrain as torch
import models
import trainer

F = torch.nn.functional


def load_fortunes(folder, seed, validation_fraction=0.1):
    """(train text, validation text): every plain-text fortune file (not the .dat indexes or
    the .u8 links) in name order, split at lines holding only "%", the fortunes shuffled with
    `seed` and the last tenth the validation text."""
    fortunes = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith((".dat", ".u8")) or os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            text = f.read()
        fortunes += [part for part in text.split(b"\n%\n") if part.strip()]
    if not fortunes:
        raise SystemExit(f"no fortunes in {folder} (apt-get install fortunes)")
    order = np.random.default_rng(seed).permutation(len(fortunes))
    cut = len(fortunes) - int(len(fortunes) * validation_fraction)
    join = lambda idx: b"".join(fortunes[i] + b"\n%\n" for i in idx)  # noqa: E731
    return join(order[:cut]), join(order[cut:])


def byte_windows(text, context, limit):
    """inputs [N, context] and next-byte targets [N, context], int64."""
    data = np.frombuffer(text, np.uint8).astype(np.int64)
    n = (len(data) - 1) // context
    if limit:
        n = min(n, limit)
    x = data[:n * context].reshape(n, context)
    y = data[1:n * context + 1].reshape(n, context)
    return torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))


def unigram_entropy(text):
    counts = np.bincount(np.frombuffer(text, np.uint8), minlength=256)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


class GptTask(trainer.Task):
    name = "char_gpt"

    def __init__(self, args):
        torch.manual_seed(args.seed)
        _, Gpt = models.models(torch)
        self.model = Gpt(dropout=args.dropout)
        train_text, self.validation_text = load_fortunes(args.data_dir, args.seed)
        self.train_data = byte_windows(train_text, self.model.context,
                                       trainer.limit(args.train_limit))
        self.test_data = byte_windows(self.validation_text, self.model.context,
                                      trainer.limit(args.test_limit))

    def make_optimizer(self, args):
        decay, no_decay = trainer.split_for_weight_decay(self.model)
        return torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                                  {"params": no_decay, "weight_decay": 0.0}], lr=args.lr)

    def loss(self, model, inputs, targets):
        return F.cross_entropy(model(inputs).view(-1, 256), targets.reshape(-1))

    def evaluate(self, model):
        total = count = 0.0
        for x, y in torch.utils.data.DataLoader(self.test_data, batch_size=64):
            loss = self.loss(model, x, y)
            torch.mark_step()  # lazy: the chunk's graph
            total += loss.item() * y.numel()
            count += y.numel()
        loss = total / max(count, 1)
        return {"validation_loss_nats_per_byte": loss,
                "over_unigram_entropy": loss / unigram_entropy(self.validation_text)}


def sample(model, prompt, n, temperature, seed, lazy):
    """n bytes after `prompt`: greedy (temperature 0) or drawn from softmax(logits / T). The
    model sees a full context each time (the last bytes, padded with spaces after them), so
    lazy mode compiles one graph for every step."""
    ctx = model.context
    rng = np.random.default_rng(seed)
    text = bytearray(prompt.encode() or b"\n")
    start = len(text)
    with torch.no_grad(), (torch.lazy() if lazy else torch.eager()):
        for _ in range(n):
            window = list(text[-ctx:])
            ids = np.full((1, ctx), ord(" "), np.int64)
            ids[0, :len(window)] = window
            with torch.eager():  # data for the graph, not a constant in it
                x = torch.from_numpy(ids)
            logits = model(x)
            torch.mark_step()
            row = logits[0, len(window) - 1].numpy().astype(np.float64)
            if temperature <= 0:
                nxt = int(row.argmax())
            else:
                p = np.exp((row - row.max()) / temperature)
                nxt = int(rng.choice(256, p=p / p.sum()))
            text.append(nxt)
    return bytes(text[start:]).decode("ascii", "backslashreplace")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    trainer.add_train_flags(p, epochs=4, batch_size=32, lr=3e-4, weight_decay=0.01,
                            warmup_steps=200)
    p.set_defaults(lrf=0.1, clip_grad=1.0, eval_every=1000, log_interval=100)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--prompt", default="The ")
    p.add_argument("--sample-bytes", type=int, default=200, help="bytes sampled at the end")
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--data-dir", default="/usr/share/games/fortunes")
    args = p.parse_args()
    task = GptTask(args)
    results = trainer.train(task, args)
    if torch.distributed.get_rank() != 0 or args.sample_bytes <= 0:
        return
    loss = results["validation_loss_nats_per_byte"]
    print(f"validation loss {loss:.4f} nats/byte ({loss / math.log(2):.3f} bits/byte) = "
          f"{results['over_unigram_entropy']:.3f} x the unigram entropy")
    task.model.eval()
    for t in (0.0, args.temperature):
        text = sample(task.model, args.prompt, args.sample_bytes, t, args.seed, args.compiler_opt)
        print(f"sample, temperature {t}, after {args.prompt!r}:\n{args.prompt}{text}")


if __name__ == "__main__":
    main()
