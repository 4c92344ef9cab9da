"""Terminal tables (rich) and machine output (CSV, JSON) for result rows."""

from __future__ import annotations

import csv
import io
import json
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
    if not records:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0].keys()), lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow({k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in r.items()})
    return out.getvalue()


def to_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=False)
