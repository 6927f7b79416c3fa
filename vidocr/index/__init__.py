"""The subtitle search index: a library build (walk, extract, store) and search over one SQLite file.

``build_index(db, libraries, BuildOptions(...))`` brings the index up to date; ``open_index(db, readonly=True)``
plus ``search(conn, query, SearchOptions(...))`` answers queries (safe while a build writes). The full-text scheme
for Chinese, Japanese and English is explained in :mod:`vidocr.index.text`.
"""

from vidocr.index.build import BuildOptions, BuildProgress, BuildReport, build_index
from vidocr.index.db import SCHEMA_VERSION, open_index
from vidocr.index.search import Hit, IndexStatus, SearchOptions, SearchResult, index_status, search

__all__ = [
    "SCHEMA_VERSION",
    "BuildOptions",
    "BuildProgress",
    "BuildReport",
    "Hit",
    "IndexStatus",
    "SearchOptions",
    "SearchResult",
    "build_index",
    "index_status",
    "open_index",
    "search",
]
