"""`scrapy audit`: crawl and analyse many sites, here or on Scrapyd servers, and compare them in one summary."""
