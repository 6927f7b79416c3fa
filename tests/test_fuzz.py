"""The fuzz tier: seeded mutants of a small clip in six containers, each extracted by a `vidocr extract` process of
its own under a time limit and an address-space cap. Every mutant must end in a valid output or one error line:
no traceback, no signal, no hang, no temp file, nothing that does not parse. ``bench/fuzz.py`` runs more."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hostile_media import CONTAINERS, fuzz

MUTANTS = 60


@pytest.mark.slow
def test_sixty_mutants_in_six_containers_end_in_an_output_or_one_error_line(tmp_path: Path) -> None:
    results = fuzz(tmp_path, MUTANTS, seed=13, jobs=2, timeout_s=60.0, memory_bytes=2 << 30)
    assert len(results) == MUTANTS
    assert {r.name.rsplit("_", 1)[1].split(".")[0] for r in results} == set(CONTAINERS)
    bad = [r for r in results if r.outcome != "ok"]
    assert not bad, "\n".join(f"{r.name} ({r.mutation}): {r.outcome}: {r.detail}" for r in bad)
    counts = Counter("output" if r.code == 0 else "error line" for r in results)
    assert counts["output"] >= MUTANTS // 4  # most damage leaves something readable: the run really extracted
