"""torch.device and torch.cuda for scripts that pick a device: lazytrain runs on the CPU, so the
one device is "cpu" and CUDA is never available."""


class device:
    def __init__(self, type="cpu", index=None):  # noqa: A002 - PyTorch's argument name
        type = str(type)
        if type.split(":")[0] not in ("cpu", "lazytrain", "lazy"):
            raise ValueError(f"lazytrain runs on the CPU only, got device {type!r}")
        self.type, self.index = "cpu", None

    def __repr__(self):
        return "device(type='cpu')"

    def __str__(self):
        return "cpu"

    def __eq__(self, other):
        return str(other) == "cpu"

    def __hash__(self):
        return hash("cpu")


def check_device(d):
    """A device argument of to(): the CPU, else ValueError."""
    device(d)


class cuda:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def device_count():
        return 0

    @staticmethod
    def manual_seed(seed):
        """No CUDA generator to seed (scripts call it next to torch.manual_seed)."""

    manual_seed_all = manual_seed


class _Cudnn:
    """torch.backends.cudnn's switches, which scripts set; they change nothing here."""
    benchmark = False
    deterministic = False
    enabled = False


class backends:
    cudnn = _Cudnn()
