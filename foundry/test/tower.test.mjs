import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { TowerClient, TowerError } from "../scripts/tower.mjs";
import { startFakeTower } from "./fake-tower.mjs";

let tower;
before(async () => {
  tower = await startFakeTower();
});
after(() => tower.close());

const client = (options = {}) =>
  new TowerClient({ url: tower.url, WebSocket: tower.WebSocket, requestTimeoutMs: 300, pollMs: 10, ...options });

const reset = (changes = {}) => Object.assign(tower, { mode: "ok", token: "", faces: [], finishMs: 20 }, changes);

test("a throw waits on the event stream and returns the logged roll", async () => {
  reset({ faces: [12, 5] });
  const roll = await client().throwDice("1d20+1d6", { roller: "Ann (Foundry)" });
  assert.equal(roll.status, "done");
  assert.deepEqual(roll.dice.map((d) => d.face), [12, 5]);
  assert.equal(tower.requests.at(-1).roller, "Ann (Foundry)");
});

test("a throw with no roller sends none (the tower refuses an empty one)", async () => {
  reset({ faces: [2] });
  await client().throwDice("1d6");
  assert.equal(Object.hasOwn(tower.requests.at(-1), "roller"), false);
});

test("a stream dropped mid-throw falls back to polling the roll", async () => {
  reset({ mode: "dropws", finishMs: 80, faces: [9] });
  const roll = await client().throwDice("1d20");
  assert.equal(roll.dice[0].face, 9);
});

test("without a WebSocket at all the roll is polled", async () => {
  reset({ faces: [4] });
  const roll = await client({ WebSocket: undefined }).throwDice("1d6");
  assert.equal(roll.dice[0].face, 4);
});

const failsWith = async (promise, kind, pattern) => {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof TowerError, String(error));
    assert.equal(error.kind, kind);
    if (pattern) assert.match(error.message, pattern);
    return true;
  });
};

test("a wrong token is said as such", async () => {
  reset({ token: "right" });
  await failsWith(client({ token: "wrong" }).throwDice("1d6"), "auth", /token/);
  reset({ token: "right", faces: [3] });
  assert.equal((await client({ token: "right" }).throwDice("1d6")).dice[0].face, 3);
});

test("garbage, a busy queue, a refusal, a failed roll, silence and a roll that never ends", async () => {
  reset({ mode: "garbage" });
  await failsWith(client().throwDice("1d6"), "garbage", /not JSON/);
  reset({ mode: "busy" });
  await failsWith(client().throwDice("1d6"), "busy", /queue is full/);
  reset({ tray: ["d6"] });
  await failsWith(client().throwDice("1d20"), "refused", /holds no d20/);
  tower.tray = ["d6", "d10", "d10t", "d20"];
  reset({ mode: "fail" });
  await failsWith(client().throwDice("1d6"), "failed", /unreadable/);
  reset({ mode: "silent" });
  await failsWith(client().throwDice("1d6"), "timeout", /did not answer/);
  reset({ mode: "never" });
  await failsWith(client().throwDice("1d6", { timeoutMs: 150 }), "timeout", /did not finish/);
});

test("an unreachable tower and a URL that is not one", async () => {
  await failsWith(new TowerClient({ url: "http://127.0.0.1:9", requestTimeoutMs: 500 }).status(), "unreachable");
  assert.throws(() => new TowerClient({ url: "dicetower.local" }), /not a URL/);
  assert.throws(() => new TowerClient({ url: "ftp://x" }), /http/);
});

test("follow delivers each event once, across a reconnect", async () => {
  reset();
  const seen = [];
  const stop = client().follow((event) => seen.push(event.id), { retryMs: 5 });
  await new Promise((r) => setTimeout(r, 20));
  tower.broadcast({ type: "result", id: 101, roll: { id: 101 } });
  [...tower.sockets].forEach((s) => s.close());
  await new Promise((r) => setTimeout(r, 30));
  tower.broadcast({ type: "result", id: 102, roll: { id: 102 } });
  await new Promise((r) => setTimeout(r, 20));
  stop();
  assert.deepEqual(seen, [101, 102]);
});
