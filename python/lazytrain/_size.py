"""torch.Size: a tuple of ints with PyTorch's repr and numel()."""


class Size(tuple):
    def __repr__(self):
        return f"lazytrain.Size([{', '.join(str(d) for d in self)}])"

    def numel(self):
        n = 1
        for d in self:
            n *= d
        return n

    def __getitem__(self, key):
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out
