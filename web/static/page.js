// Lumen's page. The server renders every light with its state and color;
// this script makes it live: the swatches follow the real LEDs, the
// journal streams into the log and the panels, and each panel sends the
// light's own verbs (the same as the lumen CLI and nats).
"use strict";

const lights = new Map(); // name → its section
for (const el of document.querySelectorAll(".light")) lights.set(el.dataset.light, el);

const $ = (el, sel) => el.querySelector(sel);
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") el.className = v; else el.setAttribute(k, v);
  }
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c ?? "")));
  return el;
}

// api sends verb to light with body and returns [status, reply].
async function api(light, verb, body = {}, init = {}) {
  const r = await fetch(`/api/v1/lights/${encodeURIComponent(light)}/${verb}`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), ...init,
  });
  let reply = {};
  try { reply = await r.json(); } catch { /* not JSON */ }
  return [r.status, reply];
}

// ── The LED ──────────────────────────────────────────────────────────
// A person sees the color before gamma and the brightness cap (raw);
// pixels are the LED's duty, for the hardware.
function paint(led) {
  const el = lights.get(led.light);
  const px = led.raw && led.raw.length ? led.raw : led.pixels;
  if (!el || !px || !px.length) return;
  const c = px[0];
  $(el, ".state").textContent = led.state;
  $(el, "circle").setAttribute("fill", `rgb(${c.r},${c.g},${c.b})`);
  $(el, ".rgb").textContent = `rgb(${c.r}, ${c.g}, ${c.b})`;
  showControls(el, led.state, led.brightness);
}
// showControls puts the light's state and dimmer in its controls, but
// leaves a slider alone while a finger is on it.
function showControls(el, state, brightness) {
  $(el, ".power").setAttribute("aria-pressed", String(state !== "off"));
  const s = $(el, ".brightness");
  if (brightness && !s.dataset.held) s.value = brightness;
  for (const b of $(el, ".gallery").children) {
    b.setAttribute("aria-pressed", String(b.dataset.state === state));
    // The picker shows the state's color, as its swatch has it.
    const m = b.dataset.state === state && document.activeElement !== $(el, ".color") && /(\d+),(\d+),(\d+)/.exec($(b, "circle").getAttribute("fill"));
    if (m) $(el, ".color").value = "#" + m.slice(1).map((v) => Number(v).toString(16).padStart(2, "0")).join("");
  }
  el.dataset.state = state;
}
// stream opens an event stream with its listeners, and opens it again
// should the browser give up on it (an answer that is not a stream).
function stream(url, listeners, onopen, onerror) {
  const es = new EventSource(url);
  for (const [type, fn] of listeners) es.addEventListener(type, fn);
  es.onopen = onopen || null;
  es.onerror = () => {
    if (onerror) onerror();
    if (es.readyState === EventSource.CLOSED) setTimeout(() => stream(url, listeners, onopen, onerror), 2000);
  };
  return es;
}
stream("/api/v1/led", [["led", (ev) => paint(JSON.parse(ev.data))]]);

// ── Everyday control: power, dimmer, color, states ───────────────────
// warm white is 2700 K, as `lumen color warm white` gives it.
const PRESETS = [["warm white", "#ffa757"], ["red", "#ff0000"], ["orange", "#ffa500"], ["yellow", "#ffff00"], ["green", "#008000"],
  ["cyan", "#00ffff"], ["blue", "#0000ff"], ["purple", "#800080"], ["pink", "#ffc0cb"]];
