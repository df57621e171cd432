// The ops page refreshes its live part (queues, paused state, the hour's charts) every 5 s
// without a full reload; without JavaScript the Refresh link does the same.
(function () {
  const live = document.getElementById("live");
  const auto = document.getElementById("auto-refresh");
  if (!live) return;
  async function refresh() {
    try {
      const answer = await fetch("/ops/live", { credentials: "same-origin", cache: "no-store" });
      if (answer.ok) {
        live.innerHTML = await answer.text();
        live.dataset.refreshedAt = new Date().toISOString();
        if (auto) auto.textContent = "(refreshed " + new Date().toLocaleTimeString() + ")";
      }
    } catch (error) {
      if (auto) auto.textContent = "(not refreshed: " + error + ")";
    }
  }
  setInterval(refresh, 5000);
})();
