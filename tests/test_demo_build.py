"""The committed demo/site is exactly what demo/build.py generates from demo/content."""

from __future__ import annotations

from demo_source import POSTS, ROOT, SITE_FILES, build


def test_build_writes_into_the_committed_folder() -> None:
    assert build.SITE_DIR == ROOT / "demo" / "site"
    assert all(build.output_path(key).is_relative_to(build.SITE_DIR) for key in SITE_FILES)


def test_every_generated_file_is_committed_unchanged() -> None:
    missing = [key for key in SITE_FILES if not build.output_path(key).is_file()]
    changed = [key for key, text in SITE_FILES.items()
               if key not in missing and build.output_path(key).read_bytes() != text.encode("utf-8")]
    assert (missing, changed) == ([], [])


def test_no_committed_file_is_left_over() -> None:
    committed = {path for path in build.SITE_DIR.rglob("*") if path.is_file() or path.is_symlink()}
    assert committed - {build.output_path(key) for key in SITE_FILES} == set()


def test_output_paths_are_distinct() -> None:
    assert len({build.output_path(key) for key in SITE_FILES}) == len(SITE_FILES)


def test_every_content_file_is_built() -> None:
    assert {post.slug for post in POSTS} == {path.stem for path in build.POSTS_DIR.glob("*.html")}
    pages = {path.stem for path in build.PAGES_DIR.glob("*.html")}
    assert pages == {*build.STATIC_PAGES, build.DRAFT_PAGE}
