"""What the generators of docs/ pages share (xlair.tools.status, xlair.tools.errors)."""
from __future__ import annotations

import argparse
import pathlib
import sys


def page_args(doc: str) -> argparse.ArgumentParser:
    """The command line of a page generator: `-o PATH` (default `-`, standard output)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("-o", "--output", default="-")
    return ap


def write_page(text: str, output: str) -> None:
    if output == "-":
        sys.stdout.write(text)
    else:
        pathlib.Path(output).write_text(text)
