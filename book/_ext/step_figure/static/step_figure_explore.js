/* step_figure_explore.js: the explore panel of a step-figure (option :explore:).
 *
 * The figure carries, as JSON, every state the panel's controls can reach, computed when the
 * book was built (chapter.mask.f12_explore_states; its explore_state decodes the same way). This
 * script builds real <select>/<input> controls and, on each change, looks the chosen state up and
 * writes it out: tables, row sentences, the empty-row note and one short aria-live sentence.
 * It computes no number: every cell, label and sentence is a string or bit from the data.
 * Without the script the container stays hidden; print hides the panel (step_figure_explore.css).
 */
(function () {
  "use strict";

  function make(tag, attributes, text) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) { node.setAttribute(name, attributes[name]); });
    if (text) node.textContent = text;
    return node;
  }

  function bit(bits, j) { return (bits >> j) & 1; }

  function setUp(box, index) {
    var data = JSON.parse(box.querySelector("script").textContent);
    var w = data.words, ch = data.choices;
    var id = "step-figure-explore-" + (index + 1) + "-";

    function words(s) {
      return data.sentences[s].map(function (t) { return data.text[t]; }).join("");
    }

    // -- the controls: labelled native elements, so keys and screen readers work as usual ---------
    var form = make("div", { class: "step-figure-explore-controls" });
    function field(name, control, label, after) {
      control.id = id + name;
      var wrap = make("div", { class: "step-figure-explore-field" });
      var text = make("label", { for: control.id }, label);
      if (after) wrap.append(control, text);
      else wrap.append(text, control);
      form.append(wrap);
      control.addEventListener("change", render);
      return wrap;
    }
    function select(values, labels) {
      var s = make("select");
      values.forEach(function (v, i) { s.append(make("option", { value: String(i) }, String(labels ? labels[i] : v))); });
      return s;
    }
    function checkbox(checked) {
      var c = make("input", { type: "checkbox" });
      c.checked = checked;
      return c;
    }
    var start = data.start;
    var past = select(ch.past), fresh = select(ch.new), pad = select(ch.pad, w.pad_options), count = select([]);
    var causal = checkbox(start.causal), wrong = checkbox(false);
    past.value = String(ch.past.indexOf(start.past));
    fresh.value = String(ch.new.indexOf(start.new));
    pad.value = String(ch.pad.indexOf(start.pad));
    field("past", past, w.past);
    field("new", fresh, w.new);
    field("pad", pad, w.pad);
    var countField = field("count", count, w.count);
    field("causal", causal, w.causal, true);
    field("wrong", wrong, w.wrong, true);

    // -- what the panel shows ---------------------------------------------------------------------
    // A live region of its own (not a second role=status): it says one short sentence per change.
    var status = make("p", { class: "step-figure-explore-status", "aria-live": "polite", "aria-atomic": "true" });
    var tables = make("div", { class: "step-figure-explore-tables", tabindex: "0", role: "group", "aria-label": w.tables });
    var out = make("div", { class: "step-figure-explore-out" });
    var panel = make("section", { class: "step-figure-explore-panel", "aria-labelledby": id + "title" });
    panel.append(
      make("p", { class: "step-figure-explore-title", id: id + "title" }, w.title),
      make("p", { class: "step-figure-explore-intro" }, box.dataset.intro),
      form, status, tables, out
    );

    function table(caption, header, rows) {
      var t = make("table", { class: "step-figure-explore-table" });
      t.append(make("caption", {}, caption));
      var head = make("tr");
      header.forEach(function (h) { head.append(make("th", { scope: "col" }, h)); });
      var thead = make("thead");
      thead.append(head);
      t.append(thead);
      var body = make("tbody");
      rows.forEach(function (row) {
        var tr = make("tr", row.empty ? { class: "is-empty" } : {});
        tr.append(make("th", { scope: "row" }, row.label));
        row.cells.forEach(function (c) {
          var td = make("td", c.cls ? { class: c.cls } : {}, c.text);
          if (c.diff) {
            td.append(" ", make("span", { "aria-hidden": "true" }, w.diff_mark), make("span", { class: "step-figure-explore-sr" }, w.diff));
          }
          tr.append(td);
        });
        body.append(tr);
      });
      t.append(body);
      return t;
    }

    function list(title, items) {
      var part = make("div");
      part.append(make("p", { class: "step-figure-explore-heading" }, title));
      var ul = make("ul");
      items.forEach(function (s) { ul.append(make("li", {}, s)); });
      part.append(ul);
      return part;
    }

    function byCount() {
      return data.states[Number(past.value)][Number(fresh.value)][causal.checked ? 0 : 1][Number(pad.value)];
    }

    // PAD counts run 1 … Key total (data.counts); with no PAD the field hides and index 0 is the state.
    function counts() {
      var none = ch.pad[Number(pad.value)] === "none", keep = Number(count.value) || 0;
      var values = data.counts[Number(past.value)][Number(fresh.value)];
      countField.hidden = none;
      count.replaceChildren();
      values.forEach(function (c, i) { count.append(make("option", { value: String(i) }, String(c))); });
      count.value = none ? "0" : String(Math.min(keep, values.length - 1));
    }

    function render(event) {
      if (!event || event.target !== count) counts();
      var p = Number(past.value), st = byCount()[Number(count.value)];
      var n = st[0], rows = st[1].map(function (r) { return data.rows[r]; });
      var header = [w.corner].concat(data.keys.slice(0, n));
      function cells(bits, texts, coloured, lost) {
        return data.keys.slice(0, n).map(function (k, j) {
          var b = bit(bits, j);
          return { text: texts[b], cls: coloured ? (b ? "is-allowed" : "is-forbidden") : "", diff: lost && bit(lost, j) };
        });
      }
      var right = rows.map(function (r, i) {
        return { label: data.labels[p][i] + (r[6] ? w.empty : ""), empty: r[6], cells: cells(r[0], data.cells, true) };
      });
      var mask = rows.map(function (r, i) {
        return { label: data.labels[p][i], empty: r[6], cells: cells(r[1], data.mask_cells, false) };
      });
      tables.replaceChildren(table(w.visible, header, right), table(w.mask, header, mask));
      out.replaceChildren(list(w.sentences, rows.map(function (r, i) { return data.prefix[p][i] + words(r[7]); })));
      var note = words(st[4]);
      if (note) out.append(make("p", { class: "step-figure-explore-note" }, note));
      var said = words(st[2]);
      if (wrong.checked) {
        var bad = rows.map(function (r, i) {
          var c = cells(r[2], data.cells, true, r[3]);
          c.push({ text: String(r[4]), cls: "is-count" }, { text: String(r[5]), cls: "is-count" });
          return { label: data.wrong_labels[i], cells: c };
        });
        tables.append(table(w.wrong_table, header.concat([w.lost_cached, w.lost_new]), bad));
        tables.append(make("p", { class: "step-figure-explore-legend" }, w.legend));
        out.append(list(w.lost_sentences, rows.map(function (r, i) { return data.lost_prefix[i] + words(r[8]); })));
        said += words(st[3]);
      }
      status.textContent = said;
    }

    render(); // before the panel is on the page: the first state is shown, not announced
    box.append(panel);
    box.hidden = false;
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll(".step-figure-explore"), setUp);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
