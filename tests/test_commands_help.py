"""Every command documents its options, and neither help nor argument errors pay for torch.

The embedding model's libraries (torch, sentence-transformers) take seconds to import; only a real analysis
may load them (analysis/embed.py imports them inside load_model).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.settings import Settings

import linkspider.commands
from analysis import cli
from analysis.candidates import CLOSEST_BY_WORDS
from analysis.pipeline import FALLBACK_THRESHOLD, THRESHOLDS
from conftest import ROOT, SCRAPY, libraries_imported, two_page_database
from linkspider.spiders.site import CrawlOptions

HEAVY = ("torch", "sentence_transformers", "numba")  # numba: the anchor search's compiler (0.4 s), only where it runs
COMMANDS = sorted(module.name for module in pkgutil.iter_modules(linkspider.commands.__path__))


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(command), cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def flat(text: str) -> str:
    """White space as single spaces, and a word that argparse wrapped after one of its hyphens ("onnx-\nint8") whole."""
    return " ".join(re.sub(r"(?<=\w-)\n\s*(?=\w)", "", text).split())


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser `scrapy <name>` builds: the command's own options and Scrapy's global ones."""
    command = importlib.import_module(f"linkspider.commands.{name}").Command()
    command.settings = Settings()
    command.settings.setmodule("linkspider.settings", priority="project")
    command.settings.setdict(command.default_settings, priority="command")
    parser = argparse.ArgumentParser(conflict_handler="resolve")
    command.add_options(parser)
    return parser


