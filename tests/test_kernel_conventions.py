"""Every numba kernel in efgkit follows docs/architecture.md's conventions: compiled with
``cache=True`` (a first run's compilation is kept) and ``no_cfunc_wrapper=True`` (efgkit never
takes a kernel's address; the wrapper would be compiled for nothing), documented with a
docstring (the arrays' shapes and dtypes), and at most ``MAX_KERNEL_LINES`` lines long, from
its ``def`` line through its last line (one screen: STYLE.md)."""

import ast
from pathlib import Path

import efgkit

PACKAGE = Path(efgkit.__file__).parent
MAX_KERNEL_LINES = 60


def _kernels_in(source: str, name: str):
    """(name:function, njit options, docstring, lines from ``def`` to the end) of each kernel
    defined in the Python ``source``."""
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = ast.unparse(call.func if call else decorator)
            if target in ("numba.njit", "njit"):
                options = {k.arg: ast.unparse(k.value) for k in call.keywords} if call else {}
                lines = node.end_lineno - node.lineno + 1
                yield f"{name}:{node.name}", options, ast.get_docstring(node), lines


def _kernels():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield from _kernels_in(path.read_text(), str(path.relative_to(PACKAGE)))


def _too_long(kernels):
    return [(name, lines) for name, _, _, lines in kernels if lines > MAX_KERNEL_LINES]


def test_every_kernel_is_cached_without_a_cfunc_wrapper_and_documented():
    kernels = list(_kernels())
    assert len(kernels) > 100  # the scan finds the kernels
    problems = [name for name, options, docstring, _ in kernels if not docstring
                or options.get("cache") != "True" or options.get("no_cfunc_wrapper") != "True"]
    assert problems == []


def test_every_kernel_fits_on_one_screen():
    assert _too_long(_kernels()) == []


def test_the_length_check_flags_a_long_kernel_and_counts_from_def_to_end():
    body = "".join(f"    x += {i}\n" for i in range(MAX_KERNEL_LINES - 3))
    kernel = ('@numba.njit(cache=True, no_cfunc_wrapper=True,\n            inline="always")\n'
              'def kernel(x):\n    """Doc."""\n' + body + "    return x\n")
    assert _too_long(_kernels_in(kernel, "fits.py")) == []  # decorator lines do not count
    assert _too_long(_kernels_in(kernel.replace("return x", "x += 1\n    return x"), "long.py")) == [
        ("long.py:kernel", MAX_KERNEL_LINES + 1)]
