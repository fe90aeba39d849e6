// dicetower overlay: follows /ws and draws the latest roll and a short history.
//
// State is keyed by roll id and every event carries (epoch, seq): an event already seen is
// skipped, a reconnect asks for everything after the last seq (?since=&epoch=), and a server
// that restarted (new epoch) or a gap older than its ring answers with a snapshot of the log,
// so an OBS refresh or a server restart neither loses nor doubles a roll.
//
// A roll is named by its title (the system's display name: "Runic Flux skill"); what the rules add
// to the dice (a stat) is shown after them, and the rules' own sum under them, so the dice on screen
// and the modifier make the total. The server refuses an unknown ?theme= or ?fields= value (400).
//
// A server that asks for its token (beyond loopback) is given it as the WebSocket subprotocol
// "bearer.TOKEN", taken from the page's fragment (/overlay#token=TOKEN): a fragment is never
// sent to the server, so the token stays out of every request line and log.
"use strict";

(() => {
  const query = new URLSearchParams(location.search);
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  const ALL_FIELDS = ["dice", "total", "outcome", "roller", "odds", "history"];
  const fields = new Set((query.get("fields") || ALL_FIELDS.join(",")).split(",").map((f) => f.trim()));
  const historySize = Math.max(0, Math.min(20, parseInt(query.get("history") || "5", 10) || 0));
  const scale = Math.max(0.25, Math.min(4, parseFloat(query.get("scale") || "1") || 1));
  const theme = ["dark", "light", "glass"].includes(query.get("theme")) ? query.get("theme") : "dark";
  const onlyRoller = query.get("roller");

  document.body.classList.add(`theme-${theme}`);
  document.documentElement.style.setProperty("--scale", String(scale));
  for (const f of ALL_FIELDS) if (!fields.has(f)) document.body.classList.add(`hide-${f}`);

  const state = {
    epoch: null,
    seq: 0,
    rolls: new Map(), // id -> finished roll view
    pending: new Map(), // id -> {id, roller, label, status, throw, faces}
    applied: 0, // numbered events applied (tests read it)
    snapshots: 0,
    connected: false,
  };
  window.dicetowerOverlay = state;

  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };

  const PIPS = {
    1: [5], 2: [3, 7], 3: [3, 5, 7], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9], 6: [1, 3, 4, 6, 7, 9],
  };

  function faceArt(die) {
    const art = el("div", "face-art");
    if (die.kind === "d6" && PIPS[die.face]) {
      for (let cell = 1; cell <= 9; cell++) {
        const spot = el("span", PIPS[die.face].includes(cell) ? "pip" : "");
        spot.style.gridArea = `${Math.ceil(cell / 3)} / ${((cell - 1) % 3) + 1}`;
        art.appendChild(spot);
      }
    } else {
      art.classList.add("number");
      art.textContent = String(die.face);
    }
    return art;
  }

  function dieTile(die) {
    const flags = new Set(die.flags || []);
    const tile = el("div", "die");
    if (die.role === "wild") tile.classList.add("wild");
    if (flags.has("dropped") || flags.has("rerolled")) tile.classList.add("dropped");
    if (flags.has("exploded")) tile.classList.add("exploded");
    if (die.crop_url) {
      const img = el("img");
      img.src = die.crop_url;
      img.alt = `${die.die || die.kind} showing ${die.face}`;
      img.onerror = () => img.replaceWith(faceArt(die));
      tile.appendChild(img);
    } else {
      tile.appendChild(faceArt(die));
    }
    tile.appendChild(el("span", "face", die.face));
    // a die that counts other than its face (a wild 1 counts 0, a botch re-roll is taken away, a tens
    // die 4 counts 40) says so, so the dice on screen add up to the total
    const counted = !flags.has("dropped") && !flags.has("rerolled");
    if (counted && typeof die.value === "number" && die.value !== die.face) {
      tile.appendChild(el("span", "value", `counts ${signed(die.value)}`));
    }
    tile.title = die.die || die.kind;
    if (die.by_table) {
      // the tower could not read this die: the table said which face is up
      tile.classList.add("by-table");
      tile.title += `: read by the table (${die.by_table.by || "a player"})`;
    }
    if (die.corrected) {
      // the table said this die shows another face than the tower read
      tile.classList.add("corrected");
      tile.title += `: read ${die.corrected.read}, corrected to ${die.face} by ${die.corrected.by || "the table"}`;
    }
    return tile;
  }

  // Badge colours, one meaning each (docs/server.md, "Badge colours"); every badge says its
  // meaning in its title, so a yellow success reads "critical success" on hover and in text.
  const TONES = {
    success: "green: the roll succeeded",
    critical: "yellow: a critical, the best result the rules give",
    failure: "grey: the roll did not succeed",
    botch: "red: a botch, the worst result the rules give",
    failed: "red: the tower could not make the roll",
    neutral: "plain: an outcome that is neither a success nor a failure (a side, a value)",
  };
  const SUCCESS = new Set(["success", "hit", "win"]);
  const FAILURE = new Set(["failure", "miss", "lose", "stalemate"]);
  const CRITICAL = new Set(["critical", "triple-critical", "death-blow"]);

  function toneOf(roll) {
    if (roll.status === "failed") return "failed";
    if (roll.botch || roll.outcome === "botch") return "botch";
    if (roll.critical || CRITICAL.has(roll.outcome)) return "critical";
    if (SUCCESS.has(roll.outcome)) return "success";
    if (FAILURE.has(roll.outcome)) return "failure";
    return "neutral";
  }

  // The first line of the server's reason, for a one-line display; the whole of it goes in the title.
  function shortReason(roll) {
    const text = String(roll.error || "the roll failed").trim();
    return text.split("\n")[0];
  }

  function signed(n) {
    return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "0";
  }

  // What the rules add to the dice, as a tile after them: 2 3 6 5 +4 make 20.
  function modifierTile(modifier) {
    const tile = el("div", "mod");
    tile.appendChild(el("div", "mod-art", signed(modifier)));
    tile.appendChild(el("span", "face", "added"));
    tile.title = "added by the rules (a stat, a bonus): the dice and this make the total";
    return tile;
  }

  // The wild die's red border, explained once on the card that shows one.
  function wildLegend() {
    const legend = el("div", "legend");
    legend.appendChild(el("span", "swatch"));
    legend.appendChild(document.createTextNode("red border: the wild die"));
    return legend;
  }

  function badgeFor(roll) {
    const tone = toneOf(roll);
    if (tone !== "failed" && !roll.outcome) return null;
    let text = tone === "failed" ? "failed" : roll.outcome.replace(/_/g, " ");
    // a flag the outcome's name does not already say ("success" with a critical wild die)
    if (tone === "critical" && !/crit|death/.test(text)) text = `critical ${text}`;
    if (tone === "botch" && !/botch|crit/.test(text)) text = `botched ${text}`;
    const b = el("span", `badge tone-${tone}`, text);
    b.dataset.tone = tone;
    if (typeof roll.degree === "number" && roll.degree !== 0) {
      b.textContent += ` ${roll.degree > 0 ? "+" : ""}${roll.degree}`;
    }
    b.title = `${text}: ${TONES[tone]}${tone === "failed" ? `\n${roll.error || "the roll failed"}` : ""}`;
    return b;
  }

  // A corrected roll's mark: what the tower read, in its title.
  function correctedMark(roll) {
    const mark = el("span", "corrected-mark", "corrected");
    const read = roll.as_read || {};
    mark.title = `the table corrected ${(roll.corrections || []).length} die(s); as read: ${read.total}`;
    return mark;
  }

  function pct(p) {
    if (typeof p !== "number") return "";
    if (p >= 0.999995) return "≈100 %";
    if (p < 0.0001) return "<0.01 %";
    return `${(100 * p).toFixed(p < 0.1 ? 2 : 1)} %`;
  }

  function renderCurrent(lastId) {
    const card = document.getElementById("current");
    card.replaceChildren();
    const rolling = [...state.pending.values()].find((p) => p.status === "rolling");
    const roll = lastId !== undefined ? state.rolls.get(lastId) : null;
    const shown = rolling || roll;
    if (!shown) {
      card.className = "card empty";
      return;
    }
    card.className = "card";
    card.dataset.rollId = String(shown.id);
    const head = el("div", "head");
    head.appendChild(el("span", "roller", shown.roller));
    head.appendChild(el("span", "label", shown.title || shown.label));
    card.appendChild(head);
    if (rolling) {
      const throwNo = rolling.throw !== undefined ? ` · throw ${rolling.throw + 1}` : "";
      card.appendChild(el("div", "status", `rolling${throwNo}…`));
      if (rolling.faces && rolling.faces.length) card.appendChild(el("div", "label", rolling.faces.join(" ")));
      return;
    }
    const dice = el("div", "dice");
    for (const d of roll.dice || []) dice.appendChild(dieTile(d));
    const shownDice = (roll.dice || []).length;
    if (typeof roll.dice_count === "number" && roll.dice_count > shownDice) {
      dice.appendChild(el("span", "more", `+${roll.dice_count - shownDice} more`));
    }
    if (typeof roll.modifier === "number" && roll.modifier !== 0) dice.appendChild(modifierTile(roll.modifier));
    card.appendChild(dice);
    if ((roll.dice || []).some((d) => d.role === "wild")) card.appendChild(wildLegend());
    if (roll.sum) card.appendChild(el("div", "sum", roll.sum));
    const summary = el("div", "summary");
    if (roll.status === "failed") {
      summary.appendChild(badgeFor(roll));
      card.appendChild(summary);
      const why = el("div", "error", shortReason(roll));
      why.title = roll.error || "the roll failed";
      card.appendChild(why);
      return;
    }
    const total = el("div", "total", roll.total);
    if (typeof roll.successes === "number") total.appendChild(el("small", "", `${roll.successes} succ.`));
    summary.appendChild(total);
    if (roll.corrected) summary.appendChild(correctedMark(roll));
    const badge = badgeFor(roll);
    if (badge) summary.appendChild(badge);
    if (roll.odds && typeof roll.odds.outcome_probability === "number") {
      const exact = roll.odds.outcome_exact ? ` (${roll.odds.outcome_exact})` : "";
      summary.appendChild(el("div", "odds", `P(${roll.outcome}) ${pct(roll.odds.outcome_probability)}${exact}`));
    }
    card.appendChild(summary);
    if (card.dataset.lastShown !== String(roll.id)) {
      card.classList.add("fresh");
      card.dataset.lastShown = String(roll.id);
    }
  }

  function renderHistory(ids) {
    const list = document.getElementById("history");
    list.replaceChildren();
    for (const id of ids) {
      const roll = state.rolls.get(id);
      const li = el("li");
      li.dataset.rollId = String(id);
      li.appendChild(el("span", "who", roll.roller));
      li.appendChild(el("span", "what", roll.title || roll.label));
      if (roll.status !== "failed") li.appendChild(el("span", "tot", roll.total));
      if (roll.corrected) li.appendChild(correctedMark(roll));
      const badge = badgeFor(roll);
      if (badge) li.appendChild(badge);
      if (roll.status === "failed") {
        const why = el("span", "why", shortReason(roll));
        why.title = roll.error || "the roll failed";
        li.appendChild(why);
      }
      list.appendChild(li);
    }
  }

  function render() {
    let ids = [...state.rolls.keys()].sort((a, b) => a - b);
    if (onlyRoller) ids = ids.filter((id) => state.rolls.get(id).roller === onlyRoller);
    const last = ids[ids.length - 1];
    renderCurrent(last);
    renderHistory(historySize > 0 ? ids.slice(0, -1).slice(-historySize).reverse() : []);
    document.getElementById("link").hidden = state.connected;
  }

  function trim() {
    const keep = Math.max(historySize + 1, 1) + 20;
    const ids = [...state.rolls.keys()].sort((a, b) => a - b);
    for (const id of ids.slice(0, Math.max(0, ids.length - keep))) state.rolls.delete(id);
  }

  function finish(roll) {
    state.rolls.set(roll.id, roll);
    state.pending.delete(roll.id);
  }

  function apply(msg) {
    if (msg.type === "snapshot") {
      state.epoch = msg.epoch;
      state.seq = msg.seq;
      state.snapshots += 1;
      state.pending.clear();
      for (const r of msg.rolls) finish(r);
      for (const p of msg.pending) if (!state.rolls.has(p.id)) state.pending.set(p.id, p);
      return;
    }
    if (msg.type === "hello") {
      state.epoch = msg.epoch;
      return;
    }
    if (typeof msg.seq !== "number") return;
    if (msg.epoch === state.epoch && msg.seq <= state.seq) return; // seen already
    state.epoch = msg.epoch;
    state.seq = msg.seq;
    state.applied += 1;
    const id = msg.id;
    if (msg.type === "result" || msg.type === "error" || msg.type === "amended") {
      if (msg.roll) finish(msg.roll);
      return;
    }
    if (state.rolls.has(id)) return; // finished already: never back to "rolling"
    const p = state.pending.get(id) || { id, roller: msg.roller || "", label: msg.label || "", title: msg.title || "" };
    if (msg.type === "queued") p.status = p.status || "queued";
    if (msg.type === "rolling") {
      p.status = "rolling";
      p.throw = msg.throw;
    }
    if (msg.type === "settled") p.faces = msg.faces;
    if (msg.roller) p.roller = msg.roller;
    if (msg.label) p.label = msg.label;
    if (msg.title) p.title = msg.title;
    state.pending.set(id, p);
  }

  let backoff = 250;
  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const params = new URLSearchParams({ last: "0" });
    if (state.epoch) {
      params.set("since", String(state.seq));
      params.set("epoch", state.epoch);
    }
    const url = `${proto}//${location.host}/ws?${params}`;
    const ws = token ? new WebSocket(url, ["dicetower", `bearer.${token}`]) : new WebSocket(url);
    ws.onopen = () => {
      state.connected = true;
      backoff = 250;
    };
    ws.onmessage = (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch (_) {
        return;
      }
      apply(msg);
      trim();
      render();
    };
    ws.onclose = () => {
      state.connected = false;
      render();
      setTimeout(connect, backoff);
      backoff = Math.min(5000, backoff * 2);
    };
  }

  render();
  connect();
})();
