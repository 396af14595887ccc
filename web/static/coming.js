// Coming up: what will happen to each light by itself, soonest first
// (GET /api/v1/lights/{light}/coming, in the describe package's words),
// each with its time in the browser's zone and how far away it is; that
// distance is kept current here, without asking the server again.
"use strict";

// comingSkew is the server's clock minus the browser's, so that "in 4
// min" counts from the server's now.
let comingSkew = 0;
function comingNow() { return Date.now() + comingSkew; }

// comingRelative says how far t (ms) is from now: "in 4 min", "in 1 h 5
// min", "12 s ago", "now".
function comingRelative(t) {
  const d = Math.round((t - comingNow()) / 1000);
  const a = Math.abs(d);
  let s;
  if (a < 5) return "now";
  if (a < 60) s = `${a} s`;
  else if (a < 3600) s = `${Math.round(a / 60)} min`;
  else if (a < 48 * 3600) {
    const m = Math.round(a / 60);
    s = `${Math.floor(m / 60)} h` + (m % 60 ? ` ${m % 60} min` : "");
  } else s = `${Math.round(a / 86400)} days`;
  return d > 0 ? `in ${s}` : `${s} ago`;
}

// comingClock is t as the browser's zone reads it: the time of day, with
// the date when it is not today.
function comingClock(at) {
  const today = new Date(comingNow()).toDateString() === at.toDateString();
  return today ? at.toLocaleTimeString() : at.toLocaleString(undefined, { weekday: "short", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

function comingTick(el) {
  for (const t of el.querySelectorAll(".coming-list time")) {
    $(t.parentElement, ".rel").textContent = comingRelative(Date.parse(t.dateTime));
  }
}

function comingShow(light, reply) {
  const el = lights.get(light);
  const body = $(el, ".coming-body");
  comingSkew = Date.parse(reply.now) - Date.now();
  if (!reply.items.length) {
    body.replaceChildren(h("p", { class: "coming-none" }, "Nothing is coming up: no timer is armed, and there is no schedule, temporary layer, data source or fade."));
    return;
  }
  const ol = h("ol", { class: "coming-list" });
  for (const it of reply.items) {
    const li = h("li", { class: `coming-${it.kind}`, "data-kind": it.kind, "data-name": it.name });
    if (it.at) {
      const at = new Date(it.at);
      li.append(h("span", { class: "when" }, h("time", { datetime: it.at }, comingClock(at)), " ", h("span", { class: "rel" }, comingRelative(at.getTime()))));
    } else {
      li.append(h("span", { class: "when untimed" }, "not timed"));
    }
    li.append(h("span", { class: "what" }, it.text));
    ol.append(li);
  }
  body.replaceChildren(ol);
}

async function comingLoad(light) {
  const el = lights.get(light);
  const body = $(el, ".coming-body");
  let r, reply;
  try {
    r = await fetch(`/api/v1/lights/${encodeURIComponent(light)}/coming`);
    reply = await r.json();
  } catch (err) {
    body.replaceChildren(h("p", { class: "coming-error", role: "status" }, `Coming up: ${err.message || err}`));
    return;
  }
  if (!reply.ok) {
    body.replaceChildren(h("p", { class: "coming-error", role: "status" }, `Coming up: ${reply.error || r.status}`));
    return;
  }
  comingShow(light, reply);
}

for (const [light, el] of lights) {
  const d = $(el, "details.coming");
  d.addEventListener("toggle", () => { if (d.open) comingLoad(light); });
}
// Each read of a light (after any change of it) reads what is coming.
document.addEventListener("lumen:get", (ev) => {
  const el = lights.get(ev.detail.light);
  if (el && $(el, "details.coming").open) comingLoad(ev.detail.light);
});
setInterval(() => {
  for (const el of lights.values()) if ($(el, "details.coming").open) comingTick(el);
}, 5000);
