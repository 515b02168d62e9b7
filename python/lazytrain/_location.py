"""The user's line: the innermost Python frame outside this package, as lazytrain's C++ errors
spell a location ("train.py:12")."""
import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.realpath(__file__))
_inside = {}  # filename -> whether it is the package's (realpath costs syscalls: once a file)


def _inside_package(filename):
    known = _inside.get(filename)
    if known is None:
        known = _inside[filename] = os.path.realpath(filename).startswith(_PACKAGE_DIR + os.sep)
    return known


def user_location():
    frame = sys._getframe(1)
    while frame is not None and _inside_package(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return "<lazytrain>"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
