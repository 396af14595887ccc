// The page's History: each change of a light's configuration, newest
// first, with who made it, its diff (GET …/diff, as lumen diff prints
// it) and a rollback to it (the light's rollback verb, after an inline
// confirmation). It reads the history only while its panel is open.
"use strict";
(() => {
  const PAGE = 50; // changes shown at first, and more at each Show older
  const diffs = new Map(); // "light seq" → the diff reply: the past does not change

  // diffView shows a unified diff: a line per line, + and - lines
  // colored and keeping their sign, in a box that scrolls by itself.
  function diffView(id, label, text) {
    const pre = h("pre", {});
    for (const l of (text || "no difference\n").replace(/\n$/, "").split("\n")) {
      const cls = l.startsWith("+++") || l.startsWith("---") ? "file" : l.startsWith("@@") ? "hunk" : l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : "same";
      pre.append(h("span", { class: cls }, l + "\n"));
    }
    return h("div", { class: "diff wide", id, tabindex: "0", role: "region", "aria-label": label }, pre);
  }

  function panel(light) {
    const el = lights.get(light);
    const body = $(el, ".history-body");
    const state = { shown: PAGE, open: new Set(), changes: [], timer: 0, loading: null };
    const status = h("p", { class: "history-status", role: "status" });
    const list = h("ol", { class: "changes", "aria-label": `${light}'s configuration changes, newest first` });
    const older = h("button", { type: "button", class: "older", hidden: "" }, "Show older");
    body.replaceChildren(status, list, older);
    older.addEventListener("click", () => { state.shown += PAGE; render(); });

    async function load() {
      let st, r;
      try { [st, r] = await api(light, "history", {}); } catch (err) { status.textContent = `history: ${err.message || err}`; status.classList.add("error"); return; }
      if (st !== 200) { status.textContent = r.error || `history: ${st}`; status.classList.add("error"); return; }
      status.classList.remove("error");
      state.changes = (r.changes || []).slice().reverse();
      if (!state.changes.length) status.textContent = `${light} has no configuration change in its journal`;
      else if (status.textContent.startsWith(`${light} has no`)) status.textContent = "";
      render();
    }
    function reload() {
      clearTimeout(state.timer);
      state.timer = setTimeout(load, 150);
    }

    function render() {
      list.replaceChildren(...state.changes.slice(0, state.shown).map((c, i) => entry(c, i === 0)));
      older.hidden = state.changes.length <= state.shown;
      if (!older.hidden) older.textContent = `Show older (${state.changes.length - state.shown} more)`;
    }

    function entry(c, current) {
      const li = h("li", { class: "change", "data-seq": String(c.seq) });
      const when = new Date(c.time);
      li.append(h("p", { class: "change-head" },
        h("time", { datetime: c.time }, isNaN(when) ? c.time : when.toLocaleString()), " ",
        h("span", { class: "by" }, c.by), " ", h("span", { class: "seq" }, `input ${c.seq}`),
        current ? h("span", { class: "current" }, " (current)") : ""),
        h("p", { class: "summary" }, c.summary));
      const id = `history-${light}-${c.seq}`;
      const show = h("button", { type: "button", class: "show-diff", "aria-expanded": "false", "aria-controls": id, "aria-label": `Show diff of input ${c.seq}: ${c.summary}` }, "Show diff");
      const actions = h("div", { class: "change-actions" }, show);
      li.append(actions);
      const slot = h("div", { class: "diff-slot" });
      show.addEventListener("click", () => toggleDiff(li, show, slot, id, c));
      if (!current) {
        const back = h("button", { type: "button", class: "rollback", "aria-label": `Roll back to here: to the configuration after input ${c.seq}` }, "Roll back to here");
        actions.append(back);
        back.addEventListener("click", () => askRollback(li, back));
      }
      li.append(slot);
      if (state.open.has(c.seq)) toggleDiff(li, show, slot, id, c);
      return li;
    }

    async function toggleDiff(li, show, slot, id, c) {
      if (show.getAttribute("aria-expanded") === "true") {
        show.setAttribute("aria-expanded", "false");
        show.textContent = "Show diff";
        show.setAttribute("aria-label", `Show diff of input ${c.seq}: ${c.summary}`);
        state.open.delete(c.seq);
        slot.replaceChildren();
        return;
      }
      show.setAttribute("aria-expanded", "true");
      show.textContent = "Hide diff";
      show.setAttribute("aria-label", `Hide diff of input ${c.seq}: ${c.summary}`);
      state.open.add(c.seq);
      const key = `${light} ${c.seq}`;
      let d = diffs.get(key);
      if (!d) {
        slot.replaceChildren(h("p", { class: "history-status" }, "reading the diff…"));
        try {
          const r = await fetch(`/api/v1/lights/${encodeURIComponent(light)}/diff?seq=${c.seq}`);
          d = await r.json();
        } catch (err) { d = { ok: false, error: err.message || String(err) }; }
        if (d.ok) diffs.set(key, d);
      }
      if (show.getAttribute("aria-expanded") !== "true") return; // closed meanwhile
      slot.replaceChildren(d.ok ? diffView(id, `Diff of input ${c.seq}, from ${d.from} to ${d.to}`, d.diff)
        : h("p", { class: "history-status error", id }, `the diff: ${d.error || "not readable"}`));
    }

    // askRollback asks, inline, before a rollback: it is one new change.
    function askRollback(li, back) {
      if ($(li, ".confirm")) return;
      const seq = () => Number(li.dataset.seq);
      const qid = `history-${light}-${li.dataset.seq}-q`;
      const yes = h("button", { type: "button", class: "do-rollback" }, "Roll back");
      const no = h("button", { type: "button", class: "cancel" }, "Cancel");
      const said = h("p", { class: "history-status", role: "status" });
      const box = h("div", { class: "confirm", role: "group", "aria-labelledby": qid },
        h("p", { id: qid }, `Roll back ${light} to its configuration after input ${seq()}? It is one new change, which can be rolled back too.`),
        h("div", { class: "change-actions" }, yes, no), said);
      back.after(box);
      back.disabled = true;
      no.focus();
      const close = () => { box.remove(); back.disabled = false; back.focus(); };
      no.addEventListener("click", close);
      yes.addEventListener("click", async () => {
        yes.disabled = no.disabled = true;
        said.classList.remove("error");
        said.textContent = "rolling back…";
        let st, r;
        try { [st, r] = await api(light, "rollback", { seq: seq() }); } catch (err) { st = 0; r = { error: err.message || String(err) }; }
        if (st !== 200) {
          said.textContent = `${r.error || `rollback: ${st}`}; nothing changed`;
          said.classList.add("error");
          yes.disabled = no.disabled = false;
          return;
        }
        status.classList.remove("error");
        status.textContent = `rolled back ${light} to its configuration after input ${seq()}`;
        box.remove();
        await load();
        // The focus was in the list, which is new: it goes to the panel's word.
        status.tabIndex = -1;
        status.focus();
      });
    }

    return { load, reload };
  }

  const panels = new Map(); // light → its History, made at the first opening
  for (const [light, el] of lights) {
    const d = $(el, "details.history");
    if (!d) continue;
    d.addEventListener("toggle", () => {
      if (!d.open) return;
      if (!panels.has(light)) panels.set(light, panel(light));
      panels.get(light).load();
    });
  }
  // A change of the configuration, from anywhere, shows while open.
  const CHANGES = new Set(["in.config", "out.config", "in.color"]);
  document.addEventListener("lumen:event", (ev) => {
    const { type, env } = ev.detail || {};
    const p = env && panels.get(env.light);
    if (p && CHANGES.has(type) && $(lights.get(env.light), "details.history").open) p.reload();
  });
})();
