"""``python -m vidocr``: the command line."""

from vidocr._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
