"""Reading the experiments' CSV result files into columns."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np


def load_csv(path: str | Path) -> dict[str, np.ndarray]:
    """Columns of a CSV file with a header: numeric columns as float arrays (empty → NaN),
    others as string arrays."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None:
            raise ValueError(f"{path}: empty file, no header")
        raw: dict[str, list[str]] = {name: [] for name in reader.fieldnames}
        for line, row in enumerate(reader, start=2):
            if None in row or any(v is None for v in row.values()):
                raise ValueError(f"{path}:{line}: row has {len(row)} fields, header has "
                                 f"{len(reader.fieldnames)}")
            for name in reader.fieldnames:
                raw[name].append(row[name])
    columns = {}
    for name, cells in raw.items():
        try:
            columns[name] = np.array([float(c) if c != "" else np.nan for c in cells])
        except ValueError:
            columns[name] = np.array(cells, dtype=str)
    return columns
