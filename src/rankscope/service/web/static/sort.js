// rankscope dashboard: click a column header of a table.sortable to sort by it (again: reverse).
// Numbers sort as numbers (the cell's data-value when it has one), text as text; empty cells last.
// A <select data-autosubmit> submits its form when it changes (no inline handlers: the pages' CSP forbids them).
(function () {
  "use strict";
  function key(cell) {
    if (!cell) return { empty: true };
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
    if (raw === "" || raw === "–") return { empty: true };
    var n = Number(raw.replace(/[^0-9eE.+-]/g, ""));
    return /^[\s+-]?[0-9.]/.test(raw) && !isNaN(n) ? { num: n } : { text: raw.toLowerCase() };
  }
  function compare(a, b) {
    if (a.empty || b.empty) return a.empty === b.empty ? 0 : (a.empty ? 1 : -1);
    if (a.num !== undefined && b.num !== undefined) return a.num - b.num;
    var x = a.num !== undefined ? String(a.num) : a.text, y = b.num !== undefined ? String(b.num) : b.text;
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  function sortBy(table, col, th) {
    var body = table.tBodies[0];
    var desc = th.getAttribute("aria-sort") === "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var c = compare(key(r1.cells[col]), key(r2.cells[col]));
      if (key(r1.cells[col]).empty || key(r2.cells[col]).empty) return c;  // empty cells stay last
      return desc ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", desc ? "descending" : "ascending");
  }
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("select[data-autosubmit]"), function (select) {
      select.addEventListener("change", function () { select.form.submit(); });
    });
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
      var head = table.tHead && table.tHead.rows[0];
      if (!head || !table.tBodies.length) return;
      Array.prototype.forEach.call(head.cells, function (th, col) {
        if (!th.textContent.trim()) return;  // a column of links or checkboxes
        th.classList.add("sort");
        th.addEventListener("click", function () { sortBy(table, col, th); });
      });
    });
  });
})();
