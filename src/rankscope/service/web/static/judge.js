// rankscope judging view: keyboard shortcuts over the plain form (everything also works with the mouse).
// 0-3 grade, s skip, m show/hide the pre-label, n write a note (Esc leaves it), arrows: previous / next.
(function () {
  "use strict";
  function click(id) {
    var el = document.getElementById(id);
    if (el) { el.click(); return true; }
    return false;
  }
  document.addEventListener("DOMContentLoaded", function () {
    var details = document.getElementById("prelabel");
    var shown = document.getElementById("prelabel-shown");
    if (details && shown) {
      details.addEventListener("toggle", function () { if (details.open) shown.value = "1"; });
    }
    document.addEventListener("keydown", function (ev) {
      var tag = ev.target && ev.target.tagName;
      if (tag === "TEXTAREA" || tag === "INPUT" || tag === "SELECT") {
        if (ev.key === "Escape") ev.target.blur();
        return;
      }
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      var done = false;
      if (ev.key >= "0" && ev.key <= "3") done = click("grade-" + ev.key);
      else if (ev.key === "s") done = click("skip");
      else if (ev.key === "m" && details) { details.open = !details.open; done = true; }
      else if (ev.key === "n") { var note = document.getElementById("note"); if (note) { note.focus(); done = true; } }
      else if (ev.key === "ArrowLeft") done = click("prev");
      else if (ev.key === "ArrowRight") done = click("next");
      if (done) ev.preventDefault();
    });
  });
})();
