"""Student-controlled text made safe for each place it is written to.

Everything a submission controls (answers quoted by a veto, exception messages, file and folder
names, comments on changed lines) reaches reports and terminals. Each output format has its own
hazards, so each has its own function here, and the writers use nothing else:

- `terminal`: control characters (ESC starts CSI colour codes and OSC sequences that set the window
  title or the clipboard; C1 codes do the same in one byte; BEL, backspace and CR rewrite what is
  shown) and bidirectional overrides are shown as visible `\\xNN` / `\\uNNNN` escapes. Rich markup
  is never interpreted because grader/terminal.py prints student text only as `rich.text.Text`.
- `xml`: characters XML 1.0 forbids (one `chr(1)` makes a whole JUnit file unreadable).
- `markdown`: HTML (`<img>`, `<a href>`, `</details>`) and Markdown syntax (links, images, code
  spans, table pipes) are escaped, line breaks and `\\r` flattened, so text stays text in a table cell.
- `csv_cell`: a cell a spreadsheet would run as a formula (leading `= + - @`, tab, CR) gets a `'`.
- `truncate`: long text is cut with a marker that says how much there was.
"""
from __future__ import annotations

import html
import re

TRUNCATED = "…［已截断：共 {total} 字，只显示前 {shown} 字］"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_MD_SYNTAX = re.compile(r"[\\`*_\[\]!|~$]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _visible(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def truncate(text: str, limit: int) -> str:
    text = str(text)
    if len(text) <= limit:
        return text
    return text[:limit] + TRUNCATED.format(total=len(text), shown=limit)


def terminal(text) -> str:
    """Text that cannot move the cursor, restyle the terminal, set its title or write the clipboard."""
    text = str(text).replace("\r\n", "\n")
    return _CONTROL.sub(lambda m: _visible(m[0]), text)


def xml(text) -> str:
    """Text that XML 1.0 can carry (ElementTree escapes `<`, `&` and quotes itself)."""
    return _XML_ILLEGAL.sub(lambda m: _visible(m[0]), str(text))


def markdown(text, limit: int | None = None) -> str:
    """One line of plain text for a Markdown table cell or an HTML element's content."""
    text = terminal(text)
    if limit is not None:
        text = truncate(text, limit)
    text = html.escape(text, quote=True)                   # no tag, attribute or entity survives
    text = _MD_SYNTAX.sub(lambda m: "\\" + m[0], text)     # no link, image, code span, emphasis or cell break
    return re.sub(r"\s*\n\s*", " ", text).replace("\t", " ")


def csv_cell(value):
    """A CSV value a spreadsheet shows as text, never evaluates."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
