import assert from "node:assert/strict";
import { test } from "node:test";

import { foundryResults, throwNotation, towerDenominations } from "../scripts/dice.mjs";

const die = (slot, kind, face, purpose = "base") => ({ slot, kind, face, purpose });

test("the tray's kinds decide the denominations; a d100 needs a tens and a units die", () => {
  const tray = (...kinds) => ({ roller: { tray: kinds.map((kind) => ({ kind })) } });
  assert.deepEqual(towerDenominations(tray("d6", "d20")), ["d6", "d20"]);
  assert.deepEqual(towerDenominations(tray("d6", "d10")), ["d6", "d10"]);
  assert.deepEqual(towerDenominations(tray("d10t", "d10", "d20")), ["d10", "d20", "d100"]);
  assert.deepEqual(towerDenominations({ roller: { source: "rng" } }), ["d6", "d10", "d20", "d100"]);
});

test("one throw's notation, and refusals before anything is sent", () => {
  assert.equal(throwNotation([{ denomination: "d20", count: 2 }, { denomination: "d6", count: 1 }]), "2d20+1d6");
  assert.throws(() => throwNotation([]), /no dice/);
  assert.throws(() => throwNotation([{ denomination: "d4", count: 1 }]), /cannot throw a d4/);
  assert.throws(() => throwNotation([{ denomination: "d6", count: 0 }]), /count of 0/);
  assert.throws(() => throwNotation([{ denomination: "d6", count: 101 }]), /at most 100/);
});

test("faces become Foundry results in slot order: a d10's 0 is 10, a d100 pair 00+0 is 100", () => {
  const asks = [
    { denomination: "d20", count: 2 },
    { denomination: "d10", count: 1 },
    { denomination: "d100", count: 2 },
  ];
  const roll = {};
  roll.dice = [die(6, "d10", 0), die(0, "d20", 17), die(1, "d20", 3), die(2, "d10", 0), die(3, "d10t", 0), die(4, "d10", 7), die(5, "d10t", 90)]; // listed out of slot order
  assert.deepEqual(foundryResults(asks, roll), [[17, 3], [10], [7, 90]]);
  roll.dice = [die(0, "d20", 17), die(1, "d20", 3), die(2, "d10", 4), die(3, "d10t", 0), die(4, "d10", 0), die(5, "d10t", 0), die(6, "d10", 1)];
  assert.deepEqual(foundryResults(asks, roll), [[17, 3], [4], [100, 1]]);
});

test("an answer that does not fit the asks is refused, never read as dice", () => {
  const asks = [{ denomination: "d20", count: 1 }];
  assert.throws(() => foundryResults(asks, { dice: [die(0, "d6", 4)] }), /is a d6, not a d20/);
  assert.throws(() => foundryResults(asks, { dice: [] }), /fewer dice/);
  assert.throws(() => foundryResults(asks, { dice: [die(0, "d20", 21)] }), /not a face of a d20/);
  assert.throws(() => foundryResults(asks, { dice: [die(0, "d20", "7")] }), /not a face/);
  assert.throws(() => foundryResults(asks, { dice: [die(0, "d20", 4), die(1, "d20", 5)] }), /1 more dice/);
  assert.throws(() => foundryResults(asks, {}), /no dice/);
  // follow-up dice the tower threw for its own rules are not the module's
  assert.deepEqual(foundryResults(asks, { dice: [die(0, "d20", 4), die(1, "d20", 5, "explosion")] }), [[4]]);
});
