// rankscope judging view: keyboard shortcuts over the plain form (everything also works with the mouse).
// 0-3 grade, s skip, m ask for the pre-label (the service records it), n write a note (Esc leaves it), arrows:
// previous / next.
(function () {
  "use strict";
  function click(id) {
    var el = document.getElementById(id);
    if (el) { el.click(); return true; }
    return false;
  }
  document.addEventListener("DOMContentLoaded", function () {
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
      else if (ev.key === "m") done = click("show-prelabel");
      else if (ev.key === "n") { var note = document.getElementById("note"); if (note) { note.focus(); done = true; } }
      else if (ev.key === "ArrowLeft") done = click("prev");
      else if (ev.key === "ArrowRight") done = click("next");
      if (done) ev.preventDefault();
    });
  });
})();
