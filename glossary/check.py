"""Validate term files: ``python -m glossary.check [FILE ...] [--known-ids FILE]``.

With no files, checks every file in glossary/terms. ``--known-ids`` names a text
file of ids (one per line) that count as existing for ``related`` links.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from glossary.loader import TERMS_DIR, TermFileError, check_collection, parse_term_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--known-ids", type=Path)
    args = parser.parse_args(argv)
    all_paths = sorted(TERMS_DIR.glob("*.md"))
    targets = {p.resolve() for p in (args.files or all_paths)}
    known = []
    if args.known_ids:
        known = [line.split()[0] for line in args.known_ids.read_text().splitlines() if line.strip()]
    errors, terms = [], []
    for path in sorted({*all_paths, *targets}):
        try:
            terms.append(parse_term_file(path))
        except TermFileError as exc:
            if path.resolve() in targets:
                errors.append(str(exc))
    errors += [p for p in check_collection(terms, known) if any(str(t) in p for t in targets)]
    for line in errors:
        print(line)
    print(f"{len(targets)} file(s) checked, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
