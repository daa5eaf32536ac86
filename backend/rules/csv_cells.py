"""Text cells of a CSV file that a spreadsheet would run as a formula (CSV injection,
CWE-1236): a text beginning with one of :data:`FORMULA_START`, as OWASP lists them. Written
with a leading ``'``, a spreadsheet shows such a cell as text.

The one rule for every CSV the console writes: a table's export (``services.exports``, on
request, vectorised with :data:`FORMULA_PATTERN`) and the audit log's (always: it is a report
to read, never a file to import again).
"""

from __future__ import annotations

import re

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
FORMULA_START_TEXT = "=, +, -, @, a tab or a carriage return"  # the same, in words
# The same, as a regular expression over a whole cell (pyarrow's match_substring_regex).
FORMULA_PATTERN = "^[" + re.escape("".join(FORMULA_START)) + "]"
QUOTE = "'"


def inert_cell(value: str) -> str:
    """``value`` as a CSV cell a spreadsheet shows as text: with a leading ``'`` when it
    would run as a formula, else as it is."""
    return QUOTE + value if value.startswith(FORMULA_START) else value
