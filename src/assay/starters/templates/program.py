"""A placeholder program written by `assay init` in an empty folder: replace it with yours.

It reads its input from the command line (or standard input) and prints it back in capitals.
"""

import sys

text = " ".join(sys.argv[1:]) or sys.stdin.read()
print(text.strip().upper())
