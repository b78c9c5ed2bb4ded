// Live refresh without a page reload. Every element with data-live-src is
// fetched again every data-refresh-seconds (2 s) and its content replaced by
// the server-rendered fragment: the server escapes every text from the table,
// so nothing here builds HTML. No refresh while the tab is hidden; a failed
// refresh keeps the last content and says so.
(function () {
  "use strict";

  function say(text, failed) {
    var status = document.getElementById("live-status");
    if (status) {
      status.textContent = text;
      status.classList.toggle("failed", failed);
    }
  }

  function refresh(region) {
    if (document.hidden) {
      return Promise.resolve();
    }
    return fetch(region.dataset.liveSrc, { cache: "no-store", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) {
          throw new Error("HTTP " + response.status);
        }
        return response.text();
      })
      .then(function (html) {
        region.innerHTML = html;
        say("Updated " + new Date().toLocaleTimeString() + ".", false);
      })
      .catch(function (error) {
        say("Refresh failed (" + error.message + "); showing what was last read.", true);
      });
  }

  function start(region) {
    var seconds = Math.max(Number(region.dataset.refreshSeconds) || 2, 2);
    function again() {
      refresh(region).then(function () {
        window.setTimeout(again, seconds * 1000);
      });
    }
    window.setTimeout(again, seconds * 1000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-live-src]").forEach(start);
  });
})();
