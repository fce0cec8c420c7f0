// textpile: style elements that this page's scripts make carry the page's nonce, so the
// Content-Security-Policy, which allows inline styles by nonce only, applies them (the SQL
// editors insert their stylesheets as <style> elements). Loaded first, with the nonce.
(function (nonce) {
  if (!nonce) return;
  var create = Document.prototype.createElement;
  Document.prototype.createElement = function (name, options) {
    var element = create.call(this, name, options);
    if (String(name).toLowerCase() === "style") element.nonce = nonce;
    return element;
  };
})(document.currentScript && document.currentScript.nonce);