const SVG = "http://www.w3.org/2000/svg";
function note(el, text) { $(el, ".note").textContent = text; }
function dot(fill) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 20 20");
  svg.setAttribute("class", "dot");
  svg.setAttribute("aria-hidden", "true");
  const c = document.createElementNS(SVG, "circle");
  for (const [k, v] of [["cx", 10], ["cy", 10], ["r", 9], ["fill", fill]]) c.setAttribute(k, v);
  svg.append(c);
  return [svg, c];
}
for (const [light, el] of lights) {
  const fade = () => { const ms = Number($(el, ".fade").value); return ms ? { fade_ms: ms } : {}; };
  const send = async (verb, body) => {
    try {
      const [status, r] = await api(light, verb, body);
      note(el, status === 200 ? "" : `${verb}: ${r.error || status}`);
    } catch (err) { note(el, `${verb}: ${err.message || err}`); }
  };
  const power = $(el, ".power");
  power.addEventListener("click", () => send("power", { on: power.getAttribute("aria-pressed") !== "true", ...fade() }));
  // The dimmer is sent once the finger lets go (change), not at every
  // step of the slide.
  const s = $(el, ".brightness");
  s.addEventListener("input", () => { s.dataset.held = "1"; });
  s.addEventListener("change", () => { delete s.dataset.held; send("set_brightness", { percent: Number(s.value), ...fade() }); });
  const color = $(el, ".color");
  color.addEventListener("change", () => send("set_color", { hex: color.value, ...fade() }));
  const presets = $(el, ".presets");
  for (const [name, hex] of PRESETS) {
    const b = h("button", { type: "button", class: "preset" }, dot(hex)[0], name);
    b.addEventListener("click", () => send("set_color", { name, ...fade() }));
    presets.append(b);
  }
  $(el, ".gallery").addEventListener("click", (ev) => {
    const b = ev.target.closest("button");
    if (b) send("set_state", { name: b.dataset.state });
  });
}
// gallery shows the light's states as buttons, each with its color: the
// preview's first frame, which gives a state of expressions its color too.
function gallery(light, states) {
  const el = lights.get(light);
  const g = $(el, ".gallery");
  const key = JSON.stringify(states);
  if (g.dataset.key === key) return;
  g.dataset.key = key;
  g.replaceChildren(...[{ name: "off" }, ...states.filter((s) => s.name !== "off")].map((st) => {
    const [svg, c] = dot("#000");
    const b = h("button", { type: "button", "data-state": st.name, "aria-pressed": String(st.name === el.dataset.state) }, svg, st.name);
    if (st.name !== "off") {
      fetch(`/api/v1/lights/${encodeURIComponent(light)}/states/${encodeURIComponent(st.name)}/preview?frames=1`)
        .then((r) => r.json()).then((p) => {
          const px = p.ok && p.frames && p.frames[0] && p.frames[0][0];
          if (px) c.setAttribute("fill", `rgb(${px.r},${px.g},${px.b})`);
        }).catch(() => {});
    }
    return b;
  }));
}
// refresh reads the light once and shows what changed: the gallery, the
// controls, and the model when its panel is open.
async function refresh(light) {
  let status, g;
  try { [status, g] = await api(light, "get"); } catch { return; }
  if (status !== 200) return;
  const el = lights.get(light);
  el.dataset.state = g.state;
  // The other scripts (coming.js, change.js, history.js) follow the light
  // through this event rather than asking again.
  document.dispatchEvent(new CustomEvent("lumen:get", { detail: { light, get: g } }));
  gallery(light, g.states || []);
  showControls(el, g.state, g.brightness);
  if ($(el, "details.model").open) showModel(light, g);
}
const pending = new Map();
function modelChanged(light) {
  clearTimeout(pending.get(light));
  pending.set(light, setTimeout(() => refresh(light), 100));
}
for (const [light, el] of lights) if (!el.classList.contains("unreachable")) refresh(light);

// ── The virtual button: its edges go to the light's gesture detector ──
// Each button plays its gesture's edges, timed for the detector: its
// debounce ignores changes closer than 20 ms, and a hold lasts as long
// as the light's hold_ms (told by each edge's reply) and a little more.
const GESTURES = { click: [80], double: [80, 80, 80], hold: [-1] };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
for (const [light, el] of lights) {
  let sent = Promise.resolve();
  for (const b of el.querySelectorAll(".press")) {
    b.addEventListener("click", () => {
      sent = sent.then(async () => {
        b.classList.add("down");
        const gaps = GESTURES[b.dataset.edges];
        for (let i = 0; i <= gaps.length; i++) {
          const [, r] = await api(light, "button", { edge: i % 2 ? "up" : "down", from: "web" });
          if (i < gaps.length) await sleep(gaps[i] < 0 ? (r.hold_ms || 800) + 400 : gaps[i]);
        }
      }).catch(() => {}).finally(() => b.classList.remove("down"));
    });
  }
}

