"""Bibliography styles are looked up once per build (book/_ext/page_refs.py), through pybtex's and
sphinxcontrib-bibtex's documented ``register_plugin``, not in the installed packages' entry points on
every use."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pybtex.plugin
import pytest
import sphinxcontrib.bibtex.plugin
from conftest import load_module

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from page_refs import _register_styles  # noqa: E402


def test_styles_are_found_without_scanning_entry_points_once_registered(monkeypatch):
    conf = load_module(ROOT / "conf.py", "book_conf")
    app = SimpleNamespace(
        config=SimpleNamespace(
            bibtex_default_style=conf.bibtex_default_style,
            bibtex_reference_style=conf.bibtex_reference_style,
            bibtex_foot_reference_style="foot",
        )
    )
    _register_styles(app)

    def no_scan(**kwargs):
        raise AssertionError(f"entry points scanned for {kwargs}")

    # Both libraries look their entry points up through importlib.metadata's entry_points.
    monkeypatch.setattr(pybtex.plugin, "entry_points", no_scan)
    monkeypatch.setattr(sphinxcontrib.bibtex.plugin, "entry_points", no_scan)
    style = pybtex.plugin.find_plugin("pybtex.style.formatting", conf.bibtex_default_style)()
    assert style.format_labels is not None  # its label, name and sorting styles too
    assert sphinxcontrib.bibtex.plugin.find_plugin(
        "sphinxcontrib.bibtex.style.referencing", conf.bibtex_reference_style
    )
    with pytest.raises(AssertionError, match="entry points scanned"):  # anything else: as usual
        pybtex.plugin.find_plugin("pybtex.backends", "html")


def test_the_books_style_formats_as_plain_does_and_each_entry_once():
    from page_refs import FormattedOnce
    from pybtex.database import parse_file
    from pybtex.style.formatting.plain import Style as PlainStyle

    data = parse_file(str(ROOT / "book" / "references.bib"))
    keys = list(data.entries)[:5]
    ours = FormattedOnce()
    plain = PlainStyle()
    for label, key in enumerate(keys, start=1):
        entry = data.entries[key]
        first = ours.format_entry(str(label), entry, bib_data=data)
        expected = plain.format_entry(str(label), entry, bib_data=data)
        assert (first.key, first.label) == (expected.key, expected.label)
        assert first.text.render_as("text") == expected.text.render_as("text")
        # Under another label (another bibliography's number): the same text, not formatted again.
        again = FormattedOnce().format_entry("九", entry, bib_data=data)
        assert again.text is first.text and again.label == "九"
    other = FormattedOnce(abbreviate_names=True)  # another way of formatting: formatted afresh
    entry = data.entries[keys[0]]
    assert (
        other.format_entry("1", entry, bib_data=data).text
        is not ours.format_entry("1", entry, bib_data=data).text
    )
