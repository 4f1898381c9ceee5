"""`python -m analysis DB ...`: the same as `scrapy analyze DB ...`."""

import sys

from analysis.cli import main

sys.exit(main())