// ── The house (at a hub): who answers, all off ───────────────────────
const house = document.querySelector("nav.house");
// reach shows whether a light answers; one that comes back is read again.
function reach(l) {
  const el = lights.get(l.light);
  if (!el || el.classList.contains("unreachable") === !l.online) return;
  el.classList.toggle("unreachable", !l.online);
  $(el, ".body").hidden = !l.online;
  $(el, ".reach").textContent = l.online ? "answers" : `unreachable (is ${l.pi} on and connected?)`;
  if (l.online) refresh(l.light);
}
async function lookAtHouse() {
  let d;
  try { d = await (await fetch("/api/v1/house")).json(); } catch { return; }
  const pis = new Map();
  for (const l of d.lights || []) {
    reach(l);
    pis.set(l.pi, pis.get(l.pi) || l.online);
  }
  // A light that joined since the page was drawn: said, shown on asking
  // (the page is drawn again).
  const joined = (d.lights || []).map((l) => l.light).filter((name) => !lights.has(name)).sort();
  const news = $(house, ".house-new");
  news.hidden = !joined.length;
  $(news, "span").textContent = joined.length ? `New in the house: ${joined.join(", ")}.` : "";
  for (const li of house.querySelectorAll(".pi")) {
    const on = pis.get(li.dataset.pi);
    li.classList.toggle("away", !on);
    $(li, ".pi-status").textContent = on ? "connected" : "away";
  }
}
// allOff turns off each light of els that answers, and says what it did.
async function allOff(els) {
  const say = $(house, ".house-note");
  const on = els.filter((el) => !el.classList.contains("unreachable"));
  const away = els.filter((el) => el.classList.contains("unreachable")).map((el) => el.dataset.light);
  say.textContent = "turning off…";
  const ok = await Promise.all(on.map((el) => api(el.dataset.light, "power", { on: false }).then(([st]) => st === 200, () => false)));
  const failed = on.filter((_, i) => !ok[i]).map((el) => el.dataset.light);
  say.textContent = [`${on.length - failed.length} off`, failed.length ? `failed: ${failed.join(", ")}` : "",
    away.length ? `unreachable: ${away.join(", ")}` : ""].filter(Boolean).join("; ");
}
if (house) {
  $(house, ".all-off").addEventListener("click", () => allOff([...lights.values()]));
  $(house, ".house-show").addEventListener("click", () => location.reload());
  for (const a of document.querySelectorAll(".area")) $(a, ".area-off").addEventListener("click", () => allOff([...a.querySelectorAll(".light")]));
  setInterval(lookAtHouse, 3000);
}

// ── The model: states, rules, variables, sources, tools, schedules ───
function table(caption, cols, rows) {
  if (!rows.length) return h("p", {}, `${caption}: none`);
  const t = h("table", {}, h("caption", {}, caption), h("tr", {}, ...cols.map((c) => h("th", {}, c))));
  const cell = (v) => (v instanceof Node ? v : typeof v === "object" && v !== null ? JSON.stringify(v) : v);
  for (const r of rows) t.append(h("tr", {}, ...r.map((v) => h("td", {}, cell(v)))));
  // A wide table scrolls in its box, not the page; the box takes the
  // focus so that the keyboard scrolls it too.
  return h("div", { class: "wide", tabindex: "0", role: "region", "aria-label": `${caption} table` }, t);
}
const expr = (v) => (v && typeof v === "object" ? (v.expr ?? v.num ?? JSON.stringify(v)) : v);

