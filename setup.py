"""Packaging for Scrapyd: `scrapyd-deploy` builds an egg of the Scrapy project and the packages its jobs run.

The servers install requirements.txt themselves (an egg carries no dependencies); see README, "Beyond one machine".
"""

from setuptools import find_packages, setup

from linkspider import __version__

setup(
    name="linkspider",
    version=__version__,
    packages=find_packages(include=["linkspider", "linkspider.*", "pipelines", "pipelines.*", "analysis", "analysis.*"]),
    entry_points={"scrapy": ["settings = linkspider.settings"]},
)
