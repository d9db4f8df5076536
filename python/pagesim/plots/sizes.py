"""The two widths a paper figure is drawn at: a page-wide figure (7 in, a two-column paper's
figure*) and a column figure (3.3 in). Every figure of `pagesim plot` is written at both, so a
paper takes either without scaling its text: NAME.{fmt} is the page size, NAME_column.{fmt}
the column size. Fonts are the sizes they print at (pt). Plain values, no state."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Size:
    name: str
    width_in: float  # figure width as printed (in)
    font: float  # ticks, legends (pt); axis labels one point larger
    suffix: str  # appended to a figure's file stem

    @property
    def label_font(self) -> float:
        return self.font + 1

    @property
    def narrow(self) -> bool:
        """Whether panels go in a grid and legends above, not beside (a column has no room)."""
        return self.width_in < 5


PAGE = Size("page", 7.0, 7.0, "")
COLUMN = Size("column", 3.3, 6.0, "_column")
SIZES = {"page": PAGE, "column": COLUMN}