// A state's preview: its frames rendered without applying it, played in
// a small swatch (an animated state moves; a static one shows its color).
const animations = new Map(); // light → its previews' timers
function previewSwatch(light, state) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 20 20");
  svg.setAttribute("class", "preview");
  const c = document.createElementNS(SVG, "circle");
  for (const [k, v] of [["cx", 10], ["cy", 10], ["r", 9], ["fill", "#000"]]) c.setAttribute(k, v);
  svg.append(c);
  const n = state.speed ? 30 : 1;
  fetch(`/api/v1/lights/${encodeURIComponent(light)}/states/${encodeURIComponent(state.name)}/preview?frames=${n}`)
    .then((r) => r.json()).then((p) => {
      if (!p.ok || !p.frames || !p.frames.length) return;
      const show = (f) => { const px = f[0] || { r: 0, g: 0, b: 0 }; c.setAttribute("fill", `rgb(${px.r},${px.g},${px.b})`); };
      show(p.frames[0]);
      if (p.frames.length > 1) {
        let k = 0;
        animations.get(light).push(setInterval(() => show(p.frames[(k = (k + 1) % p.frames.length)]), Math.max(p.ms, 33)));
      }
    }).catch(() => {});
  return svg;
}
function showModel(light, g) {
  const el = lights.get(light);
  const body = $(el, ".model-body");
  for (const id of animations.get(light) || []) clearInterval(id);
  animations.set(light, []);
  body.replaceChildren(
    table("States", ["", "name", "r", "g", "b", "speed"], (g.states || []).map((s) => [previewSwatch(light, s), s.name, expr(s.r), expr(s.g), expr(s.b), s.speed ?? ""])),
    table("Rules", ["id", "from", "on", "to", "condition", "action", "priority", "enabled"],
      (g.rules || []).map((r) => [r.id, r.from, r.on, r.to, r.condition || "", r.action || "", r.priority || 0, r.enabled === false ? "no" : "yes"])),
    table("Variables", ["name", "value"], Object.entries(g.vars || {}).map(([k, v]) => [k, JSON.stringify(v)])),
    table("Data sources", ["name", "type", "fires", "last run"], (g.sources || []).map((s) => [s.name, s.type || "poll", s.fires || "", (g.last_runs || {})[s.name] || "never"])),
    table("Tools", ["name", "description"], (g.tools || []).map((t) => [t.name, t.description || ""])),
    table("Schedules", ["name", "cron", "tz", "fires", "next"], (g.schedules || []).map((s) => [s.name, s.cron, s.tz || "UTC", s.fires, s.next || ""])),
    table("Timers", ["name", "deadline"], (g.timers || []).map((t) => [t.name, t.deadline])),
  );
}

// ── The configuration editor: lumen export / lumen apply ──────────────
async function loadConfig(light) {
  const el = lights.get(light);
  const r = await fetch(`/api/v1/lights/${encodeURIComponent(light)}/config`);
  if (!r.ok) {
    let reply = {};
    try { reply = await r.json(); } catch { /* not JSON */ }
    say(el, `the configuration cannot be read: ${reply.error || r.status}`, true);
    return;
  }
  $(el, ".yaml").value = await r.text();
  say(el, "", false);
}
function say(el, text, error) {
  const m = $(el, ".msg");
  m.textContent = text;
  m.classList.toggle("error", error);
}
// selectLine puts the editor's cursor on line n (from 1).
function selectLine(area, n) {
  const lines = area.value.split("\n");
  let start = 0;
  for (let i = 0; i < n - 1 && i < lines.length; i++) start += lines[i].length + 1;
  area.focus();
  area.setSelectionRange(start, start + (lines[n - 1] || "").length);
}
function changes(c) {
  if (!c) return "nothing changes";
  const parts = [];
  for (const [part, v] of Object.entries(c)) {
    if (part === "initial" || part === "state") { parts.push(`${part} ${v.from} → ${v.to}`); continue; }
    for (const [what, sign] of [["added", "+"], ["changed", "~"], ["removed", "-"]]) {
      for (const n of v[what] || []) parts.push(`${sign} ${part.replace(/s$/, "")} ${n}`);
    }
  }
  return parts.length ? parts.join("\n") : "nothing changes";
}
async function applyConfig(light, dryRun) {
  const el = lights.get(light);
  const area = $(el, ".yaml");
  const r = await fetch(`/api/v1/lights/${encodeURIComponent(light)}/config${dryRun ? "?dry_run=1" : ""}`, {
    method: "PUT", headers: { "Content-Type": "application/yaml" }, body: area.value,
  });
  const reply = await r.json();
  if (!reply.ok) {
    say(el, (reply.line ? `line ${reply.line}: ` : "") + reply.error + "\nnothing was applied", true);
    if (reply.line) selectLine(area, reply.line);
    return;
  }
  say(el, (dryRun ? "checked, nothing applied:\n" : "applied:\n") + changes(reply.changes), false);
}
for (const [light, el] of lights) {
  $(el, "details.config").addEventListener("toggle", (ev) => { if (ev.target.open && !$(el, ".yaml").value) loadConfig(light); });
  $(el, "details.model").addEventListener("toggle", (ev) => { if (ev.target.open) refresh(light); });
  $(el, ".check").addEventListener("click", () => applyConfig(light, true));
  $(el, ".apply").addEventListener("click", () => applyConfig(light, false));
  $(el, ".reload").addEventListener("click", () => loadConfig(light));
}

