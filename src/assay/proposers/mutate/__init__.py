"""The ``mutate`` proposer's operators: built-in edits, no LLM (the offline default).

``mutate(files, layer=, rng=)`` picks one file and one operator suited to its kind and the layer and returns
a ``Mutation`` (path, whole new text, one-line description, operator name), or None when nothing applies.

- Python (``.py``, through ``ast``; one node per call). Surface: a numeric constant (floats ×/÷ a small factor,
  ints ±1, rarely a sign flip; True/False flip), a comparison (< ↔ <=, > ↔ >=, == ↔ !=, is, in), an arithmetic
  operator (+ ↔ -, * ↔ /, ...), and ↔ or; never adds or removes statements. Core: swap two adjacent
  statements, delete one (never the last of its block, so blocks stay non-empty), duplicate one, negate an
  if-condition, swap if/else branches; grow a return with a term or a guarded case
  (:mod:`~assay.proposers.mutate.python_grow_ops`), combine two of a function's names
  (:mod:`~assay.proposers.mutate.python_combine_ops`). Architecture: reorder adjacent definitions, swap two
  call arguments, swap the operands of ``-``, ``/``, ``**``... or of a comparison, make a ``return`` give
  another value the function has.
  The edit is spliced into the original source and kept only if it parses to the mutated tree; otherwise the
  file is rewritten with ``ast.unparse``, which loses comments and formatting.
- Config (``.json``, ``.yaml``/``.yml``, ``.toml``). Surface: perturb a number, flip a boolean. Core: enum flip
  (another string seen under the same key name or in a sibling list), swap adjacent list items. Architecture: remove
  or duplicate a list item. JSON/YAML are rewritten whole (YAML loses comments); TOML is edited in place.
- Text (anything else, GrIPS-style). Surface: delete, swap or duplicate a phrase. Core: move a sentence or list
  item within its paragraph, repeat an instruction as a reminder at the end. Architecture: swap neighbouring
  paragraphs or sections. Frontmatter, headings, code fences and tables are kept intact.
- Few-shot examples (text files with paragraphs made only of ``Label: value`` lines; the pool is an artifact
  text file named ``pool.txt``, ``*-pool.md``, ...). Surface: ``fewshot.swap`` (replace an example with one from
  the pool), ``fewshot.reorder``. Core: ``fewshot.add`` (from the pool), ``fewshot.drop`` (never the last).
  Pool files themselves are never mutated.
"""

from assay.proposers.mutate.base import Mutation, Operator
from assay.proposers.mutate.engine import OPERATORS, file_kind, mutate, operators_for

__all__ = ["OPERATORS", "Mutation", "Operator", "file_kind", "mutate", "operators_for"]
