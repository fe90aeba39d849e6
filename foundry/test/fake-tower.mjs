/**
 * A stand-in tower for the module's Node tests: a real HTTP server on loopback speaking the tower's API shapes
 * (docs/server.md: `GET /api/tower`, `POST /api/rolls`, `GET /api/rolls/{id}`) and an in-process WebSocket class
 * that carries its event stream. Faces are scripted, so each test knows what the tower "read"; modes inject the
 * failures the module must survive. The real tower is tested end to end in tests/foundry (Chromium against
 * `dicetower serve --tower sim`).
 */

import http from "node:http";

const KINDS = { d6: ["d6"], d8: ["d8"], d10: ["d10"], d12: ["d12"], d20: ["d20"], d100: ["d10t", "d10"] };

export async function startFakeTower({ token = "", tray = ["d6", "d10", "d10t", "d20"] } = {}) {
  const tower = {
    token,
    tray,
    faces: [], // scripted faces, taken in order; a d10t face is 0-90
    mode: "ok", // ok | garbage | busy | silent | fail | dropws | never
    finishMs: 20,
    rolls: new Map(),
    requests: [],
    sockets: new Set(),
    seq: 0,
    epoch: "fake-epoch",
  };

  const send = (response, status, body, type = "application/json") => {
    response.writeHead(status, { "Content-Type": type });
    response.end(typeof body === "string" ? body : JSON.stringify(body));
  };

  tower.broadcast = (event) => {
    const framed = { seq: ++tower.seq, epoch: tower.epoch, time: Date.now() / 1000, ...event };
    for (const socket of tower.sockets) socket.deliver(framed);
  };

  const finish = (roll) => {
    if (tower.mode === "fail") {
      roll.status = "failed";
      roll.error = "a die stayed unreadable after 3 throws";
      tower.broadcast({ type: "error", id: roll.id, message: roll.error, roll });
      return;
    }
    roll.status = "done";
    roll.hash = `hash-${roll.id}`;
    tower.broadcast({ type: "result", id: roll.id, roll });
  };

  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      if (tower.mode === "silent") return; // never answers: the client's timeout must fire
      if (tower.mode === "garbage") return send(response, 200, "<html>router login</html>", "text/html");
      if (tower.token && request.headers.authorization !== `Bearer ${tower.token}` && request.method === "POST") {
        return send(response, 401, { error: { status: 401, field: "token", message: "token required" } });
      }
      const url = new URL(request.url, "http://tower");
      if (request.method === "GET" && url.pathname === "/api/tower") {
        return send(response, 200, {
          roller: { source: "tower:fake", state: "idle", tray: tower.tray.map((kind) => ({ kind, colour: "white", role: "plain", count: 2 })) },
          rolling: null,
          queue_length: 0,
        });
      }
      if (request.method === "POST" && url.pathname === "/api/rolls") {
        if (tower.mode === "busy") return send(response, 503, { error: { status: 503, message: "the queue is full" } });
        const asked = JSON.parse(body);
        tower.requests.push(asked);
        const dice = [];
        for (const part of asked.notation.split("+")) {
          const [, count, denomination] = /^(\d+)(d\d+)$/.exec(part);
          for (let i = 0; i < Number(count); i++) {
            for (const kind of KINDS[denomination]) {
              if (!tower.tray.includes(kind)) {
                return send(response, 422, { error: { status: 422, field: "notation", message: `the tray holds no ${kind}` } });
              }
              const face = tower.faces.length ? tower.faces.shift() : kind === "d10t" ? 0 : 1;
              dice.push({ slot: dice.length, kind, die: `white ${kind}`, purpose: "base", face, crop_url: `/api/rolls/x/dice/${dice.length}.jpg` });
            }
          }
        }
        const id = tower.rolls.size + 1;
        const roll = { id, status: "queued", roller: asked.roller, label: asked.notation, dice, total: 0 };
        tower.rolls.set(id, roll);
        send(response, 202, { id, status: "queued", url: `/api/rolls/${id}` });
        if (tower.mode === "dropws") {
          setTimeout(() => [...tower.sockets].forEach((s) => s.close()), 5);
        }
        if (tower.mode !== "never") setTimeout(() => finish(roll), tower.finishMs);
        return;
      }
      const one = /^\/api\/rolls\/(\d+)$/.exec(url.pathname);
      if (request.method === "GET" && one) {
        const roll = tower.rolls.get(Number(one[1]));
        return roll ? send(response, 200, roll) : send(response, 404, { error: { status: 404, message: "no such roll" } });
      }
      send(response, 404, { error: { status: 404, message: "not found" } });
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  tower.url = `http://127.0.0.1:${server.address().port}`;

  /** The tower's WebSocket, in process: opens at once unless the tower refuses it. */
  tower.WebSocket = class FakeSocket {
    constructor(url, protocols = []) {
      this.url = url;
      this.protocols = protocols;
      this.open = false;
      queueMicrotask(() => {
        if (tower.token && !protocols.includes(`bearer.${tower.token}`)) {
          this.onclose?.({ code: 1008 });
          return;
        }
        this.open = true;
        tower.sockets.add(this);
        this.onopen?.();
        this.deliver({ type: "hello", seq: tower.seq, epoch: tower.epoch });
      });
    }

    deliver(event) {
      if (this.open) this.onmessage?.({ data: JSON.stringify(event) });
    }

    close() {
      if (!this.open) return;
      this.open = false;
      tower.sockets.delete(this);
      this.onclose?.({ code: 1000 });
    }
  };

  tower.close = () =>
    new Promise((resolve) => {
      for (const socket of tower.sockets) socket.close();
      server.closeAllConnections?.();
      server.close(resolve);
    });
  return tower;
}