// ── The agent: a chat, its steps as they are journaled, approvals ─────
const session = "page";
function chatLine(light, cls, ...content) {
  const chat = $(lights.get(light), ".chat");
  const li = h("li", { class: cls }, ...content);
  chat.append(li);
  chat.scrollTop = chat.scrollHeight;
  return li;
}
function agentStep(light, d) {
  const call = d.call || {};
  switch (d.kind) {
    case "ask": chatLine(light, "you", `${d.who || "someone"}: ${d.text}`); break;
    case "model": if (d.message && d.message.content) chatLine(light, "model", `model: ${d.message.content}`); break;
    case "call": chatLine(light, "call", `→ ${call.tool}(${call.args ? JSON.stringify(call.args) : ""})`); break;
    case "tool": chatLine(light, call.ok ? "tool" : "tool fail", `${call.ok ? "✓" : "✗"} ${call.tool}${call.error ? ": " + call.error : ""}`); break;
    case "approval": {
      const approve = h("button", { type: "button", class: "approve" }, "Approve");
      const reject = h("button", { type: "button", class: "reject" }, "Reject");
      const li = chatLine(light, "wait", `? ${call.tool}(${call.args ? JSON.stringify(call.args) : ""}) waits for your approval${d.text ? ` (it ${d.text})` : ""}`, approve, reject);
      li.dataset.approval = d.approval;
      const decide = async (verb) => {
        approve.disabled = reject.disabled = true;
        const [status, r] = await api(light, verb, { id: d.approval, who: "page" });
        if (status !== 200) chatLine(light, "fail", r.error || `${verb} failed`);
      };
      approve.addEventListener("click", () => decide("approve"));
      reject.addEventListener("click", () => decide("reject"));
      break;
    }
    case "decision": {
      const li = $(lights.get(light), `.chat li[data-approval="${CSS.escape(d.approval || "")}"]`);
      if (li) for (const b of li.querySelectorAll("button")) b.disabled = true;
      chatLine(light, "decision", `${d.status} by ${d.who || "someone"}: ${call.tool}`);
      break;
    }
    case "end": chatLine(light, d.status === "done" || d.status === "question" ? "end" : "end fail", `${d.status}: ${d.text || ""}`); break;
  }
}
for (const [light, el] of lights) {
  const form = $(el, "form.ask");
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = form.elements.text.value.trim();
    if (!text) return;
    form.elements.text.value = "";
    try {
      const [status, r] = await api(light, "ask", { text, session, async: true, who: "page" });
      if (status !== 200) chatLine(light, "fail", r.error || "the agent did not take it");
    } catch (err) { chatLine(light, "fail", `ask: ${err.message || err}`); }
  });
}

