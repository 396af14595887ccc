// Lumen's page: live states and colors from the journal's events, and a
// virtual button whose edges go to the light's gesture detector.
"use strict";

const byLight = new Map();
for (const el of document.querySelectorAll(".light")) byLight.set(el.dataset.light, el);

// paint shows what a light's LED shows: an event of /api/v1/led.
function paint(led) {
  const el = byLight.get(led.light);
  if (!el || !led.pixels || !led.pixels.length) return;
  const c = led.pixels[0];
  el.querySelector(".state").textContent = led.state;
  el.querySelector("circle").setAttribute("fill", `rgb(${c.r},${c.g},${c.b})`);
  el.querySelector(".rgb").textContent = `rgb(${c.r}, ${c.g}, ${c.b})`;
}

async function edge(light, e) {
  await fetch(`/api/v1/lights/${encodeURIComponent(light)}/button`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ edge: e }),
  });
}

for (const [light, el] of byLight) {
  const b = el.querySelector(".press");
  b.addEventListener("pointerdown", (ev) => { b.setPointerCapture(ev.pointerId); edge(light, "down"); });
  b.addEventListener("pointerup", () => edge(light, "up"));
}

const log = document.getElementById("log");
const conn = document.getElementById("conn");
function line(text) {
  const li = document.createElement("li");
  li.textContent = text;
  log.prepend(li);
  while (log.children.length > 200) log.lastChild.remove();
}

// The LEDs, live: the state each shows now, then every change and frame.
const leds = new EventSource("/api/v1/led");
leds.addEventListener("led", (ev) => paint(JSON.parse(ev.data)));

// The journal, live.
const es = new EventSource("/api/v1/events");
es.onopen = () => { conn.textContent = "live"; conn.className = "conn live"; };
es.onerror = () => { conn.textContent = "reconnecting…"; conn.className = "conn down"; };
function onEvent(ev) {
  const env = JSON.parse(ev.data);
  line(`${ev.lastEventId} ${env.light} ${ev.type} ${JSON.stringify(env.data)}`);
}
// The journal's event types (messages/events.go).
const types = {
  in: ["fired", "state", "var", "config", "timer", "schedule", "data", "upgrade"],
  out: ["state", "var", "timer", "schedule", "config", "ignored", "error", "restart", "upgrade", "gap", "agent"],
};
for (const [dir, names] of Object.entries(types)) for (const t of names) es.addEventListener(`${dir}.${t}`, onEvent);
