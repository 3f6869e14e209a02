"""What the PDF edition needs from the machine, and what its LaTeX log must not say.

``make pdf`` runs this file twice, and tests/test_pdf.py imports it:

- ``python tests/texcheck.py tools`` checks the TeX tools and fonts before a build. If anything
  is missing it prints one message naming what is missing and the Debian packages to install,
  and exits with status 1, so that no LaTeX run starts only to fail half-way.
- ``python tests/texcheck.py log DIR`` reads the LaTeX log of every document in DIR after a
  build and exits with status 1 if a character was missing from the fonts or a reference stayed
  undefined: the PDF would show a blank or "??" although the build "succeeded".
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

# The Debian packages of the PDF edition, in the order the README gives them.
DEBIAN_PACKAGES = (
    "texlive-xetex texlive-lang-chinese texlive-lang-cjk texlive-latex-extra "
    "texlive-fonts-recommended fonts-freefont-otf fonts-noto-cjk latexmk xindy"
).split()
APT_GET = "apt-get install " + " ".join(DEBIAN_PACKAGES)

PROGRAMS = {
    "xelatex": "texlive-xetex",
    "latexmk": "latexmk",
    "xindy": "xindy",
    "fc-list": "fontconfig",
}
# LaTeX packages the book needs that Debian ships outside texlive-xetex.
STYLES = {"xeCJK.sty": "texlive-lang-cjk", "titlesec.sty": "texlive-latex-extra"}
# The fonts conf.py asks for by name.
FONTS = {
    "Noto Serif CJK SC": "fonts-noto-cjk",
    "Noto Sans CJK SC": "fonts-noto-cjk",
    "Noto Sans Mono CJK SC": "fonts-noto-cjk",
    "FreeSerif": "fonts-freefont-otf",
    "FreeSans": "fonts-freefont-otf",
}

# Matched in the log with its line breaks removed (TeX wraps log lines at 79 characters).
LOG_PROBLEMS = re.compile(
    r"Missing character: There is no .+? in font .+?!"
    r"|LaTeX Warning: (?:Reference|Citation|Hyper reference) `[^']*' on page \S+ undefined"
    r"|LaTeX Warning: There were undefined references"
)


def _has_font(family: str) -> bool:
    result = subprocess.run(
        ["fc-list", f":family={family}", "family"], capture_output=True, text=True
    )
    return any(family in line.split(",") for line in result.stdout.splitlines())


def _has_style(name: str) -> bool:
    if not shutil.which("kpsewhich"):
        return False
    return bool(subprocess.run(["kpsewhich", name], capture_output=True, text=True).stdout.strip())


def missing_tools() -> list[str]:
    """What the PDF build lacks on this machine, e.g. ``["xindy (xindy)"]``; empty if nothing."""
    missing = [f"{name} ({pkg})" for name, pkg in PROGRAMS.items() if not shutil.which(name)]
    if shutil.which("xelatex"):  # without TeX, its missing styles say nothing new
        missing += [f"{name} ({pkg})" for name, pkg in STYLES.items() if not _has_style(name)]
    if shutil.which("fc-list"):
        missing += [f"font {name} ({pkg})" for name, pkg in FONTS.items() if not _has_font(name)]
    return missing


def tools_message(missing: list[str]) -> str:
    named = {item.rsplit("(", 1)[1].rstrip(")") for item in missing}
    extra = named - set(DEBIAN_PACKAGES)  # e.g. fontconfig, which the list above brings in anyway
    return (
        "The PDF edition needs XeLaTeX and the Noto CJK fonts; missing here: "
        + ", ".join(missing)
        + ".\nOn Debian or Ubuntu install them with:\n    sudo "
        + " ".join([APT_GET, *sorted(extra)])
    )


def log_problems(latex_dir: Path) -> list[str]:
    """The lines of the LaTeX logs in ``latex_dir`` that report a missing glyph or reference."""
    problems = []
    for tex in sorted(latex_dir.glob("*.tex")):
        log = tex.with_suffix(".log")
        if not log.is_file():
            problems.append(f"{log}: no log (was the PDF built?)")
            continue
        text = log.read_text(encoding="utf-8", errors="replace")
        found = Counter(m.group(0).strip() for m in LOG_PROBLEMS.finditer(text.replace("\n", "")))
        problems += [
            f"{log.name}: {line}" + (f" ({n} times)" if n > 1 else "") for line, n in found.items()
        ]
    return problems


def main(argv: list[str]) -> int:
    if argv[:1] == ["tools"]:
        missing = missing_tools()
        if missing:
            print(tools_message(missing), file=sys.stderr)
            return 1
        return 0
    if argv[:1] == ["log"] and len(argv) == 2:
        problems = log_problems(Path(argv[1]))
        if problems:
            print(
                "The PDF was built, but LaTeX reported:", *problems, sep="\n    ", file=sys.stderr
            )
            return 1
        for pdf in sorted(
            p for p in Path(argv[1]).glob("*.pdf") if p.with_suffix(".tex").is_file()
        ):
            print(f"{pdf}: every glyph found, every reference resolved")
        return 0
    print("usage: texcheck.py tools | texcheck.py log LATEX_DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
