/* step_figure.js: turns each step-figure into a player.
 *
 * The page already holds every frame as ordinary HTML (it reads and prints without this
 * script). The script only adds the player around the frames that are there:
 * previous / play·pause / next buttons, a dwell-time control, an aria-live status
 * "第k步，共n步", keys on the focusable stage, and an enlarged view in a <dialog>.
 * Nothing moves until the reader asks; playing stops by itself on the last frame.
 */
(function () {
  "use strict";

  var DWELL_CHOICES = [1000, 2000, 3000, 5000]; // milliseconds per frame while playing

  function make(tag, attributes, text) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      node.setAttribute(name, attributes[name]);
    });
    if (text) node.textContent = text;
    return node;
  }

  // A real <button type="button"> whose accessible name is its word; the symbol is decoration.
  function button(word, icon, className, iconAfter) {
    var b = make("button", { type: "button", class: "step-figure-button " + (className || "") });
    var label = make("span", { class: "step-figure-button-label" }, word);
    var symbol = make("span", { class: "step-figure-icon", "aria-hidden": "true" }, icon);
    if (iconAfter) b.append(label, symbol);
    else b.append(symbol, label);
    b.setLabel = function (w, i) { label.textContent = w; symbol.textContent = i; };
    return b;
  }

  function seconds(ms) {
    return ms / 1000 + " 秒";
  }

  function setUp(figure, index) {
    var stage = figure.querySelector(".step-figure-stage");
    var frames = stage ? Array.prototype.slice.call(stage.querySelectorAll(".step-figure-frame")) : [];
    if (frames.length === 0) return;
    var total = frames.length;
    var current = 0;
    var timer = null;
    var title = (figure.querySelector(".step-figure-title") || {}).textContent || "";

    // -- the controls -------------------------------------------------------------------------
    var player = make("div", { class: "step-figure-player" });
    var controls = make("div", { class: "step-figure-controls" });
    var steps = make("div", { class: "step-figure-steps", role: "group", "aria-label": "逐步查看" });
    var prev = button("上一步", "◀", "step-figure-prev");
    var play = button("播放", "▶", "step-figure-play");
    var next = button("下一步", "▶", "step-figure-next", true);
    steps.append(prev, play, next);

    var dwellId = "step-figure-dwell-" + (index + 1);
    var dwellBox = make("div", { class: "step-figure-dwell" });
    var dwell = make("select", { id: dwellId });
    var chosen = Number(figure.getAttribute("data-dwell")) || 2000;
    var choices = DWELL_CHOICES.indexOf(chosen) < 0 ? DWELL_CHOICES.concat([chosen]) : DWELL_CHOICES;
    choices.sort(function (a, b) { return a - b; });
    choices.forEach(function (ms) {
      var option = make("option", { value: String(ms) }, seconds(ms));
      if (ms === chosen) option.selected = true;
      dwell.append(option);
    });
    dwellBox.append(make("label", { for: dwellId }, "停留时间"), dwell);

    var enlarge = button("放大图形", "⤢", "step-figure-enlarge");
    controls.append(steps, dwellBox, enlarge);

    var status = make("p", {
      class: "step-figure-status", role: "status", "aria-live": "polite", "aria-atomic": "true",
    });
    // A picture of progress for sighted readers; the status line says the same in words.
    var progress = make("div", { class: "step-figure-progress", "aria-hidden": "true" });
    frames.forEach(function () { progress.append(make("span")); });
    var meter = make("div", { class: "step-figure-meter" });
    meter.append(status, progress);

    stage.parentNode.insertBefore(player, stage);
    player.append(controls, meter, stage);
    figure.classList.add("is-ready");

    // -- showing a frame ----------------------------------------------------------------------
    function show(k) {
      current = Math.max(0, Math.min(total - 1, k));
      frames.forEach(function (frame, i) { frame.classList.toggle("is-current", i === current); });
      Array.prototype.forEach.call(progress.children, function (dot, i) {
        dot.classList.toggle("is-done", i <= current);
      });
      status.textContent = "第" + (current + 1) + "步，共" + total + "步";
      // aria-disabled (not disabled) keeps keyboard focus on a button that reaches the end.
      prev.setAttribute("aria-disabled", String(current === 0));
      next.setAttribute("aria-disabled", String(current === total - 1));
    }

    function stop() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      play.setLabel("播放", "▶");
      player.classList.remove("is-playing");
    }

    function schedule() {
      timer = setTimeout(function () {
        show(current + 1);
        if (current === total - 1) stop(); // never loops: the last frame is where it rests
        else schedule();
      }, Number(dwell.value));
    }

    function start() {
      if (current === total - 1) show(0); // playing again from the end starts at the beginning
      play.setLabel("暂停", "❚❚");
      player.classList.add("is-playing");
      schedule();
    }

    function toggle() {
      if (timer === null) start();
      else stop();
    }

    // Any step the reader takes by hand ends playing: the reader is in charge again.
    function go(k) {
      stop();
      show(k);
    }

    // A button at its end is aria-disabled (still focusable): pressing it does nothing at all.
    function unlessDisabled(b, action) {
      b.addEventListener("click", function () {
        if (b.getAttribute("aria-disabled") !== "true") action();
      });
    }
    unlessDisabled(prev, function () { go(current - 1); });
    unlessDisabled(next, function () { go(current + 1); });
    play.addEventListener("click", toggle);
    dwell.addEventListener("change", function () {
      if (timer !== null) { clearTimeout(timer); schedule(); } // the new pace applies at once
    });

    player.addEventListener("keydown", function (event) {
      var tag = event.target.tagName;
      if (tag === "SELECT" || event.altKey || event.ctrlKey || event.metaKey) return; // its own keys
      // Shift + ← → scroll a frame wider than the screen; the plain arrows step.
      if (event.shiftKey && (event.key === "ArrowLeft" || event.key === "ArrowRight")) {
        stage.scrollBy({ left: (event.key === "ArrowLeft" ? -1 : 1) * stage.clientWidth * 0.6 });
        event.preventDefault();
        return;
      }
      switch (event.key) {
        case "ArrowLeft": go(current - 1); break;
        case "ArrowRight": go(current + 1); break;
        case "Home": go(0); break;
        case "End": go(total - 1); break;
        case " ":
          if (tag === "BUTTON") return; // Space presses the focused button instead
          toggle();
          break;
        default: return;
      }
      event.preventDefault();
    });

    // -- the enlarged view: the player moves into a modal <dialog> and back -----------------
    var dialog = null;
    var home = document.createComment("step-figure player");
    enlarge.addEventListener("click", function () {
      if (!dialog) {
        dialog = make("dialog", { class: "step-figure-dialog", "aria-label": "放大查看：" + title });
        var bar = make("div", { class: "step-figure-dialog-bar" });
        var close = button("关闭", "✕", "step-figure-close");
        close.addEventListener("click", function () { dialog.close(); });
        bar.append(make("p", { class: "step-figure-dialog-title" }, title), close);
        dialog.append(bar);
        // Sphinx's sphinx_highlight.js cancels every Escape keydown on the document (to hide
        // search highlights), which stops a <dialog> from closing natively; close it here first.
        dialog.addEventListener("keydown", function (event) {
          if (event.key !== "Escape") return;
          event.preventDefault();
          event.stopPropagation();
          dialog.close();
        });
        dialog.addEventListener("close", function () {
          home.parentNode.insertBefore(player, home);
          home.remove();
          enlarge.focus(); // back where the reader was
        });
        document.body.append(dialog);
      }
      player.parentNode.insertBefore(home, player);
      dialog.append(player);
      dialog.showModal();
      // Focus without scrolling: the controls and the caption stay in view at the top.
      stage.focus({ preventScroll: true });
      dialog.scrollTop = 0;
    });

    show(0);
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-step-figure]"), setUp);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
