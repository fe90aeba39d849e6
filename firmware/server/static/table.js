// The table's page: the roll in progress, recent rolls with each die's crop, face and outcome;
// a tap on a die of the last roll corrects it, a die the tower could not read is answered here.
// Every text goes in with textContent: a roller's name is never HTML.
"use strict";
(() => {
  const code = new URLSearchParams(location.hash.slice(1)).get("code") || "";
  const POLL_MS = 1000;
  const me = document.getElementById("me");
  me.value = localStorage.getItem("dicetower.table.me") || "";
  me.addEventListener("change", () => localStorage.setItem("dicetower.table.me", me.value.trim()));
  const state = { rolls: [], asks: [], rolling: null, polls: 0, busy: false, last: "" };
  window.dicetowerTable = state;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function headers() {
    const h = { "Content-Type": "application/json" };
    if (code) h.Authorization = `Bearer ${code}`;
    return h;
  }

  function say(text, bad) {
    const s = document.getElementById("status");
    s.textContent = text;
    s.className = bad ? "bad" : "";
  }

  async function post(url, body) {
    const res = await fetch(url, { method: "POST", headers: headers(), body: JSON.stringify(body) });
    let doc = {};
    try {
      doc = await res.json();
    } catch (_) {}
    return { ok: res.ok, status: res.status, doc };
  }

  function who() {
    return me.value.trim() || "table";
  }

  // -- the face picker --------------------------------------------------------------------------
  const picker = document.getElementById("picker");
  document.getElementById("picker-cancel").addEventListener("click", () => {
    picker.hidden = true;
    render();
  });

  function pick(title, crop, faces, current, onFace) {
    document.getElementById("picker-title").textContent = title;
    const img = document.getElementById("picker-crop");
    if (crop) img.src = crop;
    else img.removeAttribute("src");
    const box = document.getElementById("picker-faces");
    box.replaceChildren();
    for (const f of faces) {
      const b = el("button", f === current ? "current" : "", f);
      b.type = "button";
      b.dataset.face = String(f);
      b.disabled = f === current;
      b.addEventListener("click", async () => {
        picker.hidden = true;
        await onFace(f);
      });
      box.appendChild(b);
    }
    picker.hidden = false;
  }

  async function correct(roll, die) {
    pick(`${roll.roller}'s die ${die.slot + 1} (${die.kind}) shows…`, die.crop_url, die.faces, die.face, async (face) => {
      const r = await post(`/api/rolls/${roll.id}/corrections`, { die: die.slot, face, by: who() });
      if (r.ok) say(`Corrected: die ${die.slot + 1} shows ${face}; the total is now ${r.doc.total}.`);
      else say(r.doc.error ? r.doc.error.message : `refused (${r.status})`, true);
      await poll();
    });
  }

  async function answer(q, face) {
    const r = await post(`/api/rolls/${q.roll}/answers`, { die: q.die, face, by: who() });
    if (r.ok) say(`Thank you: die ${q.die + 1} is a ${face}.`);
    else say(r.doc.error ? r.doc.error.message : `refused (${r.status})`, true);
    await poll();
  }

  // -- drawing ----------------------------------------------------------------------------------
  function dieTile(roll, d) {
    const tile = el(roll.correctable ? "button" : "div", "die");
    if (roll.correctable) {
      tile.type = "button";
      tile.addEventListener("click", () => correct(roll, d));
      tile.setAttribute("aria-label", `die ${d.slot + 1}, ${d.kind}, shows ${d.face}: tap to correct`);
    }
    tile.dataset.slot = String(d.slot);
    const flags = new Set(d.flags || []);
    if (flags.has("dropped") || flags.has("rerolled")) tile.classList.add("dropped");
    if (d.crop_url) {
      const img = el("img");
      img.src = d.crop_url;
      img.alt = `${d.die || d.kind} showing ${d.face}`;
      tile.appendChild(img);
    }
    tile.appendChild(el("span", "face", d.face));
    if (d.corrected) {
      tile.classList.add("corrected");
      tile.appendChild(el("span", "read", `read ${d.corrected.read}`));
    }
    if (d.by_table) tile.appendChild(el("span", "read", "by the table"));
    return tile;
  }

  function rollCard(roll) {
    const card = el("article", "card roll");
    card.dataset.rollId = String(roll.id);
    const head = el("div", "head");
    head.append(el("span", "who", roll.roller), el("span", "what", roll.label));
    card.appendChild(head);
    const dice = el("div", "dice");
    for (const d of roll.dice || []) dice.appendChild(dieTile(roll, d));
    if (roll.dice_count > (roll.dice || []).length) dice.appendChild(el("span", "what", `+${roll.dice_count - roll.dice.length} more`));
    card.appendChild(dice);
    const result = el("div", "result");
    if (roll.status === "failed") {
      result.appendChild(el("span", "error", roll.error || "the roll failed"));
    } else {
      result.appendChild(el("span", "total", roll.total));
      if (roll.outcome) result.appendChild(el("span", "outcome", roll.outcome.replace(/_/g, " ")));
      if (roll.corrected) {
        const m = el("span", "mark", "corrected");
        m.title = `as read: ${(roll.as_read || {}).total}`;
        result.appendChild(m);
      }
    }
    card.appendChild(result);
    if (roll.correctable) card.appendChild(el("p", "hint", "Tower misread a die? Tap it to correct."));
    return card;
  }

  function askCard(q) {
    const card = el("article", "card ask");
    card.dataset.ask = String(q.id);
    card.appendChild(el("h2", null, `The tower cannot read die ${q.die + 1} (${q.kind}) of roll ${q.roll}: which face is up?`));
    if (q.crop_url) {
      const img = el("img");
      img.src = q.crop_url;
      img.alt = `the ${q.identity || q.kind} the tower could not read`;
      card.appendChild(img);
    }
    const faces = el("div", "faces");
    for (const f of q.faces) {
      const b = el("button", null, f);
      b.type = "button";
      b.dataset.face = String(f);
      b.addEventListener("click", () => answer(q, f));
      faces.appendChild(b);
    }
    card.appendChild(faces);
    return card;
  }

  function render() {
    const asks = document.getElementById("asks");
    asks.replaceChildren(...state.asks.map(askCard));
    const rolling = document.getElementById("rolling");
    rolling.replaceChildren();
    if (state.rolling) {
      const card = el("article", "card rolling");
      card.append(el("span", "who", state.rolling.roller), el("span", "what", ` rolls ${state.rolling.label || ""}…`));
      rolling.appendChild(card);
    }
    const main = document.getElementById("rolls");
    main.replaceChildren(...state.rolls.map(rollCard));
    if (!state.rolls.length) main.appendChild(el("p", "loading", "No rolls yet."));
  }

  async function poll() {
    if (state.busy) return;
    state.busy = true;
    try {
      const res = await fetch("/api/table", { headers: headers(), cache: "no-store" });
      document.getElementById("need-code").hidden = res.status !== 401;
      if (!res.ok) return;
      const text = await res.text();
      state.polls += 1;
      if (text === state.last) return; // nothing new: the buttons under a finger stay put
      state.last = text;
      const doc = JSON.parse(text);
      state.rolls = doc.rolls;
      state.asks = doc.asks;
      state.rolling = doc.rolling;
      if (picker.hidden) render();
      else state.last = ""; // drawn once the picker closes
      document.body.dataset.ready = "1";
    } catch (_) {
      // the tower is away for a moment: the next poll tries again
    } finally {
      state.busy = false;
    }
  }

  poll();
  setInterval(poll, POLL_MS);
})();
