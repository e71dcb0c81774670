"""Strip outputs and execution counts from notebooks before committing them.

    python notebooks/strip_outputs.py               # every notebooks/*.ipynb
    python notebooks/strip_outputs.py PATH.ipynb ...

``tests/test_notebooks.py`` fails on a notebook stored with outputs.
"""

import sys
from pathlib import Path

import nbformat


def strip(path: Path) -> bool:
    """Strip one notebook in place; True when it changed."""
    nb = nbformat.read(path, as_version=4)
    changed = False
    for cell in nb.cells:
        if cell.cell_type == "code":
            if cell.outputs or cell.execution_count is not None:
                cell.outputs, cell.execution_count, changed = [], None, True
            for key in ("execution", "collapsed", "scrolled"):
                if cell.metadata.pop(key, None) is not None:
                    changed = True
    if nb.metadata.pop("widgets", None) is not None:
        changed = True
    if changed:
        nbformat.write(nb, path)
    return changed


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    paths = [Path(a) for a in args] or sorted(Path(__file__).resolve().parent.glob("*.ipynb"))
    for p in paths:
        print(f"{'stripped' if strip(p) else 'clean   '} {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
