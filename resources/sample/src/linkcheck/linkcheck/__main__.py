"""Command line: report invalid and duplicate links of the given files."""
import sys
from pathlib import Path

from .links import extract_links, is_valid_url


def main(argv):
    status = 0
    for name in argv:
        seen = set()
        for _text, url in extract_links(Path(name).read_text(encoding="utf-8")):
            if not is_valid_url(url):
                print(f"{name}: invalid {url}")
                status = 1
            elif url in seen:
                print(f"{name}: duplicate {url}")
            seen.add(url)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
