"""Terminal tables (rich) and machine output (CSV, JSON) for result rows."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table


@dataclass(frozen=True, slots=True)
class Column:
    """A table column: header, how to get its text from a row, and its alignment."""

    header: str
    text: Callable[[Any], str]
    justify: str = "right"
    no_wrap: bool = False


def render_table(rows: Sequence[Any], columns: Sequence[Column], *, title: str | None = None,
                 caption: str | None = None, console: Console | None = None,
                 highlight: Callable[[Any], bool] | None = None) -> None:
    table = Table(title=title, caption=caption, header_style="bold", show_lines=False)
    for col in columns:
        table.add_column(col.header, justify=col.justify, no_wrap=col.no_wrap)  # type: ignore[arg-type]
    for row in rows:
        style = "bold green" if highlight is not None and highlight(row) else None
        table.add_row(*(col.text(row) for col in columns), style=style)
    (console or Console()).print(table)


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


def strict_values(value: Any) -> Any:
    """The value with every infinite float replaced by None (JSON null: unbounded, e.g. an MTTDL
    when no loss can happen). A NaN is a bug and is left for json.dumps to refuse."""
    if isinstance(value, float):
        return None if math.isinf(value) else value
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
