// The theme's sidebar folds each part of the table of contents behind a <summary> that holds only
// an arrow icon, so a screen reader announces a nameless control. Name it after its section.
document.addEventListener("DOMContentLoaded", () => {
  for (const summary of document.querySelectorAll(".bd-sidenav details > summary")) {
    if (summary.hasAttribute("aria-label")) continue;
    const link = summary.parentElement.parentElement.querySelector(":scope > a");
    const section = link ? link.textContent.trim() : "本节";
    summary.setAttribute("aria-label", `展开或收起“${section}”的目录`);
  }
});
