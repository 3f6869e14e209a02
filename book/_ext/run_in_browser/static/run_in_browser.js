// The page's examples run in the reader's browser (book/_ext/run_in_browser). Each block the build
// marked `runnable` gets a 运行 button. The first click loads Python (Pyodide, from _static/pyodide,
// never another host), unpacks the page's zip of teaching files and runs the block with
// run_in_browser.py; the block then becomes an editable text box, and 还原 brings the page's example
// back. Until a click, nothing is fetched and nothing moves: the buttons sit in room the CSS keeps.
(() => {
  "use strict";
  const STATIC = new URL(".", document.currentScript.src);
  const ROOT = new URL("..", STATIC);
  const PORT = 8000; // `make serve`
  const LABEL = {
    run: "运行",
    reset: "还原",
    busy: "运行中……",
    loading: "正在载入浏览器里的 Python（只在本页第一次点“运行”时载入）……",
    editable: "可编辑的例子：改了之后再点“运行”（Ctrl+Enter 也行）",
    file: (page) =>
      `从磁盘打开的页面不能运行例子：在本书的根目录运行 make serve，再打开 http://127.0.0.1:${PORT}/${page}`,
    needs: (what) =>
      `这个例子要用 ${what}，浏览器里的 Python 没有它：下载本页的文件（“运行命令”一节），在自己的电脑上运行。`,
    shell: (line) => `浏览器里只能运行 python3 文件名.py 这样的命令，不能运行：${line}`,
    failed: (why) => `浏览器里的 Python 没能启动：${why}`,
    digits: "浏览器里的数学函数与构建时的不同：按完整精度打印的浮点数，末几位可能与页面上的运行结果不同。",
  };
  const NEEDS = { numpy: "numpy", torch: "PyTorch" };
  const COMMAND = /^python3? +(\S+\.py)$/;
  let python = null; // the promise of a ready Python, made by the first click

  function loadPython() {
    if (python === null) {
      python = (async () => {
        const zip = document.querySelector("a.take-home-zip");
        const { loadPyodide } = await import(new URL("pyodide/pyodide.mjs", STATIC).href);
        const [pyodide, files, driver] = await Promise.all([
          loadPyodide({ indexURL: new URL("pyodide/", STATIC).href }),
          fetch(zip.href).then((r) => r.arrayBuffer()),
          fetch(new URL("run_in_browser.py", STATIC)).then((r) => r.text()),
        ]);
        pyodide.unpackArchive(files, "zip");
        pyodide.runPython(driver);
        return pyodide;
      })();
      python.catch(() => {
        python = null; // a later click tries again
      });
    }
    return python;
  }

  function run(pyodide, block, text) {
    if (block.kind === "session") {
      return pyodide.globals.get("session")(text, block.original);
    }
    const command = pyodide.globals.get("command");
    let out = "";
    for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
      const found = line.match(COMMAND);
      out += found ? command(found[1]) : LABEL.shell(line) + "\n";
    }
    return out;
  }

  function button(label, action) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "runnable-button";
    b.textContent = label;
    b.addEventListener("click", action);
    return b;
  }

  function show(block, text, kind) {
    block.output.replaceChildren();
    const pre = document.createElement(kind === "result" ? "pre" : "p");
    pre.className = `runnable-${kind}`;
    pre.textContent = text;
    block.output.append(pre);
  }

  function edit(block) {
    if (block.editor) return;
    const editor = document.createElement("textarea");
    editor.className = "runnable-editor";
    editor.value = block.original;
    editor.spellcheck = false;
    editor.setAttribute("aria-label", LABEL.editable);
    editor.rows = block.original.split("\n").length;
    editor.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        start(block);
      }
    });
    block.code.hidden = true;
    block.code.after(editor);
    block.editor = editor;
    block.reset.hidden = false;
  }

  async function start(block) {
    if (location.protocol === "file:") {
      show(block, LABEL.file(location.href.slice(ROOT.href.length)), "note");
      return;
    }
    if (block.needs) {
      show(block, LABEL.needs(block.needs), "note");
      return;
    }
    const text = block.editor ? block.editor.value : block.original;
    block.run.disabled = true;
    block.run.textContent = LABEL.busy;
    if (python === null) show(block, LABEL.loading, "note");
    try {
      const pyodide = await loadPython();
      show(block, run(pyodide, block, text), "result");
      if (block.kind === "command") {
        const digits = document.createElement("p");
        digits.className = "runnable-digits";
        digits.textContent = LABEL.digits;
        block.output.append(digits);
      }
      edit(block);
    } catch (error) {
      show(block, LABEL.failed(error && error.message ? error.message : error), "note");
    } finally {
      block.run.disabled = false;
      block.run.textContent = LABEL.run;
    }
  }

  function reset(block) {
    block.editor.value = block.original;
    block.output.replaceChildren();
    block.run.focus();
  }

  document.addEventListener("DOMContentLoaded", () => {
    for (const element of document.querySelectorAll("div.runnable")) {
      const code = element.querySelector("div.highlight");
      const needs = [...element.classList].find((c) => c.startsWith("runnable-needs-"));
      const block = {
        kind: element.classList.contains("runnable-session") ? "session" : "command",
        original: code.querySelector("pre").textContent.replace(/\n$/, ""),
        needs: needs ? NEEDS[needs.slice("runnable-needs-".length)] : null,
        code,
      };
      const bar = document.createElement("div");
      bar.className = "runnable-bar";
      block.run = button(LABEL.run, () => start(block));
      block.reset = button(LABEL.reset, () => reset(block));
      block.reset.hidden = true;
      bar.append(block.run, block.reset);
      block.output = document.createElement("div");
      block.output.className = "runnable-output";
      block.output.setAttribute("aria-live", "polite");
      element.append(bar, block.output);
      element.classList.add("runnable-ready");
    }
  });
})();
