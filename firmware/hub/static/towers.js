// The towers page: each tower's state and chain, the roll control, the combined log.
"use strict";
const towers = new Map();
const towerRows = document.getElementById("towers");
const logRows = document.getElementById("log");
const select = document.getElementById("ask-tower");
const replies = document.getElementById("replies");
const newRows = document.getElementById("new-towers");
const MAX_LOG = 200;

function drawTowers() {
  towerRows.replaceChildren();
  const chosen = select.value;
  select.replaceChildren();
  for (const t of [...towers.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const tr = el("tr");
    tr.dataset.tower = t.name;
    tr.append(el("td", null, t.name), el("td", `state-${t.online ? t.state : "offline"}`, t.online ? t.state : "offline"));
    tr.append(el("td", null, t.rolls), el("td", null, t.last_seq ?? "–"));
    tr.append(el("td", t.chain_breaks ? "bad" : "good", t.chain_breaks ? `broken (${t.chain_breaks})` : `checked from ${t.checked_from ?? "–"}`));
    tr.append(el("td", null, t.key ? `${t.key.fingerprint} (${t.key.source})` : "unsigned"));
    tr.append(el("td", t.needs_attention.length ? "bad" : null, t.needs_attention.join("; ")));
    towerRows.append(tr);
    const opt = el("option", null, t.name);
    opt.value = t.name;
    select.append(opt);
  }
  if (chosen) select.value = chosen;
}

// The new towers: a name signed by a key the hub has not pinned, and the button that pins it.
function drawNew(list) {
  newRows.replaceChildren();
  document.getElementById("new-section").hidden = !list.length;
  for (const t of list) {
    const tr = el("tr");
    tr.dataset.newTower = t.name;
    const button = el("button", null, "trust");
    button.type = "button";
    button.addEventListener("click", () => trust(t.name, t.fingerprint));
    const cell = el("td");
    cell.append(button);
    tr.append(el("td", null, t.name), el("td", null, t.fingerprint), el("td", null, t.messages), cell);
    newRows.append(tr);
  }
}

async function trust(name, fingerprint) {
  const res = await fetch(`/api/towers/${encodeURIComponent(name)}/trust`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ fingerprint }),
  });
  const answer = await res.json();
  replies.textContent = res.ok ? `${name}: key ${fingerprint} pinned` : answer.error.message;
}

function logRow(tower, roll, check, problem) {
  const tr = el("tr", check === "broken" ? "bad" : null);
  tr.dataset.key = `${tower}/${roll.seq ?? roll.id}`;
  tr.append(el("td", null, tower), el("td", null, roll.seq ?? roll.id), el("td", null, roll.roller));
  if (roll.thinned) {
    tr.append(el("td", null, "–"), el("td", null, "thinned under the log's cap: its hash and link are kept"));
  } else {
    const text = roll.status === "done" ? roll.text : roll.error;
    tr.append(el("td", null, roll.label), el("td", null, roll.corrected ? `${text} (corrected)` : text));
  }
  tr.append(el("td", null, check === "new" ? "linked" : `${check}${problem ? ": " + problem : ""}`));
  return tr;
}

function addLog(tower, roll, check, problem) {
  logRows.prepend(logRow(tower, roll, check, problem));
  while (logRows.children.length > MAX_LOG) logRows.lastElementChild.remove();
}

// The log's size on disk and its cap (--log-cap-mb), from /api/towers, now and every 30 s.
function drawLogSize(log) {
  const mb = (n) => (n / 1048576).toFixed(1);
  document.getElementById("log-size").textContent = log.cap_bytes
    ? `${mb(log.bytes)} MB of its ${mb(log.cap_bytes)} MB cap (past it, the oldest rolls are thinned to their hash and link)`
    : `${mb(log.bytes)} MB`;
}
async function fetchLogSize() {
  const res = await fetch("/api/towers");
  if (res.ok) drawLogSize((await res.json()).log);
}
fetchLogSize();
setInterval(fetchLogSize, 30000);

connectHub((m) => {
  if (m.type === "snapshot") {
    towers.clear();
    for (const t of m.towers) towers.set(t.name, t);
    logRows.replaceChildren();
    for (const r of m.rolls) addLog(r.tower, r.roll, r.check, r.check_problem);
    drawTowers();
    drawNew(m.new_towers || []);
  } else if (m.type === "new-tower") {
    drawNew(m.new_towers);
  } else if (m.type === "tower") {
    towers.set(m.tower.name, m.tower);
    drawTowers();
  } else if (m.type === "result") {
    addLog(m.tower, m.roll, m.roll.check, m.roll.check_problem);
    const t = towers.get(m.tower);
    if (t) { t.rolls += 1; t.last_seq = m.roll.seq; drawTowers(); }
  } else if (m.type === "amended") {
    const key = `${m.tower}/${m.roll.seq ?? m.roll.id}`;
    const old = [...logRows.children].find((tr) => tr.dataset.key === key);
    if (old) old.replaceWith(logRow(m.tower, m.roll, m.roll.check, m.roll.check_problem));
  } else if (m.type === "chain") {
    replies.textContent = `${m.tower}: ${m.problem}`;
  } else if (m.type === "reply") {
    const r = m.reply;
    replies.textContent = r.status === "refused"
      ? `${r.tower} refused: ${r.error.message}`
      : `${r.tower}: ${r.status}${r.roll ? " — " + r.roll.text : ""}`;
  }
}, document.getElementById("link"));

document.getElementById("ask").addEventListener("submit", async (e) => {
  e.preventDefault();
  const body = {
    roll: { notation: document.getElementById("ask-notation").value, roller: document.getElementById("ask-roller").value || "gm" },
  };
  const token = document.getElementById("ask-token").value;
  if (token) body.token = token;
  const res = await fetch(`/api/towers/${encodeURIComponent(select.value)}/rolls`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  });
  const answer = await res.json();
  replies.textContent = res.ok ? `asked ${select.value} (request ${answer.request_id})` : answer.error.message;
});
