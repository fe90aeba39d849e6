// The hub's pages: one WebSocket to /ws that reconnects, and how a roll is drawn.
"use strict";

function connectHub(onMessage, linkEl) {
  let delay = 500;
  function open() {
    const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
    ws.onopen = () => { delay = 500; if (linkEl) linkEl.hidden = true; };
    ws.onmessage = (m) => onMessage(JSON.parse(m.data));
    ws.onclose = () => {
      if (linkEl) linkEl.hidden = false;
      setTimeout(open, delay);
      delay = Math.min(delay * 2, 5000);
    };
  }
  open();
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

// One roll as a list item: tower, roller, what was rolled, the result, the chain check.
function rollItem(tower, roll, check, problem) {
  const li = el("li", `roll ${roll.status}${check === "broken" ? " broken" : ""}`);
  li.dataset.key = `${tower}/${roll.seq ?? roll.id}`;
  li.append(el("span", "tower", tower), el("span", "who", `${roll.roller} · ${roll.label}`));
  li.append(el("span", "total", roll.status === "done" ? (roll.total ?? roll.outcome ?? "") : "✗"));
  if (roll.corrected) {
    const mark = el("span", "corrected-mark", "corrected");
    mark.title = `the table corrected it; as read: ${(roll.as_read || {}).total}`;
    li.append(mark);
  }
  const text = el("span", "text", roll.status === "done" ? roll.text : roll.error);
  for (const d of roll.dice || []) {
    if (d.crop_url) {
      const img = el("img");
      img.src = d.crop_url;
      img.alt = `die ${d.slot}: ${d.face}`;
      text.prepend(img);
    }
  }
  li.append(text);
  if (check === "broken") li.append(el("span", "check", `chain: ${problem}`));
  return li;
}
