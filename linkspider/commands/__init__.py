"""linkspider's `scrapy` commands: `crawl` (Scrapy's, with argument checks and a summary) and `analyze`."""
