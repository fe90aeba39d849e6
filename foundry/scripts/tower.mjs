/**
 * The tower's HTTP and WebSocket API as the module uses it (docs/server.md): read its status, queue a roll, wait for
 * the roll to finish, follow its event stream.
 *
 * Every failure is a TowerError with a `kind` the module turns into a sentence for the player, because each asks for
 * something different of them: an unreachable tower (check the URL, mixed content), a wrong token, a busy tower (try
 * again), a roll the tower refuses (its tray lacks a kind), a timeout, a roll that failed at the tower (a die stayed
 * unreadable), or an answer that is not the tower's (garbage). `fetch` and `WebSocket` are passed in, so the same code
 * runs in Foundry's browser and under Node's test runner.
 */

export const ERROR_KINDS = Object.freeze([
  "unreachable",
  "auth",
  "busy",
  "refused",
  "timeout",
  "failed",
  "garbage",
]);

export class TowerError extends Error {
  /**
   * @param {string} kind one of ERROR_KINDS
   * @param {string} message what went wrong, in words for the player
   */
  constructor(kind, message) {
    super(message);
    this.name = "TowerError";
    this.kind = kind;
  }
}

/** Longest a JSON answer may be; the tower's largest documents (a roll of 1,000 dice) are far smaller. */
const MAX_BODY_CHARS = 4_000_000;

export class TowerClient {
  /**
   * @param {object} options
   * @param {string} options.url the tower's address, e.g. `http://dicetower.local:8080`
   * @param {string} [options.token] the tower's API token (docs/server.md), when rolling needs one
   * @param {Function} [options.fetch] the fetch to use (the browser's by default)
   * @param {Function} [options.WebSocket] the WebSocket class to use (the browser's by default)
   * @param {number} [options.requestTimeoutMs] longest one HTTP request may take
   * @param {number} [options.pollMs] how often a roll is polled when its event stream is lost
   */
  constructor({ url, token = "", fetch, WebSocket, requestTimeoutMs = 5_000, pollMs = 500 }) {
    this.base = normaliseUrl(url);
    this.token = token || "";
    this.fetch = fetch ?? globalThis.fetch?.bind(globalThis);
    this.WebSocket = WebSocket ?? globalThis.WebSocket;
    this.requestTimeoutMs = requestTimeoutMs;
    this.pollMs = pollMs;
  }

  /** `GET /api/tower`: the tower's state, tray and queue. */
  async status() {
    return this.#request("GET", "/api/tower");
  }

  /** `GET /api/rolls/{id}`: one roll, whole. */
  async roll(id) {
    return this.#request("GET", `/api/rolls/${encodeURIComponent(id)}`);
  }

  /**
   * Throw `notation` at the tower and wait for the finished roll.
   *
   * The event stream is opened before the roll is queued, so its result cannot be missed; if the stream cannot be
   * opened or drops mid-throw, the roll is polled instead until it finishes or `timeoutMs` passes.
   * @param {string} notation e.g. `"2d20+1d6"`
   * @param {object} [options]
   * @param {string} [options.roller] who asked (shown on the overlay and in the log)
   * @param {number} [options.timeoutMs] longest the whole throw may take
   * @param {(id: number) => void} [options.onQueued] called with the roll's id once the tower accepted it
   * @returns {Promise<object>} the `GET /api/rolls/{id}` document of the finished roll
   */
  async throwDice(notation, { roller = "", timeoutMs = 60_000, onQueued } = {}) {
    const deadline = Date.now() + timeoutMs;
    const stream = await this.#openStream().catch(() => null);
    try {
      const queued = await this.#request("POST", "/api/rolls", roller ? { notation, roller } : { notation });
      if (!Number.isSafeInteger(queued?.id)) throw new TowerError("garbage", "the tower's answer names no roll");
      onQueued?.(queued.id);
      await this.#awaitEnd(queued.id, stream, deadline);
      const roll = await this.roll(queued.id);
      if (roll?.status === "failed") throw new TowerError("failed", failureText(roll));
      if (roll?.status !== "done") throw new TowerError("garbage", `the tower says roll ${queued.id} is ${roll?.status}`);
      return roll;
    } finally {
      stream?.close();
    }
  }

  /**
   * Follow the event stream: `onEvent` gets every event after the connection's snapshot, in order, once each (a
   * reconnect resumes from the last `seq` seen). Returns a function that stops following.
   * @param {(event: object) => void} onEvent
   * @param {object} [options]
   * @param {number} [options.retryMs] wait before reconnecting
   * @param {(up: boolean) => void} [options.onState] called when the stream opens or drops
   */
  follow(onEvent, { retryMs = 3_000, onState } = {}) {
    let stopped = false;
    let socket = null;
    let timer = null;
    let resume = null; // {epoch, seq}
    const connect = () => {
      if (stopped) return;
      const query = resume ? `?since=${resume.seq}&epoch=${encodeURIComponent(resume.epoch)}` : "?last=0";
      try {
        socket = new this.WebSocket(this.#wsUrl(`/ws${query}`), this.#protocols());
      } catch {
        timer = setTimeout(connect, retryMs);
        return;
      }
      socket.onopen = () => onState?.(true);
      socket.onmessage = (message) => {
        const event = parseEvent(message.data);
        if (!event) return;
        if (resume && event.epoch === resume.epoch && Number(event.seq) <= resume.seq) return;
        if (Number.isSafeInteger(event.seq) && typeof event.epoch === "string") {
          resume = { epoch: event.epoch, seq: event.seq };
        }
        if (event.type === "snapshot" || event.type === "hello") return;
        onEvent(event);
      };
      socket.onclose = () => {
        onState?.(false);
        if (!stopped) timer = setTimeout(connect, retryMs);
      };
      socket.onerror = () => {};
    };
    connect();
    return () => {
      stopped = true;
      clearTimeout(timer);
      socket?.close();
    };
  }

  /** An absolute URL on the tower for a path it gave (a crop's `crop_url`, a photo's `url`). */
  resolve(path) {
    return new URL(path, `${this.base}/`).href;
  }

  async #awaitEnd(id, stream, deadline) {
    if (stream) {
      const ended = await stream.waitFor(id, deadline);
      if (ended) return;
    }
    // No stream, or it dropped: ask the roll itself until it ends.
    while (Date.now() < deadline) {
      const roll = await this.roll(id);
      if (roll?.status === "done" || roll?.status === "failed") return;
      await sleep(Math.min(this.pollMs, Math.max(0, deadline - Date.now())));
    }
    throw new TowerError("timeout", `the tower did not finish roll ${id} in time`);
  }

