// The web judge's two scripts: the live status of a job page (polls the API until the job is graded, then opens
// the verdict page) and the editor's tab key (a tab inserts four spaces). Without JavaScript the job page
// refreshes itself every 3 s and the editor is a plain text box.
"use strict";
const job = document.getElementById("job");
if (job) {
  const state = document.getElementById("state");
  const detail = document.getElementById("detail");
  const poll = async () => {
    try {
      const reply = await fetch(job.dataset.statusUrl, { credentials: "same-origin" });
      if (reply.ok) {
        const now = await reply.json();
        state.textContent = now.state;
        state.className = "state " + now.state;
        detail.textContent = now.state === "queued" ? `${now.ahead} job(s) ahead` : (now.stage || "");
        if (now.state === "done") { window.location.assign(job.dataset.verdictPage); return; }
        if (now.state === "failed") { detail.textContent = now.error || ""; return; }
      }
    } catch (error) { detail.textContent = "(the judge did not answer; trying again)"; }
    setTimeout(poll, 700);
  };
  setTimeout(poll, 300);
}
const editor = document.getElementById("source");
if (editor) {
  editor.addEventListener("keydown", (event) => {
    if (event.key !== "Tab" || event.shiftKey) return;
    event.preventDefault();
    editor.setRangeText("    ", editor.selectionStart, editor.selectionEnd, "end");
  });
}
