"""Element types under PyTorch's names. The codes are the C++ enum lt::DType's order."""


class dtype:
    __slots__ = ("_code", "_name", "is_floating_point", "itemsize")

    def __init__(self, code, name, is_floating_point, itemsize):
        self._code = code
        self._name = name
        self.is_floating_point = is_floating_point
        self.itemsize = itemsize

    def __repr__(self):
        return "lazytrain." + self._name

    def __reduce__(self):
        return self._name


bool = dtype(0, "bool", False, 1)  # noqa: A001 - PyTorch's name
int32 = dtype(1, "int32", False, 4)
int64 = dtype(2, "int64", False, 8)
float16 = dtype(3, "float16", True, 2)
bfloat16 = dtype(4, "bfloat16", True, 2)
float32 = dtype(5, "float32", True, 4)
float64 = dtype(6, "float64", True, 8)
# PyTorch's aliases.
int = int64  # noqa: A001
long = int64
half = float16
float = float32  # noqa: A001
double = float64

BY_CODE = [bool, int32, int64, float16, bfloat16, float32, float64]
# numpy's dtype names and PyTorch's; numpy has no bfloat16.
_FROM_NUMPY = {"bool": bool, "int32": int32, "int64": int64, "float16": float16,
               "float32": float32, "float64": float64}
_TO_NUMPY = {v: k for k, v in _FROM_NUMPY.items()}


def from_numpy_dtype(np_dtype):
    name = str(np_dtype)
    if name not in _FROM_NUMPY:
        raise TypeError(f"can't convert np.ndarray of type numpy.{name}. The only supported types "
                        "are: float64, float32, float16, int64, int32, and bool.")
    return _FROM_NUMPY[name]


def numpy_name(dt):
    return _TO_NUMPY.get(dt)

