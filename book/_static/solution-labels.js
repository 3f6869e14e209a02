// sphinx-togglebutton names every toggle "Toggle hidden content". Say, in the book's language, which
// solution the button opens, e.g. 「显示或隐藏解答：练习 2.2.1」, and keep the name when it toggles.
// It runs on "load", after sphinx-togglebutton has made the buttons on DOMContentLoaded.
window.addEventListener("load", () => {
  for (const button of document.querySelectorAll(".solution .toggle-button")) {
    const title = button.closest(".solution").querySelector(".admonition-title");
    const exercise = title ? title.textContent.replace(/^\s*解答\s*/, "").trim() : "";
    button.setAttribute("aria-label", exercise ? `显示或隐藏解答：${exercise}` : "显示或隐藏解答");
  }
});
