"""Every numba kernel in efgkit follows docs/architecture.md's conventions: compiled with
``cache=True`` (a first run's compilation is kept) and ``no_cfunc_wrapper=True`` (efgkit never
takes a kernel's address; the wrapper would be compiled for nothing), and documented with a
docstring (the arrays' shapes and dtypes)."""

import ast
from pathlib import Path

import efgkit

PACKAGE = Path(efgkit.__file__).parent


def _kernels():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                call = decorator if isinstance(decorator, ast.Call) else None
                target = ast.unparse(call.func if call else decorator)
                if target in ("numba.njit", "njit"):
                    options = {k.arg: ast.unparse(k.value) for k in call.keywords} if call else {}
                    yield f"{path.relative_to(PACKAGE)}:{node.name}", options, ast.get_docstring(node)


def test_every_kernel_is_cached_without_a_cfunc_wrapper_and_documented():
    kernels = list(_kernels())
    assert len(kernels) > 100  # the scan finds the kernels
    problems = [name for name, options, docstring in kernels if not docstring
                or options.get("cache") != "True" or options.get("no_cfunc_wrapper") != "True"]
    assert problems == []
