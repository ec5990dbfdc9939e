// The settings reference's filter box: hides the rows whose text does not contain every word typed,
// and the tables left without a row. Other pages have no #settings-filter.
document.addEventListener("DOMContentLoaded", function () {
  var box = document.getElementById("settings-filter");
  if (!box) return;
  box.addEventListener("input", function () {
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    document.querySelectorAll("article table").forEach(function (table) {
      var shown = 0;
      table.querySelectorAll("tbody tr").forEach(function (row) {
        var text = row.textContent.toLowerCase();
        var keep = words.every(function (w) { return text.indexOf(w) !== -1; });
        row.style.display = keep ? "" : "none";
        if (keep) shown += 1;
      });
      var wrap = table.closest(".md-typeset__scrollwrap") || table;
      wrap.style.display = shown ? "" : "none";
    });
  });
});
