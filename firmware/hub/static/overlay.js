// The hub overlay: the newest rolls of every tower, each labelled with its tower and roller.
// ?rolls= how many (8), ?theme=dark|light|glass and ?scale=0.25..4 as the tower's overlay takes
// them (the hub refuses an unknown theme, 400).
"use strict";
const query = new URLSearchParams(location.search);
const MAX_SHOWN = Number(query.get("rolls")) || 8;
const SCALE = Math.max(0.25, Math.min(4, parseFloat(query.get("scale") || "1") || 1));
const THEME = ["dark", "light", "glass"].includes(query.get("theme")) ? query.get("theme") : "dark";
document.body.classList.add(`theme-${THEME}`);
document.documentElement.style.setProperty("--scale", String(SCALE));
const list = document.getElementById("rolls");
const seen = new Set();

function add(tower, roll, check, problem) {
  if (roll.thinned) return; // pruned under the log's cap: nothing left to show
  const key = `${tower}/${roll.seq ?? roll.id}`;
  if (seen.has(key)) return;
  seen.add(key);
  list.prepend(rollItem(tower, roll, check, problem));
  while (list.children.length > MAX_SHOWN) {
    seen.delete(list.lastElementChild.dataset.key);
    list.lastElementChild.remove();
  }
}

connectHub((m) => {
  if (m.type === "snapshot") {
    for (const r of m.rolls) add(r.tower, r.roll, r.check, r.check_problem);
  } else if (m.type === "result") {
    add(m.tower, m.roll, m.roll.check, m.roll.check_problem);
  } else if (m.type === "amended") {
    // the table corrected a roll: its item shows the roll as corrected, in its place
    const key = `${m.tower}/${m.roll.seq ?? m.roll.id}`;
    const old = [...list.children].find((li) => li.dataset.key === key);
    if (old) old.replaceWith(rollItem(m.tower, m.roll, m.roll.check, m.roll.check_problem));
  }
}, document.getElementById("link"));
