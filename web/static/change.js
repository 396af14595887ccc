// Change: forms for a light's rules, states and schedules. Each sends
// the light's own verbs (append_rules, disable_rules, enable_rules,
// delete_rules, create_state, create_schedule, delete_schedule), as the
// CLI does; editing a rule is one input (PUT …/rules/{id}: the server
// applies the configuration with the rule replaced). A refusal is shown
// by its form, and the light is left as it was.
"use strict";

const changeGets = new Map(); // light → its last get
const FADES = [[0, "none"], [1000, "1 s"], [5000, "5 s"], [30000, "30 s"]];
const GESTURE_TRANSITIONS = ["button_click", "button_double_click", "button_hold"];

// changeField is a label and its control, one row of a form.
function changeField(id, label, control, cls = "") {
  control.id = id;
  return h("div", { class: `field ${cls}`.trim() }, h("label", { for: id }, label), control);
}
function changeOptions(select, values) {
  const keep = select.value;
  select.replaceChildren(...values.map(([v, text]) => h("option", { value: v }, text)));
  if (values.some(([v]) => String(v) === keep)) select.value = keep;
}
function changeSay(form, text, bad) {
  const m = $(form, ".change-msg");
  m.textContent = text;
  m.classList.toggle("error", !!bad);
}

// changeRuleWords is a rule in one line, as describe.Rule says it.
function changeRuleWords(r) {
  let s = `${r.id}: ${r.from} → ${r.to} on ${r.on}`;
  if (r.condition) s += ` if ${r.condition}`;
  if (r.action) s += ` then ${r.action}`;
  if (r.priority) s += `, priority ${r.priority}`;
  if (r.fade_ms) s += `, fade ${r.fade_ms / 1000} s`;
  if (!r.enabled) s += ", disabled";
  return s;
}
// changeScheduleWords is a schedule as describe.Schedule says it:
// "evening (0 19 * * * Europe/Paris, fires evening)", "wake (sunrise −30
// min, fires wake)".
function changeScheduleWords(s) {
  let when = s.cron + (s.tz ? ` ${s.tz}` : "");
  if (s.sun) {
    when = s.sun;
    const m = /^([+-]?)(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(s.offset || "");
    const parts = m ? [[m[2], "h"], [m[3], "min"], [m[4], "s"]].filter(([v]) => Number(v)).map(([v, u]) => `${Number(v)} ${u}`) : [];
    if (parts.length) when += ` ${m[1] === "-" ? "−" : "+"}${parts.join(" ")}`;
    else if (!m) when += ` ${s.offset}`;
  }
  return `${s.name} (${when}, fires ${s.fires})`;
}

// changeTransitions are the transitions the light knows: the button's
// gestures and those its rules, layers, schedules, timers and sources use.
function changeTransitions(g) {
  const t = new Set(GESTURE_TRANSITIONS);
  for (const r of g.rules || []) t.add(r.on);
  for (const l of g.layers || []) for (const r of l.rules || []) t.add(r.on);
  for (const s of g.schedules || []) t.add(s.fires);
  for (const tm of g.timers || []) t.add(tm.name);
  for (const src of g.sources || []) {
    if (src.fires) t.add(src.fires);
    if (src.type === "transition" && src.name) t.add(src.name);
  }
  return [...t].filter(Boolean).sort();
}

// changeConfirm puts a question with Yes and No in place of actions,
// and puts them back on No.
function changeConfirm(actions, question, yesLabel, noLabel, yes) {
  const before = [...actions.childNodes];
  const y = h("button", { type: "button", class: "danger", "aria-label": yesLabel }, "Delete");
  const n = h("button", { type: "button", "aria-label": noLabel }, "Keep");
  n.addEventListener("click", () => { actions.replaceChildren(...before); before[0].focus(); });
  y.addEventListener("click", () => { y.disabled = n.disabled = true; yes(); });
  actions.replaceChildren(h("span", { class: "ask-sure" }, question), y, n);
  n.focus();
}

function changeBuild(light, el) {
  const body = $(el, ".change-body");
  const id = (s) => `${light}-change-${s}`;

  // ── Rules ──
  const ruleList = h("ul", { class: "change-list rule-list" });
  const from = h("select", { name: "from" });
  const on = h("input", { name: "on", list: id("transitions"), autocomplete: "off", required: "", placeholder: "button_click" });
  const to = h("select", { name: "to" });
  const cond = h("input", { name: "condition", autocomplete: "off", placeholder: "getData('guests') > 0" });
  const prio = h("input", { name: "priority", type: "number", step: "1", value: "0" });
  const fade = h("select", { name: "fade_ms" });
  changeOptions(fade, FADES);
  const save = h("button", { type: "submit", class: "save" }, "Add rule");
  const cancel = h("button", { type: "button", class: "cancel", hidden: "" }, "Cancel the edit");
  const ruleTitle = h("h5", { id: id("rule-title") }, "Add a rule");
  const ruleForm = h("form", { class: "change-form rule-form", "aria-labelledby": id("rule-title") }, ruleTitle,
    changeField(id("from"), "From", from), changeField(id("on"), "On", on), changeField(id("to"), "To", to),
    changeField(id("condition"), "Condition", cond), changeField(id("priority"), "Priority", prio), changeField(id("fade"), "Fade", fade),
    h("datalist", { id: id("transitions") }),
    h("div", { class: "actions" }, save, cancel), h("p", { class: "change-msg", role: "status" }));
  const endEdit = () => {
    delete ruleForm.dataset.edit;
    ruleTitle.textContent = "Add a rule";
    save.textContent = "Add rule";
    cancel.hidden = true;
  };
  cancel.addEventListener("click", () => { endEdit(); ruleForm.reset(); changeSay(ruleForm, ""); });
  ruleForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const rule = { from: from.value, on: on.value.trim(), to: to.value, priority: Number(prio.value || 0) };
    if (cond.value.trim()) rule.condition = cond.value.trim();
    if (Number(fade.value)) rule.fade_ms = Number(fade.value);
    if (!Number.isInteger(rule.priority)) { changeSay(ruleForm, "the priority is a whole number; nothing was changed", true); return; }
    let status, reply;
    const editing = ruleForm.dataset.edit;
    try {
      if (editing) {
        const was = JSON.parse(ruleForm.dataset.was);
        Object.assign(rule, { enabled: was.enabled });
        if (was.action) rule.action = was.action;
        const r = await fetch(`/api/v1/lights/${encodeURIComponent(light)}/rules/${encodeURIComponent(editing)}`, {
          method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ rule, was }),
        });
        status = r.status;
        reply = await r.json();
      } else {
        [status, reply] = await api(light, "append_rules", { rules: [rule] });
      }
    } catch (err) { changeSay(ruleForm, `${err.message || err}; nothing was changed`, true); return; }
    if (status !== 200) { changeSay(ruleForm, `${reply.error || status}; nothing was changed`, true); return; }
    changeSay(ruleForm, editing ? `rule ${editing} changed` : "rule added", false);
    endEdit();
    ruleForm.reset();
    refresh(light);
  });
  ruleList.addEventListener("click", async (ev) => {
    const b = ev.target.closest("button[data-act]");
    if (!b) return;
    const li = b.closest("li");
    const rid = li.dataset.rule;
    const rule = (changeGets.get(light).rules || []).find((r) => r.id === rid);
    if (!rule) return;
    const send = async (verb, body) => {
      let status, reply;
      try { [status, reply] = await api(light, verb, body); } catch (err) { status = 0; reply = { error: err.message || String(err) }; }
      changeSay(ruleForm, status === 200 ? "" : `${verb} ${rid}: ${reply.error || status}`, status !== 200);
      refresh(light);
    };
    switch (b.dataset.act) {
      case "edit":
        ruleForm.dataset.edit = rid;
        ruleForm.dataset.was = JSON.stringify(rule);
        from.value = rule.from;
        if (from.value !== rule.from) { from.append(h("option", { value: rule.from }, rule.from)); from.value = rule.from; }
        on.value = rule.on;
        to.value = rule.to;
        cond.value = rule.condition || "";
        prio.value = rule.priority || 0;
        if (!FADES.some(([v]) => v === (rule.fade_ms || 0))) fade.append(h("option", { value: rule.fade_ms }, `${rule.fade_ms / 1000} s`));
        fade.value = String(rule.fade_ms || 0);
        ruleTitle.textContent = `Edit rule ${rid}`;
        save.textContent = `Save rule ${rid}`;
        cancel.hidden = false;
        changeSay(ruleForm, "");
        on.focus();
        break;
      case "toggle":
        send(rule.enabled ? "disable_rules" : "enable_rules", { ids: [rid] });
        break;
      case "delete":
        changeConfirm($(li, ".actions"), `Delete rule ${rid}?`, `Yes, delete rule ${rid}`, `Keep rule ${rid}`, () => send("delete_rules", { ids: [rid] }));
        break;
    }
  });

  // ── States ──
  const stName = h("input", { name: "name", autocomplete: "off", required: "", placeholder: "teal" });
  const stColor = h("input", { name: "color", type: "color", value: "#008080" });
  const stateForm = h("form", { class: "change-form state-form", "aria-labelledby": id("state-title") }, h("h5", { id: id("state-title") }, "Add a state"),
    changeField(id("state-name"), "Name", stName), changeField(id("state-color"), "Color", stColor),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Add state")), h("p", { class: "change-msg", role: "status" }));
  stateForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const hex = stColor.value;
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
    let status, reply;
    try { [status, reply] = await api(light, "create_state", { name: stName.value.trim(), r, g, b }); } catch (err) { status = 0; reply = { error: err.message || String(err) }; }
    if (status !== 200) { changeSay(stateForm, `${reply.error || status}; nothing was changed`, true); return; }
    changeSay(stateForm, `state ${stName.value.trim()} added`, false);
    stName.value = "";
    refresh(light);
  });

  // ── Schedules ──
  const schedList = h("ul", { class: "change-list schedule-list" });
  const scName = h("input", { name: "name", autocomplete: "off", required: "", placeholder: "evening" });
  const scKind = h("select", { name: "kind" });
  changeOptions(scKind, [["cron", "Cron"], ["sun", "Sun"]]);
  const scCron = h("input", { name: "cron", autocomplete: "off", placeholder: "0 19 * * *" });
  const scSun = h("select", { name: "sun" });
  changeOptions(scSun, [["sunrise", "sunrise"], ["sunset", "sunset"], ["dawn", "dawn"], ["dusk", "dusk"]]);
  const scOffset = h("input", { name: "offset", type: "number", step: "1", min: "-720", max: "720", value: "0" });
  const scFires = h("input", { name: "fires", list: id("transitions"), autocomplete: "off", required: "", placeholder: "evening" });
  const cronField = changeField(id("sched-cron"), "Cron", scCron);
  const sunFields = [changeField(id("sched-sun"), "Sun", scSun), changeField(id("sched-offset"), "Offset (minutes, − before)", scOffset)];
  const showKind = () => {
    cronField.hidden = scKind.value !== "cron";
    for (const f of sunFields) f.hidden = scKind.value !== "sun";
  };
  scKind.addEventListener("change", showKind);
  const schedForm = h("form", { class: "change-form schedule-form", "aria-labelledby": id("sched-title") }, h("h5", { id: id("sched-title") }, "Add a schedule"),
    changeField(id("sched-name"), "Name", scName), changeField(id("sched-kind"), "Kind", scKind), cronField, ...sunFields,
    changeField(id("sched-fires"), "Fires (transition)", scFires),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Add schedule")), h("p", { class: "change-msg", role: "status" }));
  showKind();
  schedForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const s = { name: scName.value.trim(), fires: scFires.value.trim() };
    if (scKind.value === "cron") s.cron = scCron.value.trim();
    else {
      s.sun = scSun.value;
      if (Number(scOffset.value)) s.offset = `${Number(scOffset.value)}m`;
    }
    let status, reply;
    try { [status, reply] = await api(light, "create_schedule", s); } catch (err) { status = 0; reply = { error: err.message || String(err) }; }
    if (status !== 200) { changeSay(schedForm, `${reply.error || status}; nothing was changed`, true); return; }
    changeSay(schedForm, `schedule ${s.name} added`, false);
    schedForm.reset();
    showKind();
    refresh(light);
  });
  schedList.addEventListener("click", (ev) => {
    const b = ev.target.closest("button[data-act=delete]");
    if (!b) return;
    const li = b.closest("li");
    const name = li.dataset.schedule;
    changeConfirm($(li, ".actions"), `Delete schedule ${name}?`, `Yes, delete schedule ${name}`, `Keep schedule ${name}`, async () => {
      let status, reply;
      try { [status, reply] = await api(light, "delete_schedule", { name }); } catch (err) { status = 0; reply = { error: err.message || String(err) }; }
      changeSay(schedForm, status === 200 ? "" : `delete_schedule ${name}: ${reply.error || status}`, status !== 200);
      refresh(light);
    });
  });

  body.replaceChildren(
    h("section", { class: "change-part", "aria-labelledby": id("rules") }, h("h4", { id: id("rules") }, "Rules"), ruleList, ruleForm),
    h("section", { class: "change-part", "aria-labelledby": id("states") }, h("h4", { id: id("states") }, "States"), stateForm),
    h("section", { class: "change-part", "aria-labelledby": id("schedules") }, h("h4", { id: id("schedules") }, "Schedules"), schedList, schedForm));
}

