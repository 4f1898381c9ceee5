"""The analysis: five stages from a crawl database to a review queue of internal links.

load.py (candidate pages, resolved link graph) -> embed.py (vectors, cached) -> index.py (FAISS
neighbours) -> candidates.py (subtract existing links, similarity band) -> score.py + anchors.py
(rank, cap, anchor) -> export.py (tables and CSV). pipeline.py runs them in order.
"""
