// dicetower /teach: name each group of a die's crops with one key (docs/teach.md).
//
// The server owns the state: each step is one POST to /api/teach/{slug}, answered with the die's
// new state, which is drawn again. Keys and clicks are handled one at a time, in order, so a fast
// typist's second key acts on the group the first one moved the focus to. Naming a die's last
// unnamed group moves on to the next die's (or to Save), so the next digits never rename a group
// already named; renaming a named group to a face another group has asks before merging them.
// Every step and save carries the etag the page read: when another command rewrote teach.json
// the server refuses (409) and the page offers a reload; it also asks every few seconds.
"use strict";

(() => {
  const state = {
    dice: [], // the server's die views, in teach.json's order
    focus: null, // {slug, place}: place is a group index or "loose"
    cursor: new Map(), // "slug/place" -> the crop cursor's position in that place
    typed: "", // digits typed toward a face
    picked: new Set(), // crop indices picked for a split
    pickedSlug: null,
    lastSlug: null,
    steps: 0, // steps the server accepted (the tests read these)
    saves: 0,
    refusals: 0,
    pending: 0,
    etag: null, // the teach.json generation the page shows (GET /api/teach's ETag)
    asking: null, // {slug, group, face, into}: a merge waiting for Enter (yes) or Escape (no)
    conflicts: 0,
  };
  window.dicetowerTeach = state;

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };
  const dieOf = (slug) => state.dice.find((d) => d.slug === slug);
  const singleKey = (die) => Math.max(...die.faces) <= 9; // every face one digit: the key names at once
  const placeKey = (slug, place) => `${slug}/${place}`;
  const cropsOf = (die, place) => (place === "loose" ? die.loose : (die.groups[place] || { crops: [] }).crops);

  class Refusal extends Error {}

  function report(text, refused = false) {
    const status = $("status");
    status.textContent = text;
    status.className = refused ? "refused" : "";
    if (refused) state.refusals++;
  }

  let chain = Promise.resolve();
  function enqueue(work) {
    state.pending++;
    chain = chain
      .then(work)
      .catch((e) => {
        report(e instanceof Refusal ? e.message : `error: ${e}`, true);
        restoreFocus(); // a refused button press hands the keys back to the group
      })
      .then(() => {
        state.pending--;
      });
  }

  function headers() {
    const h = { "content-type": "application/json" };
    const token = sessionStorage.getItem("dicetower-token");
    if (token) h.authorization = `Bearer ${token}`;
    return h;
  }

  async function post(path, body) {
    const r = await fetch(path, { method: "POST", headers: headers(), body: JSON.stringify(body) });
    const data = await r.json().catch(() => ({}));
    if (r.ok) return data;
    const message = (data.error && data.error.message) || `the server answered ${r.status}`;
    if (r.status === 401) $("token").hidden = false;
    if (r.status === 409 && data.error && data.error.field === "etag") showConflict(message);
    else if (r.status === 409 && data.error && data.error.field === "version") await load();
    throw new Refusal(message);
  }

  async function step(slug, body) {
    const view = await post(`/api/teach/${encodeURIComponent(slug)}`, {
      ...body,
      version: dieOf(slug).version,
      etag: state.etag,
    });
    state.dice = state.dice.map((d) => (d.slug === slug ? view : d));
    if (state.pickedSlug === slug) clearPicked();
    state.lastSlug = slug;
    state.steps++;
    const section = document.querySelector(`section.die[data-slug="${CSS.escape(slug)}"]`);
    section.replaceWith(renderDie(view));
    renderProgress();
    restoreFocus();
    return view;
  }

  // -- drawing ---------------------------------------------------------------------------

  function renderProgress() {
    $("progress").replaceChildren(
      ...state.dice.map((d) => {
        const w = d.work;
        const share = (100 * d.progress.touched_share).toFixed(1);
        const li = el("li", d.progress.crops_left === 0 ? "done" : "", d.progress.text);
        li.appendChild(
          el("span", "work", `names ${w.names} · moves ${w.moves} · splits ${w.splits} · undos ${w.undos} · ${share} % of crops touched`),
        );
        return li;
      }),
    );
  }

  function cropButton(die, crop, place) {
    const b = el("button", "crop");
    b.type = "button";
    b.tabIndex = -1;
    b.dataset.crop = String(crop.index);
    if (state.pickedSlug === die.slug && state.picked.has(crop.index)) b.classList.add("picked");
    const img = el("img");
    img.src = crop.url;
    img.alt = "";
    img.width = 72;
    img.height = 72;
    img.loading = "lazy";
    img.draggable = false;
    b.appendChild(img);
    if (place === "loose") {
      b.appendChild(el("span", crop.face === null ? "cface none" : "cface", crop.face === null ? "?" : crop.face));
      b.title = `crop ${crop.index}: click it, then type its face`;
    } else {
      b.title = `crop ${crop.index}: click moves it out of the group; shift-click picks it for a split`;
    }
    b.setAttribute("aria-label", `crop ${crop.index}${place === "loose" && crop.face !== null ? `, named ${crop.face}` : ""}`);
    return b;
  }

  function renderPlace(die, place) {
    const loose = place === "loose";
    const crops = cropsOf(die, place);
    const face = loose ? null : die.groups[place].face;
    const box = el("div", loose ? "loose" : face === null ? "group" : "group named");
    box.dataset.slug = die.slug;
    box.dataset.group = String(place);
    const head = el("div", "ghead");
    const count = `${crops.length} crop${crops.length === 1 ? "" : "s"}`;
    if (loose) {
      head.append(el("h3", "gname", "Loose crops"), el("span", "count", count));
    } else {
      head.append(el("span", "gname", `group ${place}`), el("span", "count", count));
      head.appendChild(el("span", face === null ? "face none" : "face", face === null ? "not named" : face));
    }
    head.appendChild(el("span", "typed"));
    box.appendChild(head);
    if (loose && !crops.length) {
      box.appendChild(el("p", "hint", "A crop moved out of its group lands here; click it and type its face."));
      return box;
    }
    box.tabIndex = 0;
    box.setAttribute("role", "group");
    const named = face === null ? "not named" : `named ${face}`;
    box.setAttribute("aria-label", `${die.id}: ${loose ? "loose crops" : `group ${place}, ${named}`}, ${count}`);
    const grid = el("div", "grid");
    for (const c of crops) grid.appendChild(cropButton(die, c, place));
    box.appendChild(grid);
    return box;
  }

  function renderDie(die) {
    const section = el("section", "die");
    section.dataset.slug = die.slug;
    section.setAttribute("aria-labelledby", `h-${die.slug}`);
    const h2 = el("h2", "", die.id);
    h2.id = `h-${die.slug}`;
    h2.appendChild(el("small", "", die.kind));
    section.append(h2, el("p", "progress", die.progress.text));
    const left = die.faces_left.length ? `not named yet: ${die.faces_left.join(" ")}` : "every face named";
    section.appendChild(el("p", "left", left));
    const groups = el("div", "groups");
    die.groups.forEach((_g, i) => groups.appendChild(renderPlace(die, i)));
    section.append(groups, renderPlace(die, "loose"));
    return section;
  }

  function boxOf(focus) {
    if (!focus) return null;
    const slug = CSS.escape(focus.slug);
    return document.querySelector(`section.die[data-slug="${slug}"] [data-group="${focus.place}"][tabindex]`);
  }

  function updateMarks() {
    for (const n of document.querySelectorAll(".focused, .cursor")) n.classList.remove("focused", "cursor");
    for (const n of document.querySelectorAll(".typed")) n.textContent = "";
    const box = boxOf(state.focus);
    if (!box) return;
    box.classList.add("focused");
    const crops = box.querySelectorAll(".crop");
    const key = placeKey(state.focus.slug, state.focus.place);
    const at = Math.min(state.cursor.get(key) || 0, crops.length - 1);
    state.cursor.set(key, Math.max(0, at));
    if (crops[at]) crops[at].classList.add("cursor");
    if (state.typed) box.querySelector(".typed").textContent = `face ${state.typed}… Enter`;
  }

  // every focusable place, in page order: each die's groups, then its loose crops
  function places() {
    const out = [];
    for (const d of state.dice) {
      d.groups.forEach((_g, i) => out.push({ slug: d.slug, place: i }));
      if (d.loose.length) out.push({ slug: d.slug, place: "loose" });
    }
    return out;
  }

  function focusPlace(focus) {
    state.focus = focus;
    const box = boxOf(focus);
    if (box) box.focus();
    updateMarks();
  }

  function restoreFocus() {
    const f = state.focus;
    if (!f) return;
    const die = dieOf(f.slug);
    if (f.place === "loose" && !die.loose.length) f.place = die.groups.length - 1;
    if (f.place !== "loose") f.place = Math.min(f.place, die.groups.length - 1);
    focusPlace(f);
  }

  // -- the steps -------------------------------------------------------------------------

  function cursorCrop() {
    const f = state.focus;
    const crops = cropsOf(dieOf(f.slug), f.place);
    return crops[Math.min(state.cursor.get(placeKey(f.slug, f.place)) || 0, crops.length - 1)];
  }

  // the first place after `from` (in page order, wrapping) still to be named: an unnamed group, or
  // loose crops with an unnamed one (its cursor on that crop); null when every place is named
  function nextToName(from) {
    const all = places();
    const at = all.findIndex((p) => p.slug === from.slug && p.place === from.place);
    for (let k = 1; k <= all.length; k++) {
      const p = all[(at + k) % all.length];
      const die = dieOf(p.slug);
      if (p.place === "loose") {
        const i = die.loose.findIndex((c) => c.face === null);
        if (i >= 0) return { ...p, cursor: i };
      } else if (die.groups[p.place].face === null) {
        return p;
      }
    }
    return null;
  }

  function moveOn(from) {
    const next = nextToName(from);
    if (next) {
      if (next.cursor !== undefined) state.cursor.set(placeKey(next.slug, "loose"), next.cursor);
      focusPlace({ slug: next.slug, place: next.place });
      return dieOf(next.slug).id;
    }
    state.focus = null; // every group named: the keys rename nothing until a group is chosen
    updateMarks();
    $("save").focus();
    return null;
  }

  async function nameFocused(face) {
    const f = state.focus;
    const die = dieOf(f.slug);
    if (!die.faces.includes(face)) throw new Refusal(`${face} is not a face of ${die.id} (${die.faces.join(" ")})`);
    if (f.place === "loose") {
      const crop = cursorCrop();
      const view = await step(f.slug, { op: "name_loose", crop: crop.index, face });
      let text = `${die.id}: crop ${crop.index} named ${face}`;
      if (crop.face === null) {
        // a crop named for the first time: on to the next crop to name, never this one again
        const at = view.loose.findIndex((c) => c.face === null);
        if (at >= 0) state.cursor.set(placeKey(f.slug, "loose"), at);
        else {
          const next = moveOn({ slug: f.slug, place: "loose" });
          text += next ? (next !== die.id ? `; next: ${next}` : "") : "; every group is named: Save names (Enter)";
        }
        updateMarks();
      }
      return report(text);
    }
    const g = f.place;
    const was = die.groups[g].face;
    if (was === face) return report(`${die.id}: group ${g} is named ${face} already`);
    const into = die.groups.findIndex((gr, i) => i !== g && gr.face === face);
    if (was !== null && into >= 0) return ask(f.slug, g, face, into);
    return nameGroup(f.slug, g, face);
  }

  async function nameGroup(slug, g, face) {
    const die = dieOf(slug);
    const was = die.groups[g].face;
    const view = await step(slug, { op: "name", group: g, face });
    const merged = view.groups.length < die.groups.length;
    let text = merged
      ? `${die.id}: group ${g} joined the group named ${face}`
      : was === null
        ? `${die.id}: group ${g} named ${face}`
        : `${die.id}: group ${g} renamed ${was} → ${face}`;
    if (was !== null) return report(text); // a rename: the owner chose this group; the focus stays
    const place = merged ? Math.max(0, view.groups.findIndex((gr) => gr.face === face)) : g;
    const next = moveOn({ slug, place });
    if (next && next !== die.id) text += `; next: ${next}`;
    if (!next) text += "; every group is named: Save names (Enter)";
    report(text);
  }

  function ask(slug, g, face, into) {
    const die = dieOf(slug);
    state.asking = { slug, group: g, face, into };
    const text = `${die.id}: group ${g} is named ${die.groups[g].face}, and group ${into} is named ${face}: merge them into one group named ${face}?`;
    $("ask-text").textContent = text;
    $("ask").hidden = false;
    report(`${text} Enter or Y merges, Escape or N keeps both`);
  }

  async function answer(yes) {
    const a = state.asking;
    if (!a) return;
    state.asking = null;
    $("ask").hidden = true;
    restoreFocus();
    if (!yes) return report(`${dieOf(a.slug).id}: group ${a.group} keeps its name ${dieOf(a.slug).groups[a.group].face}; nothing merged`);
    return nameGroup(a.slug, a.group, a.face);
  }

  async function unnameFocused() {
    const f = state.focus;
    const die = dieOf(f.slug);
    if (f.place === "loose") {
      const crop = cursorCrop();
      if (crop.face === null) return;
      await step(f.slug, { op: "unname", crop: crop.index });
      report(`${die.id}: crop ${crop.index} has no name`);
    } else if (die.groups[f.place].face !== null) {
      await step(f.slug, { op: "unname", group: f.place });
      report(`${die.id}: group ${f.place} has no name`);
    }
  }

  async function moveOut(slug, crop) {
    await step(slug, { op: "move_out", crop });
    report(`${dieOf(slug).id}: crop ${crop} moved out to the loose crops`);
  }

  function clearPicked() {
    state.picked.clear();
    state.pickedSlug = null;
    for (const n of document.querySelectorAll(".crop.picked")) n.classList.remove("picked");
  }

  function togglePick(slug, crop) {
    const die = dieOf(slug);
    const group = die.groups.findIndex((g) => g.crops.some((c) => c.index === crop));
    const first = state.picked.values().next().value;
    const sameGroup = state.pickedSlug === slug && die.groups[group].crops.some((c) => c.index === first);
    if (!sameGroup) clearPicked(); // a split takes crops of one group
    state.pickedSlug = slug;
    if (state.picked.has(crop)) state.picked.delete(crop);
    else state.picked.add(crop);
    const box = boxOf({ slug, place: group });
    for (const b of box.querySelectorAll(".crop")) b.classList.toggle("picked", state.picked.has(Number(b.dataset.crop)));
    report(`${die.id}: ${state.picked.size} crop(s) of group ${group} picked; S splits them off`);
  }

  async function splitPicked() {
    if (!state.picked.size) throw new Refusal("pick crops first: shift-click them (or Space), then S");
    const slug = state.pickedSlug;
    const die = dieOf(slug);
    const crops = [...state.picked];
    const g = die.groups.findIndex((gr) => gr.crops.some((c) => c.index === crops[0]));
    await step(slug, { op: "split", group: g, crops });
    report(`${die.id}: ${crops.length} crop(s) split off group ${g} as group ${g + 1}; type its face`);
    focusPlace({ slug, place: g + 1 });
  }

  async function undo() {
    const slug = state.focus ? state.focus.slug : state.lastSlug;
    const die = slug && dieOf(slug);
    if (!die || !die.can_undo) throw new Refusal(`nothing to undo${die ? ` for ${die.id}` : ""}`);
    await step(slug, { op: "undo" });
    report(`${die.id}: the last step is undone`);
  }

  async function save() {
    const r = await post("/api/teach/save", { etag: state.etag });
    state.saves++;
    restoreFocus();
    report(`Saved manifest.jsonl: ${r.named} dice named in ${r.lines} photos, ${r.unnamed} left without a face`);
    $("next-text").textContent = r.next;
    $("next-label").textContent = r.ready ? "Next, in a shell:" : "Before fitting:";
    $("next").hidden = false;
  }

  function showConflict(message) {
    state.conflicts++;
    $("conflict-text").textContent = message;
    $("conflict").hidden = false;
  }

  async function reload() {
    state.focus = null;
    state.typed = "";
    state.asking = null;
    $("ask").hidden = true;
    clearPicked();
    await load();
    $("conflict").hidden = true;
    report("reloaded teach.json as it is on disk");
  }

  // did another command rewrite teach.json? (304 while it did not; a server gone says nothing)
  async function checkDisk() {
    if (!state.etag || !$("conflict").hidden || document.hidden) return;
    let r;
    try {
      r = await fetch("/api/teach", { headers: { "if-none-match": `"${state.etag}"` }, cache: "no-store" });
    } catch {
      return;
    }
    if (r.status !== 200) return;
    const data = await r.json().catch(() => ({}));
    if (data.etag && data.etag !== state.etag) {
      showConflict("teach.json changed on disk since this page read it (another command wrote it): reload to see it");
    }
  }
  state.check = () => checkDisk();

  // -- keys and clicks -------------------------------------------------------------------

  async function onKey(key) {
    if (state.asking) {
      // Enter or Y merges; Escape or N keeps; any other key keeps too (a slip never merges)
      return answer(key === "Enter" || key === "y");
    }
    const f = state.focus;
    if (!f) {
      if (places().length) focusPlace(places()[0]);
      return;
    }
    const die = dieOf(f.slug);
    if (key === "ArrowDown" || key === "ArrowUp") {
      const all = places();
      const i = all.findIndex((p) => p.slug === f.slug && p.place === f.place);
      const next = all[Math.max(0, Math.min(all.length - 1, i + (key === "ArrowDown" ? 1 : -1)))];
      state.typed = "";
      focusPlace(next);
    } else if (key === "ArrowLeft" || key === "ArrowRight") {
      const k = placeKey(f.slug, f.place);
      const n = cropsOf(die, f.place).length;
      state.cursor.set(k, Math.max(0, Math.min(n - 1, (state.cursor.get(k) || 0) + (key === "ArrowRight" ? 1 : -1))));
      updateMarks();
    } else if (/^[0-9]$/.test(key)) {
      if (singleKey(die)) return nameFocused(Number(key));
      state.typed = (state.typed + key).slice(-2);
      updateMarks();
    } else if (key === "Enter") {
      if (!state.typed) return;
      const face = Number(state.typed);
      state.typed = "";
      updateMarks();
      return nameFocused(face);
    } else if (key === "Backspace") {
      if (!state.typed) return unnameFocused();
      state.typed = state.typed.slice(0, -1);
      updateMarks();
    } else if (key === "Escape") {
      state.typed = "";
      clearPicked();
      updateMarks();
    } else if (key === "m" && f.place !== "loose") {
      return moveOut(f.slug, cursorCrop().index);
    } else if (key === " " && f.place !== "loose") {
      togglePick(f.slug, cursorCrop().index);
    } else if (key === "s") {
      return splitPicked();
    }
  }

  const HANDLED = new Set(["ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "Enter", "Backspace", "Escape", " ", "m", "s", "y", "n"]);

  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("#token")) return;
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "z") {
      e.preventDefault();
      enqueue(undo);
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const inDice = e.target === document.body || (e.target.closest && e.target.closest("#dice"));
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (!inDice || !(HANDLED.has(key) || /^[0-9]$/.test(key))) return;
    e.preventDefault();
    enqueue(() => onKey(key));
  });

  document.addEventListener("focusin", (e) => {
    const box = e.target.closest && e.target.closest("#dice [data-group][tabindex]");
    if (!box) return;
    const place = box.dataset.group === "loose" ? "loose" : Number(box.dataset.group);
    if (!state.focus || state.focus.slug !== box.dataset.slug || state.focus.place !== place) state.typed = "";
    const asked = state.asking;
    if (asked && (asked.slug !== box.dataset.slug || asked.group !== place)) {
      state.asking = null; // another group chosen: the question lapses, nothing merged
      $("ask").hidden = true;
    }
    state.focus = { slug: box.dataset.slug, place };
    updateMarks();
  });

  function bind() {
    const main = $("dice");
    main.addEventListener("mousedown", (e) => {
      if (e.target.closest(".crop")) e.preventDefault(); // the group keeps the focus, not the crop
    });
    main.addEventListener("click", (e) => {
      const b = e.target.closest(".crop");
      if (!b) return;
      const box = b.closest("[data-group]");
      const slug = box.dataset.slug;
      const place = box.dataset.group === "loose" ? "loose" : Number(box.dataset.group);
      const crop = Number(b.dataset.crop);
      const shift = e.shiftKey;
      enqueue(() => {
        const at = cropsOf(dieOf(slug), place).findIndex((c) => c.index === crop);
        if (at < 0) return; // a step before this click moved the crop
        state.cursor.set(placeKey(slug, place), at);
        focusPlace({ slug, place });
        if (place === "loose") return report(`${dieOf(slug).id}: crop ${crop}: type its face`);
        if (shift) return togglePick(slug, crop);
        return moveOut(slug, crop);
      });
    });
    $("move-out").addEventListener("click", () =>
      enqueue(() => (state.focus && state.focus.place !== "loose" ? onKey("m") : null)),
    );
    $("split").addEventListener("click", () => enqueue(splitPicked));
    $("undo").addEventListener("click", () => enqueue(undo));
    $("save").addEventListener("click", () => enqueue(save));
    $("ask-yes").addEventListener("click", () => enqueue(() => answer(true)));
    $("ask-no").addEventListener("click", () => enqueue(() => answer(false)));
    $("reload").addEventListener("click", () => enqueue(reload));
    window.addEventListener("focus", () => enqueue(checkDisk));
    setInterval(() => enqueue(checkDisk), 5000);
    $("token").addEventListener("submit", (e) => {
      e.preventDefault();
      sessionStorage.setItem("dicetower-token", $("token-input").value.trim());
      $("token").hidden = true;
      report("token set: try the step again");
      restoreFocus();
    });
  }

  async function load() {
    const r = await fetch("/api/teach");
    const data = await r.json().catch(() => ({}));
    if (!r.ok) {
      $("dice").replaceChildren(el("p", "refused", (data.error && data.error.message) || `HTTP ${r.status}`));
      for (const b of document.querySelectorAll(".actions button")) b.disabled = true;
      return;
    }
    state.dice = data.dice;
    state.etag = data.etag;
    if (data.token_required && !sessionStorage.getItem("dicetower-token")) $("token").hidden = false;
    $("dice").replaceChildren(...state.dice.map(renderDie));
    renderProgress();
    if (!state.focus && state.dice.length) {
      const first = places().find((p) => p.place !== "loose" && dieOf(p.slug).groups[p.place].face === null);
      state.focus = first || places()[0] || null;
    }
    restoreFocus();
    document.body.dataset.ready = "true";
  }

  bind();
  enqueue(load);
})();