  async #openStream() {
    if (!this.WebSocket) return null;
    const socket = new this.WebSocket(this.#wsUrl("/ws?last=0"), this.#protocols());
    const ended = new Set();
    const waiters = new Map();
    let closed = false;
    let dropped = () => {};
    const droppedOnce = new Promise((resolve) => (dropped = resolve));
    socket.onmessage = (message) => {
      const event = parseEvent(message.data);
      if (!event) return;
      if (event.type === "result" || event.type === "error") {
        const id = event.id ?? event.roll?.id;
        ended.add(id);
        waiters.get(id)?.();
      }
    };
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no stream")), this.requestTimeoutMs);
      socket.onopen = () => {
        clearTimeout(timer);
        resolve();
      };
      socket.onclose = () => {
        clearTimeout(timer);
        closed = true;
        dropped();
        reject(new Error("stream refused"));
      };
      socket.onerror = () => {};
    });
    socket.onclose = () => {
      closed = true;
      dropped();
    };
    return {
      /** true when the roll ended on the stream; false when the stream dropped first (the caller polls). */
      waitFor: (id, deadline) => {
        if (ended.has(id)) return Promise.resolve(true);
        if (closed) return Promise.resolve(false);
        return new Promise((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new TowerError("timeout", `the tower did not finish roll ${id} in time`)),
            Math.max(0, deadline - Date.now()),
          );
          waiters.set(id, () => {
            clearTimeout(timer);
            resolve(true);
          });
          droppedOnce.then(() => {
            clearTimeout(timer);
            resolve(false);
          });
        });
      },
      close: () => socket.close(),
    };
  }

  async #request(method, path, body) {
    if (!this.fetch) throw new TowerError("unreachable", "this browser has no fetch");
    const headers = { Accept: "application/json" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.requestTimeoutMs);
    let response;
    let text;
    try {
      response = await this.fetch(`${this.base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: abort.signal,
      });
      text = await response.text();
    } catch (error) {
      if (abort.signal.aborted) throw new TowerError("timeout", `the tower did not answer ${method} ${path} in time`);
      throw new TowerError("unreachable", `cannot reach the tower at ${this.base} (${error?.message ?? error})`);
    } finally {
      clearTimeout(timer);
    }
    const document = parseJson(text);
    if (!response.ok) throw httpError(response.status, document);
    if (document === undefined) throw new TowerError("garbage", `the tower's answer to ${method} ${path} is not JSON`);
    return document;
  }

  #wsUrl(path) {
    return `${this.base.replace(/^http/, "ws")}${path}`;
  }

  #protocols() {
    return this.token ? [`bearer.${this.token}`] : [];
  }
}

function normaliseUrl(url) {
  let parsed;
  try {
    parsed = new URL(String(url ?? "").trim());
  } catch {
    throw new TowerError("unreachable", `"${url}" is not a URL (for example http://dicetower.local:8080)`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new TowerError("unreachable", `the tower's URL must start with http:// or https://, not ${parsed.protocol}`);
  }
  return parsed.href.replace(/\/+$/, "");
}

function parseJson(text) {
  if (typeof text !== "string" || text.length > MAX_BODY_CHARS) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function parseEvent(data) {
  const event = parseJson(typeof data === "string" ? data : undefined);
  return event && typeof event === "object" && typeof event.type === "string" ? event : null;
}

function httpError(status, document) {
  const said = typeof document?.error?.message === "string" ? document.error.message.slice(0, 300) : "";
  if (status === 401) return new TowerError("auth", "the tower refused the token: set the tower's token in the module settings");
  if (status === 429 || status === 503) return new TowerError("busy", `the tower is busy${said ? `: ${said}` : ""}`);
  if (status === 422 || status === 400) return new TowerError("refused", `the tower refused the roll${said ? `: ${said}` : ""}`);
  if (document === undefined) return new TowerError("garbage", `the tower answered ${status} with something that is not JSON`);
  return new TowerError("failed", `the tower answered ${status}${said ? `: ${said}` : ""}`);
}

function failureText(roll) {
  const error = roll?.error;
  const message = typeof error === "string" ? error : typeof error?.message === "string" ? error.message : "";
  return `the tower could not finish the roll${message ? `: ${message.slice(0, 300)}` : ""}`;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
