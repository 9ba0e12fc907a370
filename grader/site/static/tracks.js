// The track filters on a problem page (render.py copies this file beside style.css). Each .tracked block holds a
// hidden .track-filter and either one <tbody data-view> per view (a leaderboard: "all", then each track's own
// ranking, baseline included) or rows with data-track (the recent submissions). Without JavaScript the filters
// stay hidden and every block shows all its rows.
"use strict";
for (const filter of document.querySelectorAll(".tracked > .track-filter")) {
  const block = filter.parentElement;
  filter.hidden = false;
  filter.addEventListener("click", (event) => {
    const chosen = event.target.closest("button[data-view]");
    if (!chosen) return;
    const view = chosen.dataset.view;
    for (const button of filter.querySelectorAll("button[data-view]")) {
      button.setAttribute("aria-pressed", String(button === chosen));
    }
    const views = block.querySelectorAll("tbody[data-view]");
    for (const body of views) body.hidden = body.dataset.view !== view;
    if (views.length) return;
    for (const row of block.querySelectorAll("tr[data-track]")) {
      row.hidden = view !== "all" && row.dataset.track !== view;
    }
  });
}
