"""Trains an MLP on Fashion-MNIST with SGD (momentum, weight decay) and a warmup + cosine
schedule: the C++ fmnist_mlp (examples/fmnist_mlp.cpp) from Python, with its flags, its model
drawn as it draws it and its evaluation, so that for the same flags the two write the same
checkpoint, bit for bit, and either resumes the other's. Eager, or lazy with --compiler-opt;
`lt-launch -n 2 -- python3 train_fmnist_mlp.py` trains on 2 ranks."""
import argparse

import lazytrain as torch
import trainer

nn, F = torch.nn, torch.nn.functional


class Mlp(nn.Sequential):
    """sizes = [in, hidden..., out]: Linear layers with ReLU (and dropout) between them, their
    weights Kaiming-uniform for ReLU, their biases PyTorch's U(+-1/sqrt(fan_in)); named as the
    C++ Mlp's (0.weight, 0.bias, 2.weight...)."""

    def __init__(self, sizes, dropout=0.0):
        layers = []
        for i in range(len(sizes) - 1):
            fc = nn.Linear(sizes[i], sizes[i + 1])
            nn.init.kaiming_uniform_(fc.weight, a=0, mode="fan_in", nonlinearity="relu")
            layers.append(fc)
            if i + 2 < len(sizes):
                layers.append(nn.ReLU())
                if dropout > 0:
                    layers.append(nn.Dropout(dropout))
        super().__init__(*layers)


class MlpTask(trainer.Task):
    name = "fmnist_mlp"

    def __init__(self, args):
        torch.manual_seed(args.seed)
        self.model = Mlp([784, *args.hidden, 10], args.dropout)
        self.train_data = torch.utils.data.fashion_mnist(
            train=True, normalize=args.normalize, limit=trainer.limit(args.train_limit))
        self.test_data = torch.utils.data.fashion_mnist(
            train=False, normalize=args.normalize, limit=trainer.limit(args.test_limit))

    def make_optimizer(self, args):
        decay, no_decay = trainer.split_for_weight_decay(self.model)
        return torch.optim.SGD([{"params": decay, "weight_decay": args.weight_decay},
                                {"params": no_decay, "weight_decay": 0.0}],
                               lr=args.lr, momentum=args.momentum)

    def evaluate(self, model):
        """Mean loss and accuracy over the test set in chunks of 500, as the C++ trainers."""
        loader = torch.utils.data.DataLoader(self.test_data, batch_size=500)
        loss = hits = total = 0.0
        for images, labels in loader:
            logits = model(images)
            chunk_loss = F.cross_entropy(logits, labels) * labels.numel()
            chunk_hits = (logits.argmax(dim=1) == labels).long().sum()
            torch.mark_step()  # lazy: the chunk's one graph
            loss += chunk_loss.item()
            hits += float(chunk_hits.item())
            total += float(labels.numel())
        return {"loss": loss / max(total, 1), "accuracy": hits / max(total, 1)}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    trainer.add_train_flags(p, epochs=5, batch_size=64, lr=0.05, weight_decay=0.0,
                            warmup_steps=0, momentum=0.9)
    p.add_argument("--hidden", type=int, nargs="+", default=[128],
                   help="hidden layer sizes, e.g. --hidden 256 128")
    p.add_argument("--dropout", type=float, default=0.0,
                   help="dropout after each hidden layer (0: none)")
    p.add_argument("--normalize", action=argparse.BooleanOptionalAction, default=True,
                   help="standardize pixels with the training-set mean and std (default), or "
                        "only scale them to [0,1]")
    args = p.parse_args()
    torch.distributed.init_process_group()
    trainer.train(MlpTask(args), args)


if __name__ == "__main__":
    main()
