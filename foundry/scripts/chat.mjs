/**
 * Rolls made at the tower (its button, HTTP, MQTT) as Foundry chat messages: the expression, every die's crop and
 * face, the outcome, and the roll's log id and hash, so the table can check a message against the tower's log.
 *
 * Everything from the tower is escaped: a roller's name or an outcome is text, never markup.
 */

/** The suffix the module puts on its own rollers' names, so the chat feed does not post Foundry's rolls twice. */
export const FOUNDRY_ROLLER_SUFFIX = " (Foundry)";

/** Most dice drawn in one message; the rest are counted. */
export const MAX_DICE_SHOWN = 50;

export function escapeHtml(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Whether a finished tower roll belongs in chat: not one the module asked for (Foundry posts those itself). */
export function shouldPost(roll) {
  return Boolean(roll) && typeof roll.id === "number" && !String(roll.roller ?? "").endsWith(FOUNDRY_ROLLER_SUFFIX);
}

/**
 * The chat message data for a finished tower roll.
 * @param {object} roll the tower's roll document (`GET /api/rolls/{id}` or a `result` event's `roll`)
 * @param {(path: string) => string} resolve makes the tower's paths (`crop_url`) absolute
 * @returns {{content: string, speaker: {alias: string}, flags: object}}
 */
export function towerRollMessage(roll, resolve) {
  const dice = Array.isArray(roll.dice) ? roll.dice : [];
  const shown = dice.slice(0, MAX_DICE_SHOWN).map((die) => dieHtml(die, resolve));
  const more = (roll.dice_count ?? dice.length) - shown.length;
  const label = roll.label || roll.expression || roll.notation || "";
  const outcome = roll.outcome ? `<div class="dicetower-outcome">${escapeHtml(roll.outcome)}</div>` : "";
  const hash = typeof roll.hash === "string" ? roll.hash : "";
  const content = [
    `<div class="dicetower-roll">`,
    `<div class="dicetower-label">${escapeHtml(label)}</div>`,
    `<div class="dicetower-dice">${shown.join("")}${more > 0 ? `<span class="dicetower-more">+${more} more</span>` : ""}</div>`,
    `<div class="dicetower-total">${escapeHtml(roll.total ?? "")}</div>`,
    outcome,
    `<div class="dicetower-log" title="${escapeHtml(hash)}">log #${escapeHtml(roll.id)} · ${escapeHtml(hash.slice(0, 12))}</div>`,
    `</div>`,
  ].join("");
  // The alias is plain text to Foundry; markup characters are dropped rather than trusted to its templates.
  const roller = String(roll.roller ?? "").replace(/[<>&"'`]/g, "").slice(0, 40);
  const speaker = { alias: roller ? `${roller} at the tower` : "the tower" };
  return { content, speaker, flags: { dicetower: { id: roll.id, hash } } };
}

function dieHtml(die, resolve) {
  const title = `${die.die ?? ""} ${die.label ?? ""}`.trim();
  const face = escapeHtml(die.face ?? "?");
  if (typeof die.crop_url === "string" && die.crop_url) {
    const src = escapeHtml(resolve(die.crop_url));
    return `<figure class="dicetower-die" title="${escapeHtml(title)}"><img src="${src}" alt="${face}"><figcaption>${face}</figcaption></figure>`;
  }
  return `<figure class="dicetower-die" title="${escapeHtml(title)}"><figcaption>${face}</figcaption></figure>`;
}
