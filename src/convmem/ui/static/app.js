// convmem inspector: the only script of its own. Loaded from /static (the Content
// Security Policy allows no inline script).
(function () {
  "use strict";
  // The cookie now holds the token: take it out of the address bar and history.
  var here = new URL(window.location.href);
  if (here.searchParams.has("token")) {
    here.searchParams.delete("token");
    window.history.replaceState(null, "", here.pathname + here.search + here.hash);
  }
})();
