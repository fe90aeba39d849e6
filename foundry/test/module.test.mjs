import assert from "node:assert/strict";
import { after, before, beforeEach, test } from "node:test";

import { install } from "../scripts/module.mjs";
import { createFoundry } from "./fake-foundry.mjs";
import { startFakeTower } from "./fake-tower.mjs";

let tower;
before(async () => {
  tower = await startFakeTower({ tray: ["d6", "d20", "d10t", "d10"] });
});
after(() => tower.close());

let env;
let live;
beforeEach(async () => {
  Object.assign(tower, { mode: "ok", token: "", faces: [], finishMs: 10, tray: ["d6", "d20", "d10t", "d10"] });
  tower.rolls.clear();
  tower.requests.length = 0;
  env = { ...createFoundry(), fetch: globalThis.fetch, WebSocket: tower.WebSocket };
  live = install(env);
  env.Hooks.callAll("init");
  await env.game.settings.set("dicetower", "url", tower.url);
  await env.game.settings.set("dicetower", "timeoutSeconds", 5);
  await env.game.settings.set("dicetower", "postTowerRolls", false);
  env.Hooks.callAll("ready");
  await live.ready;
});
test.afterEach(() => live.stop());

const useTower = (...denominations) =>
  env.game.settings.set("core", "diceConfiguration", Object.fromEntries(denominations.map((d) => [d, "dicetower"])));

test("the module registers an interactive fulfillment method with its own resolver, and its settings", () => {
  const method = env.CONFIG.Dice.fulfillment.methods.dicetower;
  assert.equal(method.interactive, true);
  assert.equal(typeof method.resolver, "function");
  assert.ok(method.resolver.prototype instanceof env.foundry.applications.dice.RollResolver);
  for (const key of ["url", "token", "timeoutSeconds", "postTowerRolls"]) {
    assert.equal(env.game.settings.definitions.get(`dicetower.${key}`).scope, "world");
  }
  assert.deepEqual([...live.denominations], ["d6", "d10", "d20", "d100"]);
  assert.equal(live.state, "online");
});

test("2d20kh + 1d6: one throw, Foundry's modifiers on the tower's faces", async () => {
  await useTower("d20", "d6");
  tower.faces = [7, 15, 4];
  const roll = await new env.Roll("2d20kh + 1d6").evaluate();
  assert.equal(tower.requests.length, 1);
  assert.equal(tower.requests[0].notation, "2d20+1d6");
  assert.equal(tower.requests[0].roller, "Ann (Foundry)");
  assert.deepEqual(roll.dice[0].results.map((r) => r.result), [7, 15]);
  assert.deepEqual(roll.dice[0].results.map((r) => r.active), [false, true]);
  assert.deepEqual(roll.dice[1].results.map((r) => r.result), [4]);
  assert.equal(roll.total, 19);
  assert.deepEqual(roll.options.dicetower, [{ id: 1, hash: "hash-1", notation: "2d20+1d6" }]);
});

test("an explosion and a reroll are further throws at the tower", async () => {
  await useTower("d6", "d20");
  tower.faces = [6, 2];
  const exploded = await new env.Roll("1d6x").evaluate();
  assert.deepEqual(exploded.dice[0].results.map((r) => r.result), [6, 2]);
  assert.deepEqual(tower.requests.map((r) => r.notation), ["1d6", "1d6"]);
  tower.faces = [1, 13];
  const rerolled = await new env.Roll("1d20r1").evaluate();
  assert.equal(rerolled.total, 13);
  assert.deepEqual(tower.requests.map((r) => r.notation).slice(2), ["1d20", "1d20"]);
});

test("a d100 is a tens and units pair, and dice left to Foundry are not sent", async () => {
  await useTower("d100");
  tower.faces = [40, 5];
  const roll = await new env.Roll("1d100 + 1d6").evaluate();
  assert.deepEqual(tower.requests.map((r) => r.notation), ["1d100"]);
  assert.equal(roll.dice[0].results[0].result, 45);
  assert.ok(roll.dice[1].results[0].result >= 1);
});

const typeByHand = async (roll, denomination, face) => {
  // what a player does: read the module's error, then type the die into the resolver's form
  for (let i = 0; i < 200 && !env.ui.notifications.messages.length; i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(env.foundry.applications.dice.RollResolver.active.length, "the resolver's form is open");
  assert.equal(env.Roll.registerResult("manual", denomination, face), true);
};

for (const [mode, said] of [
  ["busy", /busy/],
  ["garbage", /not JSON/],
  ["fail", /unreadable/],
]) {
  test(`a ${mode} tower is said in Foundry and the die is typed by hand, never rolled digitally`, async () => {
    await useTower("d20");
    tower.mode = mode;
    const rolling = new env.Roll("1d20").evaluate();
    await typeByHand(rolling, "d20", 11);
    const roll = await rolling;
    assert.equal(roll.total, 11);
    const [message] = env.ui.notifications.messages;
    assert.equal(message.level, "error");
    assert.match(message.message, said);
    assert.match(message.message, /by hand/);
  });
}

test("a kind the tray lacks is refused before any throw", async () => {
  tower.tray = ["d6"];
  await live.refresh();
  await useTower("d20");
  const rolling = new env.Roll("1d20").evaluate();
  await typeByHand(rolling, "d20", 3);
  await rolling;
  assert.equal(tower.requests.length, 0);
  assert.match(env.ui.notifications.messages[0].message, /holds no d20/);
});

test("a wrong token is said, and an unreachable tower shows on the status", async () => {
  tower.token = "secret";
  await env.game.settings.set("dicetower", "token", "wrong");
  await useTower("d6");
  const rolling = new env.Roll("1d6").evaluate();
  await typeByHand(rolling, "d6", 2);
  await rolling;
  assert.match(env.ui.notifications.messages[0].message, /token/);
  await env.game.settings.set("dicetower", "url", "http://127.0.0.1:9");
  await live.refresh();
  assert.equal(live.state, "unreachable");
});

test("the GM's client posts rolls made at the tower to chat, escaped, and not Foundry's own", async () => {
  await env.game.settings.set("dicetower", "postTowerRolls", true);
  await new Promise((r) => setTimeout(r, 20));
  const roll = (id, roller) => ({
    id,
    roller,
    label: "4d6kh3",
    total: 12,
    outcome: "<b>success</b>",
    hash: "ab".repeat(32),
    dice: [{ slot: 0, kind: "d6", die: "white d6", face: 5, crop_url: `/api/rolls/${id}/dice/0.jpg` }],
  });
  tower.broadcast({ type: "result", id: 7, roll: roll(7, "<img src=x onerror=alert(1)>") });
  tower.broadcast({ type: "result", id: 8, roll: roll(8, "Ann (Foundry)") });
  tower.broadcast({ type: "result", id: 7, roll: roll(7, "again") });
  await live.lastPost;
  const posted = env.ChatMessage.created;
  assert.equal(posted.length, 1);
  assert.deepEqual(posted[0].flags.dicetower, { id: 7, hash: "ab".repeat(32) });
  assert.ok(!posted[0].content.includes("<b>success"));
  assert.ok(!posted[0].speaker.alias.includes("<img"));
  assert.ok(posted[0].content.includes(`src="${tower.url}/api/rolls/7/dice/0.jpg"`));
  assert.ok(posted[0].content.includes("log #7"));
});
