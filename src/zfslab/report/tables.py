"""Terminal tables (rich) and machine output (CSV, JSON) for result rows."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console as _RichConsole
from rich.table import Table


class Console(_RichConsole):
    """rich's Console, except when the reader closes the pipe (zfslab plan | head): rich then exits
    1, where print() raises BrokenPipeError, which cli.py ends quietly, as `ls | head` does."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def pipe_columns(default: int) -> int:
    """The width to lay text out for when stdout is no terminal: $COLUMNS when the user set it
    (40 to 1000: COLUMNS=80 zfslab capacity ... | less), else `default` (issue 33: capacity and
    layout printed 133 and 127 columns whatever COLUMNS said)."""
    import os
    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and 40 <= int(text) <= 1000 else default


def times_text(times: float) -> str:
    """How many times one thing fits in another, written as odds() writes counts (issue 33: '3.8e5x'
    and '511279.1x' beside '1 in 4.7×10⁶'): '3.4x', '1,200x', '5.1×10⁵x' is never written: from a
    million up a power of ten, '4.7×10⁶x'. Two significant figures from 10 up, as the inputs allow."""
    import math
    from zfslab.model.units import power_of_ten
    if not math.isfinite(times):
        return "-"
    if times < 10:
        return f"{times:.1f}x"
    digits = math.floor(math.log10(times))
    rounded = round(times, 1 - digits)
    return f"{power_of_ten(rounded)}x" if rounded >= 1e6 else f"{rounded:,.0f}x"


def text_width(console: Console, pipe_default: int | None) -> int | None:
    """The width to cut text to: the terminal's; in a pipe, $COLUMNS, else `pipe_default` (None: no cutting)."""
    if console.is_terminal:
        return console.width
    columns = pipe_columns(0)
    return columns or pipe_default


@dataclass(frozen=True, slots=True)
class Column:
    """A table column: header, how to get its text from a row, and its alignment."""

    header: str
    text: Callable[[Any], str]
    justify: str = "right"
    no_wrap: bool = False


def render_table(rows: Sequence[Any], columns: Sequence[Column], *, title: str | None = None,
                 caption: str | None = None, console: Console | None = None,
                 highlight: Callable[[Any], bool] | None = None, compact: bool = False) -> None:
    """compact: no borders, two spaces between columns (a column's border costs 3)."""
    table = Table(title=title, caption=caption, header_style="bold", show_lines=False,
                  **({"box": None} if compact else {}))
    for col in columns:
        table.add_column(col.header, justify=col.justify, no_wrap=col.no_wrap)  # type: ignore[arg-type]
    for row in rows:
        style = "bold green" if highlight is not None and highlight(row) else None
        table.add_row(*(col.text(row) for col in columns), style=style)
    (console or Console()).print(table)


# the space between a number and its unit ("2.12 MB", "66.0 %") never becomes a line break
# the spaces that must not break a line: between a number and its unit, and inside odds ("1 in 2,800",
# whose count alone on the next line reads as a stray number)
NUMBER_AND_UNIT = re.compile(r"(?<=\d) (?=(?:[KMGTPE]i?B|B)\b|%)|(?<=\b1) (?=in \d)|(?<=\b1 in) (?=\d)")


def wrapped_lines(text: str, width: int | None, *, indent: int = 2) -> list[str]:
    """One line of prose cut to `width` between words (never inside a number, nor between a
    number and its unit); each continuation indented so it reads as part of the line above, not
    as a new row. A no-break space (U+00A0) holds two words together ("4K 33.3%") and comes out
    as a space. width None: the line whole (a pipe, a file)."""
    if width is None:
        return [text.replace("\u00a0", " ")]
    lines = textwrap.wrap(NUMBER_AND_UNIT.sub("\u00a0", text), width=width, subsequent_indent=" " * indent,
                          break_long_words=False, break_on_hyphens=False) or [""]
    return [line.replace("\u00a0", " ") for line in lines]


PIPE_PROSE_WIDTH = 100  # prose in a pipe or a file (a log, the README): readable lines; tables stay whole


def print_wrapped(console: Console, text: str, *, indent: int = 2) -> None:
    """print `text` to the console as wrapped_lines cuts it to the terminal's width (100 in a pipe)."""
    for line in wrapped_lines(text, text_width(console, PIPE_PROSE_WIDTH), indent=indent):
        console.print(line, markup=False, soft_wrap=True)


def print_row_and_note(console: Console, row: str, note: str, *, indent: int = 4) -> None:
    """A table row with its note beside it when both fit the console, else the note on the lines
    below, indented: the row's numbers stay on one line and keep their columns."""
    width = text_width(console, None)
    if not note or width is None or len(row) + 2 + len(note) <= width:
        console.print(f"{row}  {note}".rstrip(), markup=False, soft_wrap=True)
        return
    console.print(row, markup=False, soft_wrap=True)
    print_wrapped(console, " " * indent + note, indent=indent)


def to_csv(records: Sequence[dict]) -> str:
    """CSV with a header; nested values as strict JSON, unbounded numbers as empty cells."""
    if not records:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0].keys()), lineterminator="\n")
    writer.writeheader()
    for r in records:
        row = strict_values(r)
        writer.writerow({k: dumps(v) if isinstance(v, (dict, list)) else ("" if v is None else v) for k, v in row.items()})
    return out.getvalue()


SIGNIFICANT_DIGITS = 12  # past any input's precision; drops binary noise: 616.0000000000001 -> 616.0


def strict_values(value: Any) -> Any:
    """The value with every infinite float replaced by None (JSON null: unbounded, e.g. an MTTDL
    when no loss can happen) and every other rounded to SIGNIFICANT_DIGITS (issue 33: plan --json
    held 72 floats like 9.999999999999999e-05). A NaN is a bug and is left for json.dumps to refuse."""
    if isinstance(value, float):
        return None if math.isinf(value) else value if math.isnan(value) else float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    if isinstance(value, dict):
        return {k: strict_values(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_values(v) for v in value]
    return value


def dumps(value: Any, **kw: Any) -> str:
    """Strict JSON (RFC 8259): no NaN or Infinity, which strict parsers reject."""
    return json.dumps(strict_values(value), allow_nan=False, **kw)


def to_json(value: Any) -> str:
    return dumps(value, indent=2, sort_keys=False)
