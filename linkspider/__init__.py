"""linkspider: crawl a site into SQLite and recommend the internal links it is missing."""

__version__ = "0.1.0"
