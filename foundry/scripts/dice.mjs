/**
 * Foundry dice ⇄ tower dice: which denominations the tower can throw, the notation of one throw, and how the faces
 * the tower logged become Foundry results.
 *
 * Pure functions, no Foundry and no network, so the mapping is tested on its own. The tower's notation and faces are
 * the ones its roll log stores (docs/notation.md): a d10 shows 0-9 (Foundry's d10 is 1-10, so 0 is 10), and Foundry's
 * d100 is the tower's `d100`, a tens die (00-90) and a units die (0-9) thrown together, 00 and 0 reading 100.
 */

/** Foundry denomination → the tower kinds one Foundry die takes, in the order the tower logs them. */
export const TOWER_KINDS = Object.freeze({
  d6: ["d6"],
  d8: ["d8"],
  d10: ["d10"],
  d12: ["d12"],
  d20: ["d20"],
  d100: ["d10t", "d10"],
});

/** The denominations a tower reads when it does not say what its tray holds (an RNG-backed server). */
export const READABLE_DENOMINATIONS = Object.freeze(["d6", "d10", "d20", "d100"]);

/** Most physical dice one Foundry roll may send to the tower (the tower itself refuses more than 1,000). */
export const MAX_DICE = 100;

/**
 * The Foundry denominations a tower can throw, from its `/api/tower` document.
 *
 * `roller.tray` lists the loaded dice (`[{kind, colour, role, count}]`); without it (the RNG) every readable
 * denomination is offered. A d100 needs both a tens die and a units d10 in the tray.
 * @param {object} status the `/api/tower` document
 * @returns {string[]} denominations, e.g. `["d6", "d20", "d100"]`
 */
export function towerDenominations(status) {
  const tray = status?.roller?.tray;
  if (!Array.isArray(tray)) return [...READABLE_DENOMINATIONS];
  const kinds = new Set(tray.map((die) => die?.kind).filter((kind) => typeof kind === "string"));
  return Object.entries(TOWER_KINDS)
    .filter(([, needs]) => needs.every((kind) => kinds.has(kind)))
    .map(([denomination]) => denomination);
}

/**
 * One throw's notation for the dice asked: `[{denomination: "d20", count: 2}, {denomination: "d6", count: 1}]` →
 * `"2d20+1d6"`. Throws a TypeError for a denomination the tower cannot throw or a count out of range, before
 * anything is sent.
 * @param {{denomination: string, count: number}[]} asks
 * @returns {string}
 */
export function throwNotation(asks) {
  if (!Array.isArray(asks) || asks.length === 0) throw new TypeError("no dice to throw");
  let total = 0;
  const parts = asks.map(({ denomination, count }) => {
    if (!Object.hasOwn(TOWER_KINDS, denomination)) throw new TypeError(`the tower cannot throw a ${denomination}`);
    if (!Number.isInteger(count) || count < 1) throw new TypeError(`a count of ${count} ${denomination}`);
    total += count;
    return `${count}${denomination}`;
  });
  if (total > MAX_DICE) throw new TypeError(`${total} dice in one roll; the module sends at most ${MAX_DICE}`);
  return parts.join("+");
}

/**
 * The Foundry results of a finished tower roll, one list per ask, in the order of the tray slots the tower logged.
 *
 * Only the roll's initial dice count (`purpose: "base"`): the module asks for plain dice, and Foundry applies its own
 * modifiers. Anything that does not fit the asks exactly — a die of another kind, a missing face, a face off the die —
 * throws a TypeError naming it: a tower that answers something else is never read as dice.
 * @param {{denomination: string, count: number}[]} asks
 * @param {object} roll the tower's `GET /api/rolls/{id}` document
 * @returns {number[][]}
 */
export function foundryResults(asks, roll) {
  if (!roll || !Array.isArray(roll.dice)) throw new TypeError("the tower's roll has no dice");
  const dice = roll.dice.filter((die) => die && die.purpose === "base");
  dice.sort((a, b) => a.slot - b.slot);
  let next = 0;
  const take = (kind) => {
    const die = dice[next++];
    if (!die) throw new TypeError(`the tower's roll has fewer dice than asked (a ${kind} is missing)`);
    if (die.kind !== kind) throw new TypeError(`slot ${die.slot} is a ${die.kind}, not a ${kind}`);
    return checkedFace(die);
  };
  const results = asks.map(({ denomination, count }) => {
    const values = [];
    for (let i = 0; i < count; i++) {
      if (denomination === "d100") {
        const tens = take("d10t");
        const units = take("d10");
        values.push(tens + units === 0 ? 100 : tens + units);
      } else if (denomination === "d10") {
        const face = take("d10");
        values.push(face === 0 ? 10 : face);
      } else {
        values.push(take(denomination));
      }
    }
    return values;
  });
  if (next !== dice.length) throw new TypeError(`the tower's roll has ${dice.length - next} more dice than asked`);
  return results;
}

const FACES = Object.freeze({
  d6: (f) => f >= 1 && f <= 6,
  d8: (f) => f >= 1 && f <= 8,
  d10: (f) => f >= 0 && f <= 9,
  d10t: (f) => f >= 0 && f <= 90 && f % 10 === 0,
  d12: (f) => f >= 1 && f <= 12,
  d20: (f) => f >= 1 && f <= 20,
});

function checkedFace(die) {
  const face = die.face;
  const onDie = FACES[die.kind];
  if (!Number.isInteger(face) || !onDie || !onDie(face)) {
    throw new TypeError(`slot ${die.slot}: ${JSON.stringify(face)} is not a face of a ${die.kind}`);
  }
  return face;
}
