// Anvil console: live updates and actions. No inline script anywhere
// (the Content-Security-Policy forbids it); everything is wired here.
"use strict";
(function () {
  const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  const body = document.body;

  function toast(text, bad) {
    const t = document.getElementById("toast");
    if (!t) return;
    t.textContent = text;
    t.className = bad ? "bad" : "ok";
    t.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { t.hidden = true; }, bad ? 15000 : 6000);
  }

  async function post(url, fields) {
    const res = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields || {}),
    });
    if (url === "/logout") return { ok: true, message: "" };
    let out;
    try { out = await res.json(); } catch (e) { out = { ok: false, message: "HTTP " + res.status }; }
    out.status = res.status;
    return out;
  }

  // Live: the server sends the regions that changed; swap them in place.
  function apply(patches) {
    for (const p of patches) {
      const el = document.getElementById(p.id);
      if (el) el.outerHTML = p.html;
    }
    body.dataset.liveUpdates = String(Number(body.dataset.liveUpdates || "0") + 1);
  }
  const live = body.dataset.live;
  if (live && window.EventSource) {
    const ind = document.getElementById("live-indicator");
    const es = new EventSource(live);
    es.onopen = () => { body.dataset.liveState = "open"; if (ind) ind.className = "live on"; };
    es.onerror = () => { body.dataset.liveState = "reconnecting"; if (ind) ind.className = "live off"; };
    es.addEventListener("patch", (e) => apply(JSON.parse(e.data)));
    es.addEventListener("signedout", () => { es.close(); location.assign("/login?next=" + encodeURIComponent(location.pathname + location.search)); });
  }

  document.addEventListener("click", async (ev) => {
    const close = ev.target.closest("[data-close]");
    if (close) { document.getElementById(close.dataset.close).close(); return; }
    const open = ev.target.closest("[data-open]");
    if (open) {
      const d = document.getElementById(open.dataset.open);
      const f = d.querySelector("form");
      f.elements.kind.value = open.dataset.kind;
      f.elements.ns.value = open.dataset.ns;
      f.elements.name.value = open.dataset.name;
      f.elements.version.value = "";
      f.elements.version.placeholder = open.dataset.version || "v1.37.2";
      document.getElementById("upgrade-target").textContent = (open.dataset.kind === "machinesets" ? "MachineSet " : "Machine ") + open.dataset.name;
      document.getElementById("preview-result").textContent = "";
      d.showModal();
      return;
    }
    const b = ev.target.closest("[data-action]");
    if (!b) return;
    ev.preventDefault();
    if (b.dataset.confirm && !window.confirm(b.dataset.confirm)) return;
    const fields = {};
    if (b.dataset.op) fields.op = b.dataset.op;
    if (b.dataset.version) fields.version = b.dataset.version;
    if (b.dataset.retryFailed) fields.retryFailed = b.dataset.retryFailed;
    b.disabled = true;
    try {
      const out = await post(b.dataset.action, fields);
      if (b.dataset.logout) { location.assign("/login"); return; }
      toast(out.message || (out.ok ? "done" : "failed"), !out.ok);
      if (out.ok && b.dataset.closeAfter) document.getElementById(b.dataset.closeAfter).close();
    } catch (e) {
      toast("the console did not answer: " + e, true);
    } finally {
      b.disabled = false;
    }
  });

  // The upgrade dialog asks for a preview first; its table offers the start.
  const form = document.getElementById("upgrade-form");
  if (form) form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = form.elements;
    const url = "/actions/" + f.kind.value + "/" + encodeURIComponent(f.ns.value) + "/" + encodeURIComponent(f.name.value) + "/preview";
    const out = await post(url, { version: f.version.value.trim() });
    const target = document.getElementById("preview-result");
    if (out.ok) {
      target.innerHTML = out.html; // rendered by the server's html/template
    } else {
      target.textContent = out.message;
      target.className = "bad";
    }
  });
})();
