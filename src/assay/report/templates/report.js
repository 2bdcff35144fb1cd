(function () {
  "use strict";
  function select(id) {
    var panel = document.getElementById("node-" + id);
    if (!panel) { return false; }
    document.querySelectorAll(".detail").forEach(function (d) { d.hidden = d !== panel; });
    document.querySelectorAll("[data-node]").forEach(function (m) {
      m.classList.toggle("selected", m.getAttribute("data-node") === id);
    });
    var shown = document.getElementById("selected-node");
    if (shown) { shown.textContent = id; }
    if (history.replaceState) { history.replaceState(null, "", "#node=" + id); }
    return true;
  }
  document.addEventListener("click", function (event) {
    var mark = event.target.closest && event.target.closest("[data-node]");
    if (mark && select(mark.getAttribute("data-node"))) {
      event.preventDefault();
      if (mark.tagName.toLowerCase() === "a") {
        document.getElementById("node-" + mark.getAttribute("data-node")).scrollIntoView();
      }
    }
  });
  document.addEventListener("keydown", function (event) {
    var mark = event.target.closest && event.target.closest("[data-node]");
    if (mark && event.key === "Enter") { select(mark.getAttribute("data-node")); }
  });
  var filter = document.getElementById("failing-only");
  if (filter) {
    var apply = function () {
      document.querySelectorAll("tr.row-pass").forEach(function (r) { r.classList.toggle("filtered", filter.checked); });
    };
    filter.addEventListener("change", apply);
    apply();
  }
  var wanted = /^#node=(.+)$/.exec(location.hash);
  var start = document.body.getAttribute("data-start");
  if (!(wanted && select(decodeURIComponent(wanted[1]))) && start) { select(start); }
})();