def documented(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [action for action in parser._actions if action.help != argparse.SUPPRESS]


def test_linkspider_commands_are_listed_by_scrapy_help() -> None:
    assert {"analyze", "crawl"} <= set(COMMANDS)
    done = run(*SCRAPY, "-h")
    assert done.returncode == 0
    listed = dict(re.findall(r"^  (\w+) +(.+)$", done.stdout, re.M))
    for name in COMMANDS:
        command = importlib.import_module(f"linkspider.commands.{name}").Command()
        assert listed.get(name) == command.short_desc()


@pytest.mark.parametrize("name", COMMANDS)
def test_command_help_documents_every_option(name: str) -> None:
    done = run(*SCRAPY, name, "--help")
    assert done.returncode == 0 and done.stdout.strip()
    text = flat(done.stdout)
    actions = command_parser(name)._actions
    assert len(actions) > 5
    for action in actions:
        assert action.help and action.help != argparse.SUPPRESS, action
        assert flat(action.help.replace("%%", "%")) in text, action
        for option in action.option_strings or [action.metavar or action.dest]:
            assert re.search(rf"(^|[\s,\[]){re.escape(option)}([\s,=\]]|$)", done.stdout, re.M), option


def test_crawl_help_documents_the_spider_arguments() -> None:
    text = run(*SCRAPY, "crawl", "--help").stdout
    missing = [name for name in CrawlOptions.ARGUMENTS if not re.search(rf"\b{name}=", text)]
    assert missing == []


def test_the_threshold_help_gives_the_figures_the_analysis_uses() -> None:
    """The help writes them out (importing the stages for them would cost `--help` their libraries): a change to one
    of them must change the help too."""
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    [threshold] = [action for action in parser._actions if "--threshold" in action.option_strings]
    assert f"one of the source's {CLOSEST_BY_WORDS} nearest pages by words" in threshold.help
    for model, value in THRESHOLDS.items():
        assert f"{value} for {model}" in threshold.help
    assert f"{FALLBACK_THRESHOLD} for others" in threshold.help


def test_python_m_analysis_help_documents_every_option_with_its_default() -> None:
    done = run(sys.executable, "-m", "analysis", "--help")
    assert done.returncode == 0
    text = flat(done.stdout)
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    actions = [action for action in documented(parser) if not isinstance(action, argparse._HelpAction)]
    assert {option for action in actions for option in action.option_strings} >= {
        "--csv", "--model", "--threshold", "--max-similarity", "--max-per-page", "--max-per-target", "--min-words",
        "--device", "--no-progress", "--backtest", "--share", "--seed", "--rounds", "--calibrate"}
    for action in actions:
        assert action.help, action
        rendered = flat(action.help.replace("%%", "%"))
        assert rendered in text, action
        for option in action.option_strings:
            assert option in text
        if not action.option_strings:  # DB, the one positional argument: required, no default
            assert action.required and action.default is None
            continue
        if action.nargs == 0:  # a flag: off unless given
            assert action.default is False, action
            continue
        assert "(default: " in rendered, action
        if action.default is not None:
            assert f"(default: {action.default}" in rendered, action
    for option, default in (("--device", "auto"), ("--max-per-page", "4"), ("--min-words", "50")):
        assert re.search(rf"{option} .*?\(default: {default}\b", text), option  # next to its option


def test_both_analysis_entry_points_share_one_option_set() -> None:
    scrapy_options = {option for action in command_parser("analyze")._actions for option in action.option_strings}
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    assert {option for action in parser._actions for option in action.option_strings} <= scrapy_options


def imported_modules(stderr: str) -> set[str]:
    """The module names that `python -X importtime` reported."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def heavy(modules: set[str]) -> set[str]:
    return {name for name in modules if name.split(".")[0] in HEAVY}


def heavy_in_sys_modules(*args: str, module: str = "scrapy.cmdline") -> list[str]:
    """The HEAVY libraries that `python -m module args` imported, as the process lists them at exit: -X importtime
    misses what Scrapy imports through importlib (its commands, its settings)."""
    return sorted(libraries_imported(module, *args)[1] & set(HEAVY))


@pytest.mark.parametrize("args, returncode, expected", [
    (["--help"], 0, "scrapy.commands"),
    (["analyze", "--help"], 0, "analysis.cli"),
    (["crawl", "--help"], 0, "linkspider.spiders.site"),
    (["crawl", "site"], 2, "linkspider.spiders.site"),
    (["crawl", "site", "-a", "url=example.com"], 2, "linkspider.spiders.site"),
    (["analyze"], 2, "analysis.cli"),
], ids=["scrapy --help", "analyze --help", "crawl --help", "crawl site (no url)", "crawl site (bad url)", "analyze (no DB)"])
def test_help_and_argument_errors_do_not_import_the_model_libraries(args: list[str], returncode: int, expected: str) -> None:
    done = run(sys.executable, "-X", "importtime", "-m", "scrapy.cmdline", *args)
    assert done.returncode == returncode, done.stderr[-2000:]
    modules = imported_modules(done.stderr)
    assert expected in modules and "scrapy" in modules  # the report is complete, so its absence means something
    assert heavy(modules) == set()
    assert heavy_in_sys_modules(*args) == []


def test_the_import_checks_would_see_torch(tmp_path: Path) -> None:
    """The checks above are not blind: an analysis that tries to load a model shows torch in both."""
    two_page_database(tmp_path / "two.db")
    args = [str(tmp_path / "two.db"), "--model", "/nonexistent/path"]
    done = run(sys.executable, "-X", "importtime", "-m", "analysis", *args)
    assert done.returncode == 1 and "cannot load model" in done.stderr
    assert {"torch", "sentence_transformers"} <= heavy(imported_modules(done.stderr))
    assert {"torch", "sentence_transformers"} <= set(heavy_in_sys_modules(*args, module="analysis"))


def test_analysis_modules_do_not_import_the_model_libraries_at_import_time() -> None:
    modules = ["analysis." + path.stem for path in sorted(Path(ROOT / "analysis").glob("*.py"))
               if path.stem not in ("__init__", "__main__")]
    done = run(sys.executable, "-X", "importtime", "-c", "; ".join(f"import {name}" for name in modules))
    assert done.returncode == 0, done.stderr[-2000:]
    imported = imported_modules(done.stderr)
    assert set(modules) <= imported
    assert {name.split(".")[0] for name in heavy(imported)} == {"numba"}  # the anchor search's (windows.py), not a model's
