"""``python -m efgkit``: the ``efgkit`` command."""

from efgkit.cli import main

main()
