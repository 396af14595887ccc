// The event log in words: the newest entries from the log endpoint, then
// each event as the journal streams it (page.js's lumen:event, whose
// envelope has its words with ?words=1), newest first; filters by kind
// and light, Older for the page before, and Why? under any entry, which
// asks the light's why verb.
"use strict";
{
  const logEl = document.getElementById("log");
  const older = document.querySelector("section.events .older");
  const logNote = document.querySelector("section.events .log-note");
  const lightSelect = document.getElementById("log-light");
  const kindButtons = [...document.querySelectorAll("section.events .kind")];
  const MAX = 300; // entries kept in the page
  const atHub = !!document.querySelector("nav.house");
  const several = lights.size > 1 || atHub;
  let next = 0; // the before of the older page; 0: there is none
  let generation = 0; // a reload makes the answers of earlier loads stale
  let loaded = false;
  const early = []; // events streamed before the first page came
  const keys = new Set(); // light:seq of what is shown
  const key = (e) => `${e.light}:${e.seq}`;

  const kinds = () => kindButtons.filter((b) => b.getAttribute("aria-pressed") === "true").map((b) => b.dataset.kind);
  const wanted = (e) => kinds().includes(e.kind) && (!lightSelect.value || lightSelect.value === e.light);

  // known adds light to the Light select, in order, unless it is there
  // (at a hub a light may join the house after the page was drawn).
  function known(light) {
    if (!several || !light || [...lightSelect.options].some((o) => o.value === light)) return;
    const after = [...lightSelect.options].find((o) => o.value && o.value > light);
    lightSelect.insertBefore(h("option", { value: light }, light), after || null);
  }
  if (several) {
    for (const name of [...lights.keys()].sort()) known(name);
    lightSelect.parentElement.hidden = false;
  }

  // value is a variable's value as describe.Value says it: a string as it
  // is (quoted when it has spaces), an object or list as its parts.
  function value(v) {
    if (v === null || v === undefined) return "null";
    if (typeof v === "string") return v === "" || /[ ,:()[\]"]/.test(v) ? JSON.stringify(v) : v;
    if (Array.isArray(v)) return "[" + v.map(value).join(", ") + "]";
    if (typeof v === "object") return "(" + Object.keys(v).sort().map((k) => `${k}: ${value(v[k])}`).join(", ") + ")";
    return String(v);
  }
  const clock = (t) => { const d = new Date(t); return isNaN(d) ? "" : d.toLocaleTimeString(); };

  // entry is one event as a list item: time, light, sequence, its words,
  // and Why?.
  function entry(e) {
    const why = h("button", { type: "button", class: "why", "aria-expanded": "false" }, "Why?");
    const body = h("div", { class: "why-body" });
    body.hidden = true;
    const li = h("li", { class: `entry ${e.kind}${e.error ? " error" : ""}`, "data-light": e.light, "data-seq": e.seq, "data-kind": e.kind, "data-type": `${e.dir}.${e.type}` },
      h("div", { class: "entry-head" },
        h("time", { datetime: e.time }, clock(e.time)), " ",
        ...(several ? [h("span", { class: "entry-light" }, e.light), " "] : []),
        h("span", { class: "seq" }, `#${e.seq}`), " ", h("span", { class: "type" }, `${e.dir}.${e.type}`), " ",
        h("span", { class: "words" }, e.text), " ", why),
      body);
    why.addEventListener("click", () => toggleWhy(e, why, body));
    return li;
  }
  function trimOldest() {
    while (logEl.children.length > MAX) {
      const li = logEl.lastElementChild;
      keys.delete(`${li.dataset.light}:${li.dataset.seq}`);
      li.remove();
      // On a daemon the next page starts below what is kept; at a hub
      // pages go by the house copy's sequences, which only the endpoint
      // tells, so next stays.
      if (!atHub) { next = Number(logEl.lastElementChild.dataset.seq); older.hidden = false; }
    }
  }
  function addNewest(e) {
    if (keys.has(key(e)) || !wanted(e)) return;
    keys.add(key(e));
    logEl.prepend(entry(e));
    trimOldest();
  }

  // load reads a page of the log: the newest (reset), or the one before
  // what is shown.
  async function load(reset) {
    const gen = reset ? ++generation : generation;
    const want = kinds();
    if (reset && !want.length) {
      logEl.replaceChildren(); keys.clear(); next = 0; older.hidden = true;
      return;
    }
    const q = new URLSearchParams({ limit: "50" });
    if (want.length < kindButtons.length) q.set("kinds", want.join(","));
    if (!reset) q.set("before", String(next));
    const path = lightSelect.value ? `/api/v1/lights/${encodeURIComponent(lightSelect.value)}/log` : "/api/v1/log";
    let d;
    try {
      const r = await fetch(`${path}?${q}`);
      d = await r.json();
    } catch (err) { logNote.textContent = `The log could not be read: ${err.message || err}`; return; }
    if (gen !== generation) return;
    if (!d.ok) { logNote.textContent = `The log could not be read: ${d.error}`; return; }
    logNote.textContent = "";
    if (reset) { logEl.replaceChildren(); keys.clear(); }
    const items = [];
    for (const e of d.entries) {
      if (keys.has(key(e))) continue;
      keys.add(key(e));
      items.push(entry(e));
    }
    logEl.append(...items);
    while (logEl.children.length > MAX) { // the newest go: Older was asked for
      const li = logEl.firstElementChild;
      keys.delete(`${li.dataset.light}:${li.dataset.seq}`);
      li.remove();
    }
    next = d.next;
    older.hidden = !next;
    if (!d.entries.length && !logEl.children.length) logNote.textContent = reset ? "Nothing here yet." : "";
  }

  // The first page at once. Should the stream open only after the page
  // was asked for, the events between the two are read again once it is
  // open; what the stream sent meanwhile goes on top, none twice.
  let openSeen = false;
  journalOpen.then(() => { openSeen = true; });
  async function catchUp() {
    const q = new URLSearchParams({ limit: "50" });
    const want = kinds();
    if (!want.length) return;
    if (want.length < kindButtons.length) q.set("kinds", want.join(","));
    const path = lightSelect.value ? `/api/v1/lights/${encodeURIComponent(lightSelect.value)}/log` : "/api/v1/log";
    try {
      const d = await (await fetch(`${path}?${q}`)).json();
      const missed = (d.entries || []).filter((e) => !keys.has(key(e)));
      for (const e of missed.reverse()) addNewest(e);
    } catch { /* the stream goes on; a reload reads the log again */ }
  }
  (async () => {
    const openFirst = openSeen;
    await load(true);
    performance.mark("lumen-log");
    if (!openFirst) {
      await Promise.race([journalOpen, new Promise((r) => setTimeout(r, 3000))]);
      await catchUp();
    }
    loaded = true;
    for (const e of early.splice(0)) addNewest(e);
  })();

  document.addEventListener("lumen:event", (ev) => {
    const { id, type, env } = ev.detail;
    if (env.text === undefined) return;
    const [dir, t] = type.split(".");
    // At a hub the id is a place in the house's copy; seq is the Pi's.
    const e = { seq: env.seq ?? Number(id), time: env.time, light: env.light, dir, type: t, kind: env.kind, by: env.by, cause: env.cause, text: env.text, error: !!env.error };
    known(e.light);
    if (loaded) addNewest(e); else early.push(e);
  });

  for (const b of kindButtons) {
    b.addEventListener("click", () => {
      b.setAttribute("aria-pressed", String(b.getAttribute("aria-pressed") !== "true"));
      // What is shown follows at once; the page is then read again.
      for (const li of logEl.children) li.hidden = !kinds().includes(li.dataset.kind);
      load(true);
    });
  }
  lightSelect.addEventListener("change", () => load(true));
  older.addEventListener("click", () => load(false));

  // ── Why? ─────────────────────────────────────────────────────────────
  // An output is asked about by its input (its cause).
  async function toggleWhy(e, button, body) {
    if (button.getAttribute("aria-expanded") === "true") {
      button.setAttribute("aria-expanded", "false");
      body.hidden = true;
      return;
    }
    button.setAttribute("aria-expanded", "true");
    body.hidden = false;
    body.replaceChildren(h("p", {}, "Asking why…"));
    const seq = e.dir === "out" && e.cause ? e.cause : e.seq;
    let status, w;
    try { [status, w] = await api(e.light, "why", { seq }); } catch (err) { status = 0; w = { error: err.message || String(err) }; }
    if (button.getAttribute("aria-expanded") !== "true") return;
    if (status !== 200 || !w.ok) {
      body.replaceChildren(h("p", { class: "why-error" }, `Why? could not be answered: ${w.error || status}`));
      return;
    }
    body.replaceChildren(...whyParts(w));
  }
  // inputWords are the log's words for the input seq of light, when the
  // page shows it.
  function inputWords(light, seq) {
    const li = logEl.querySelector(`li[data-light="${CSS.escape(light)}"][data-seq="${seq}"][data-kind="input"] .words`);
    return li ? li.textContent : "";
  }
  function setBy(s) {
    if (!s) return "not set since the journal's start";
    const src = s.source ? ` from source ${s.source}` : "";
    return `set by input #${s.seq} (${s.type}${src}) by ${s.by || "someone"} at ${clock(s.time)}`;
  }
  function reads(list) {
    return h("ul", { class: "why-reads" }, ...list.map((r) => h("li", {},
      h("code", {}, r.name), r.undefined ? ": undefined (never set)" : ` = ${value(r.value)}, ${setBy(r.set_by)}`)));
  }
  function whyParts(w) {
    const parts = [h("p", { class: "why-summary" }, `${w.light} is ${w.state}: ${w.summary}`)];
    const i = w.input || {};
    if (i.seq) {
      const words = inputWords(w.light, i.seq);
      parts.push(h("p", {}, `Input #${i.seq} (${i.type})${words ? ": " + words : ""}, by ${i.by || "someone"} at ${clock(i.time)}`));
    }
    if (w.rule) {
      const r = w.rule;
      parts.push(h("p", {}, "Rule ", h("code", { class: "why-rule" }, r.id), ` fired: ${r.from} → ${r.to} on ${r.on}${r.priority ? `, priority ${r.priority}` : ""}`));
      if (w.condition && w.condition.text) parts.push(h("p", {}, "Its condition ", h("code", {}, w.condition.text), ` was ${w.condition.value}`));
      if (r.action) parts.push(h("p", {}, "Its action ", h("code", {}, r.action)));
    } else {
      parts.push(h("p", {}, "No rule fired."));
    }
    if (w.reads && w.reads.length) parts.push(h("p", {}, "It read:"), reads(w.reads));
    if (w.skipped && w.skipped.length) {
      parts.push(h("p", {}, "Rules that did not fire:"), h("ul", {}, ...w.skipped.map((s) => h("li", {}, h("code", {}, s.id), `: ${s.why}`,
        ...(s.reads && s.reads.length ? ["; read " + s.reads.map((r) => `${r.name} = ${value(r.value)}`).join(", ")] : [])))));
    }
    for (const n of w.notes || []) parts.push(h("p", { class: "why-note" }, n));
    return parts;
  }
}
