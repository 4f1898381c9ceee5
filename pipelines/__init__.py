"""Item pipelines: where crawled pages become rows of the audit database."""
