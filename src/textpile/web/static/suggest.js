// textpile: search as you type. Progressive enhancement: without this script the search
// form works as it is; with it, titles and sections matching what is typed are listed as
// links under the box (from /suggest?q=, at most one request in flight).
(function () {
  "use strict";
  var input = document.getElementById("tp-q");
  if (!input || !window.fetch) { return; }
  var form = input.form;
  var list = document.createElement("ul");
  list.id = "tp-suggest";
  list.className = "tp-suggest";
  list.hidden = true;
  list.setAttribute("aria-label", "Suggestions");
  form.parentNode.insertBefore(list, form.nextSibling);
  input.setAttribute("autocomplete", "off");
  input.setAttribute("aria-controls", "tp-suggest");
  var url = input.getAttribute("data-suggest-url");
  var pending = null, timer = null, last = "";

  function show(body) {
    list.textContent = "";
    var items = body.pages.map(function (p) { return { title: p.title, url: p.url, note: "" }; })
      .concat(body.sections.map(function (s) { return { title: s.title, url: s.url, note: s.page_title }; }));
    items.forEach(function (item) {
      if (!/^https?:\/\//i.test(item.url)) { return; }
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = item.url;
      a.textContent = item.title;
      li.appendChild(a);
      if (item.note) {
        var span = document.createElement("span");
        span.className = "tp-suggest-note";
        span.textContent = " · " + item.note;
        li.appendChild(span);
      }
      list.appendChild(li);
    });
    list.hidden = list.childNodes.length === 0;
  }

  function lookup() {
    var q = input.value;
    if (q === last) { return; }
    last = q;
    if (pending) { pending.abort(); }
    if (q.trim().length < 2) { show({ pages: [], sections: [] }); return; }
    pending = new AbortController();
    fetch(url + "?q=" + encodeURIComponent(q), { signal: pending.signal, headers: { accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : { pages: [], sections: [] }; })
      .then(show)
      .catch(function () {});
  }

  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(lookup, 60);
  });
  input.addEventListener("keydown", function (e) {
    if (e.key === "Escape") { list.hidden = true; }
  });
})();
