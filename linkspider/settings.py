"""Scrapy settings for linkspider: polite, robust defaults; override any of them with `-s NAME=VALUE`."""

from linkspider import __version__

BOT_NAME = "linkspider"
SPIDER_MODULES = ["linkspider.spiders"]
NEWSPIDER_MODULE = "linkspider.spiders"
COMMANDS_MODULE = "linkspider.commands"

USER_AGENT = f"linkspider/{__version__} (+https://github.com/linkspider/linkspider; internal-link audit)"
ROBOTSTXT_OBEY = True

# Politeness: AutoThrottle adapts the delay to the server's latency, a few requests in flight at most.
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.5
AUTOTHROTTLE_MAX_DELAY = 10.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 4.0
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
DOWNLOAD_TIMEOUT = 30

# Robustness: retry server errors and time-outs; cap what one response may cost.
RETRY_ENABLED = True
RETRY_TIMES = 2
RETRY_HTTP_CODES = [500, 502, 503, 504, 522, 524, 408, 429]
DOWNLOAD_MAXSIZE = 10 * 1024 * 1024
DOWNLOAD_WARNSIZE = 5 * 1024 * 1024

# Breadth-first order (the spider gives deeper pages a lower priority; FIFO within a priority),
# so that pages are reached along their shortest click path first.
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
# The spider tracks click depth itself (a redirect hop is not a click) and follows redirects itself.
SPIDER_MIDDLEWARES = {"scrapy.spidermiddlewares.depth.DepthMiddleware": None}
METAREFRESH_ENABLED = False

SQLITE_BATCH_SIZE = 200  # pages per transaction (the site spider sets its own SQLite pipeline)
# seconds a batch waits for another program's write (an analysis of the same database) to end: linkspider.db's
# BUSY_TIMEOUT_S, written out, since importing linkspider.db here would load sqlite-utils (0.1 s) at every `scrapy`
SQLITE_BUSY_TIMEOUT = 60.0
SQLITE_CLOSE_TIMEOUT = 600.0  # and how much longer the last batch and the crawl's close wait: they have no next batch

TELNETCONSOLE_ENABLED = False
EXTENSIONS = {"scrapy.extensions.remote_control.RemoteControl": None}  # no local control server per crawl
LOG_LEVEL = "INFO"
LOGSTATS_INTERVAL = 15.0
