"""The ``{input}`` role: an example's input typed once in the page, naming the constant it must equal.

``{input}`(1, 0)、(0, 1) <02_backprop:EXAMPLE_Q>``` shows ``(1, 0)、(0, 1)``, as plain text, on every
builder. The part in angle brackets is for the tests, not the reader: ``module:NAME`` names the constant
(of a teaching file, or the book side's for an input no teaching file has) that
``tests/test_typed_inputs.py`` compares the typed text with. The build computes nothing here.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxRole


def split(text: str) -> tuple[str, str]:
    """The typed text and the constant's ``module:NAME``.

    >>> split("(1, 0)、(0, 1) <02_backprop:EXAMPLE_Q>")
    ('(1, 0)、(0, 1)', '02_backprop:EXAMPLE_Q')
    """
    shown, _, target = text.rstrip().removesuffix(">").rpartition(" <")
    if not shown.strip() or ":" not in target:
        raise ValueError(f"{{input}} 要写成“输入 <模块:常量名>”，收到 {text!r}")
    return shown.strip(), target


class InputRole(SphinxRole):
    def run(self):
        try:
            shown, _ = split(self.text)
        except ValueError as error:
            message = self.inliner.reporter.error(str(error), line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, message)], [message]
        return [nodes.Text(shown)], []


def setup(app: Sphinx) -> dict:
    app.add_role("input", InputRole())
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