// ── The microphone: hold to speak; the recording goes to talk as WAV ──
function wav(chunks, rate) {
  const n = chunks.reduce((s, c) => s + c.length, 0);
  const out = new DataView(new ArrayBuffer(44 + n * 2));
  const str = (o, s) => { for (let i = 0; i < s.length; i++) out.setUint8(o + i, s.charCodeAt(i)); };
  str(0, "RIFF"); out.setUint32(4, 36 + n * 2, true); str(8, "WAVE"); str(12, "fmt ");
  out.setUint32(16, 16, true); out.setUint16(20, 1, true); out.setUint16(22, 1, true);
  out.setUint32(24, rate, true); out.setUint32(28, rate * 2, true); out.setUint16(32, 2, true); out.setUint16(34, 16, true);
  str(36, "data"); out.setUint32(40, n * 2, true);
  let o = 44;
  for (const c of chunks) for (const s of c) { out.setInt16(o, Math.max(-1, Math.min(1, s)) * 0x7fff, true); o += 2; }
  return new Blob([out], { type: "audio/wav" });
}
function micFor(light, el) {
  const b = $(el, ".mic");
  if (!b) return; // no model: nothing to transcribe the recording
  if (!window.isSecureContext || !navigator.mediaDevices) {
    b.disabled = true;
    $(el, ".mic-why").textContent = "The browser allows the microphone only on a secure page: open this page at http://127.0.0.1 on the daemon's machine, or over HTTPS.";
    return;
  }
  // starting is the recording being set up (the browser may ask for the
  // microphone first): a release before it is ready still ends it.
  let starting = null;
  const start = async () => {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    const ctx = new AudioContext();
    const src = ctx.createMediaStreamSource(stream);
    const node = ctx.createScriptProcessor(4096, 1, 1);
    const chunks = [];
    node.onaudioprocess = (e) => chunks.push(new Float32Array(e.inputBuffer.getChannelData(0)));
    src.connect(node);
    node.connect(ctx.destination);
    return { stream, ctx, node, chunks };
  };
  b.addEventListener("pointerdown", (ev) => {
    if (starting) return;
    b.setPointerCapture(ev.pointerId);
    b.classList.add("recording");
    starting = start();
  });
  const stop = async () => {
    b.classList.remove("recording");
    if (!starting) return;
    const pending = starting;
    starting = null;
    let rec;
    try { rec = await pending; } catch (err) { chatLine(light, "fail", `the microphone: ${err.message || err}`); return; }
    const { stream, ctx, node, chunks } = rec;
    node.disconnect();
    for (const t of stream.getTracks()) t.stop();
    const rate = ctx.sampleRate;
    await ctx.close();
    let reply;
    try {
      const r = await fetch(`/api/v1/lights/${encodeURIComponent(light)}/talk`, {
        method: "POST", headers: { "Content-Type": "audio/wav", "Lumen-Session": session, "Lumen-Who": "page" }, body: wav(chunks, rate),
      });
      reply = await r.json();
    } catch (err) { chatLine(light, "fail", `talk: ${err.message || err}`); return; }
    if (!reply.ok) { chatLine(light, "fail", reply.error || "talk failed"); return; }
    chatLine(light, "heard", `heard: ${reply.transcript || "(nothing)"}`);
    if (reply.audio) {
      const bytes = Uint8Array.from(atob(reply.audio), (c) => c.charCodeAt(0));
      const audio = new Audio(URL.createObjectURL(new Blob([bytes], { type: "audio/wav" })));
      audio.play().catch(() => { /* no sound device: the answer is in the chat */ });
    }
  };
  for (const t of ["pointerup", "pointercancel"]) b.addEventListener(t, stop);
}
for (const [light, el] of lights) micFor(light, el);

// ── The journal, live: the log, and what changes the panels ───────────
// The stream carries each event's words (?words=1: env.text, env.kind),
// which the log (log.js) shows; journalOpen settles when the stream is
// first open, after which the log reads what came before it.
const conn = document.getElementById("conn");
let opened;
const journalOpen = new Promise((resolve) => { opened = resolve; });
function onEvent(ev) {
  const env = JSON.parse(ev.data);
  document.dispatchEvent(new CustomEvent("lumen:event", { detail: { id: ev.lastEventId, type: ev.type, env } }));
  if (!lights.has(env.light)) return;
  if (ev.type === "out.agent") agentStep(env.light, env.data);
  else if (ev.type.startsWith("out.")) modelChanged(env.light);
}
// The journal's event types (messages/events.go, control.go, layers.go,
// intents.go, agent.go).
const types = {
  in: ["fired", "state", "var", "config", "timer", "schedule", "data", "upgrade", "intent", "layer", "power", "brightness", "color"],
  out: ["state", "var", "timer", "schedule", "config", "ignored", "error", "restart", "upgrade", "gap", "intent", "layer", "agent", "brightness"],
};
const journalListeners = [];
for (const [dir, names] of Object.entries(types)) for (const t of names) journalListeners.push([`${dir}.${t}`, onEvent]);
// Every control has its handlers: a test or a benchmark may use them now
// (the mark is when, from the navigation's start).
document.body.dataset.ready = "1";
performance.mark("lumen-ready");
stream("/api/v1/events?words=1", journalListeners,
  () => { conn.textContent = "live"; conn.className = "conn live"; opened(); },
  () => { conn.textContent = "reconnecting… (the daemon is away)"; conn.className = "conn down"; });
