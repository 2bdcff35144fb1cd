"""Turn a title into a URL slug. This is the artifact: `assay evolve` may edit this file."""

import sys


def slugify(title: str) -> str:
    words = title.strip().lower().split(" ")
    return "-".join(w for w in words if w)


if __name__ == "__main__":
    print(slugify(" ".join(sys.argv[1:])))