// changeShow puts the light's rules, states, transitions and schedules in
// its forms.
function changeShow(light, g) {
  const el = lights.get(light);
  const body = $(el, ".change-body");
  if (!body.firstChild) changeBuild(light, el);
  changeGets.set(light, g);
  const states = [{ name: "off" }, ...(g.states || []).filter((s) => s.name !== "off")].map((s) => [s.name, s.name]);
  const form = $(body, ".rule-form");
  if (!form.dataset.edit) {
    changeOptions($(form, "select[name=from]"), [["*", "* (any state)"], ...states]);
    changeOptions($(form, "select[name=to]"), states);
  }
  $(body, "datalist").replaceChildren(...changeTransitions(g).map((t) => h("option", { value: t })));
  // A list that did not change is left as it is: a question asked in it
  // (delete?) stays.
  const same = (list, v) => { const k = JSON.stringify(v); if (list.dataset.key === k) return true; list.dataset.key = k; return false; };
  const rules = g.rules || [];
  if (!same($(body, ".rule-list"), rules)) $(body, ".rule-list").replaceChildren(...(rules.length ? rules.map((r) => {
    const act = (name, text, label) => h("button", { type: "button", "data-act": name, "aria-label": label }, text);
    return h("li", { "data-rule": r.id, class: r.enabled ? "" : "disabled" }, h("span", { class: "words" }, changeRuleWords(r)),
      h("span", { class: "actions" }, act("edit", "Edit", `Edit rule ${r.id}`),
        r.enabled ? act("toggle", "Disable", `Disable rule ${r.id}`) : act("toggle", "Enable", `Enable rule ${r.id}`),
        act("delete", "Delete", `Delete rule ${r.id}`)));
  }) : [h("li", {}, "No rules: add one below.")]));
  const scheds = (g.schedules || []).map((s) => ({ ...s, next: undefined }));
  if (!same($(body, ".schedule-list"), scheds)) $(body, ".schedule-list").replaceChildren(...(scheds.length ? scheds.map((s) => h("li", { "data-schedule": s.name },
    h("span", { class: "words" }, changeScheduleWords(s)),
    h("span", { class: "actions" }, h("button", { type: "button", "data-act": "delete", "aria-label": `Delete schedule ${s.name}` }, "Delete")))) : [h("li", {}, "No schedules.")]));
}

document.addEventListener("lumen:get", (ev) => {
  if (lights.has(ev.detail.light)) changeShow(ev.detail.light, ev.detail.get);
});
for (const [light, el] of lights) {
  const d = $(el, "details.change");
  d.addEventListener("toggle", () => { if (d.open) refresh(light); });
}
