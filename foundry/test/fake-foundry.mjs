/**
 * A small fake of the part of Foundry VTT's client API the module uses, written from Foundry's public API
 * documentation (v12-v14): `CONFIG.Dice.fulfillment`, `Roll` with `Roll.registerResult`, dice terms with the `kh`,
 * `kl`, `r`, `x` and `cs` modifiers, `foundry.applications.dice.RollResolver`, `ChatMessage.create`, `game.settings`,
 * `game.user`, `Hooks` and `ui.notifications`. No Foundry code is in it.
 *
 * What it models of the documented fulfillment flow: a roll's dice terms take their method from the user's dice
 * configuration (`core.diceConfiguration`, denomination → method); when any term's method is interactive, the roll
 * makes a RollResolver (the method's own `resolver` class when the only interactive methods in play are that method
 * and manual), awaits its `awaitFulfillment()`, then rolls each die by asking the resolver's `resolveResult(term,
 * method, {reroll, explode})`. `registerResult(method, denomination, result)` fills the first unfilled die of a term of
 * that method and denomination, or answers a pending `resolveResult`. A die typed by hand is `registerResult("manual",
 * …)`. Modifiers then reroll (once), explode (again on the highest face), keep or count, asking for each extra die.
 */

export function createFoundry({ user = { id: "u1", name: "Ann", isGM: true } } = {}) {
  const hooks = new Map();
  const Hooks = {
    once(name, fn) {
      Hooks.on(name, fn, true);
    },
    on(name, fn, once = false) {
      if (!hooks.has(name)) hooks.set(name, []);
      hooks.get(name).push({ fn, once });
    },
    callAll(name, ...args) {
      const list = hooks.get(name) ?? [];
      hooks.set(
        name,
        list.filter((h) => !h.once),
      );
      for (const h of list) h.fn(...args);
    },
  };

  const settingsStore = new Map();
  const settingsDefs = new Map();
  const settings = {
    register(namespace, key, def) {
      settingsDefs.set(`${namespace}.${key}`, def);
      if (!settingsStore.has(`${namespace}.${key}`)) settingsStore.set(`${namespace}.${key}`, def.default);
    },
    get(namespace, key) {
      const id = `${namespace}.${key}`;
      if (!settingsStore.has(id)) throw new Error(`setting ${id} is not registered`);
      return settingsStore.get(id);
    },
    async set(namespace, key, value) {
      const id = `${namespace}.${key}`;
      settingsStore.set(id, value);
      settingsDefs.get(id)?.onChange?.(value);
      return value;
    },
    definitions: settingsDefs,
  };
  settingsStore.set("core.diceConfiguration", {});

  const notifications = { messages: [] };
  for (const level of ["info", "warn", "error"]) {
    notifications[level] = (message) => notifications.messages.push({ level, message });
  }

  const CONFIG = {
    Dice: {
      fulfillment: {
        defaultMethod: "",
        dice: { d4: {}, d6: {}, d8: {}, d10: {}, d12: {}, d20: {}, d100: {} },
        methods: {
          mersenne: { label: "Digital", interactive: false },
          manual: { label: "Manual input", interactive: true },
        },
      },
      randomUniform: Math.random,
    },
  };

  const created = [];
  const ChatMessage = {
    created,
    async create(data) {
      created.push(data);
      return data;
    },
  };

  class RollResolver {
    /** active resolvers, newest last, as `Roll.registerResult` finds them */
    static active = [];

    constructor(roll, options = {}) {
      this.roll = roll;
      this.options = options;
      this.fulfillable = new Map();
      this.rendered = false;
      this.closed = false;
      this.filled = new Map(); // term → values registered for its initial dice
      this.pending = []; // {term, method, resolve}
      roll.dice.forEach((term, index) => {
        if (!isInteractive(term.method)) return;
        const id = `${term.denomination}-${index}`;
        this.fulfillable.set(id, { id, term, method: term.method, isNew: false });
        this.filled.set(term, []);
      });
      this.#done = null;
    }

    #done;
    #finish = () => {};

    async awaitFulfillment() {
      if (this.fulfillable.size === 0) return;
      RollResolver.active.push(this);
      this.rendered = true;
      this.#done = new Promise((resolve) => {
        this.#finish = resolve;
      });
      this.#check();
      return this.#done;
    }

    registerResult(method, denomination, result) {
      const pending = this.pending.find(
        (p) => p.term.denomination === denomination && (p.method === method || method === "manual"),
      );
      if (pending) {
        if (!validFace(pending.term, result)) return false;
        this.pending.splice(this.pending.indexOf(pending), 1);
        pending.resolve(result);
        return true;
      }
      for (const { term, method: termMethod } of this.fulfillable.values()) {
        if (term.denomination !== denomination) continue;
        if (termMethod !== method && method !== "manual") continue;
        const values = this.filled.get(term);
        if (values.length >= term.number) continue;
        if (!validFace(term, result)) return false;
        values.push(result);
        this.#check();
        return true;
      }
      return false;
    }

    async resolveResult(term, method, { reroll = false, explode = false } = {}) {
      const values = this.filled.get(term);
      if (values && !reroll && !explode && term._consumed < values.length) return values[term._consumed++];
      // Another die: a new field in the form, answered by registerResult (a device, or a person typing).
      const id = `${term.denomination}-extra-${this.fulfillable.size}`;
      this.fulfillable.set(id, { id, term, method, isNew: true });
      return new Promise((resolve) => this.pending.push({ term, method, resolve }));
    }

    close() {
      this.closed = true;
      RollResolver.active = RollResolver.active.filter((r) => r !== this);
    }

    #check() {
      const complete = [...this.filled.entries()].every(([term, values]) => values.length >= term.number);
      if (complete) this.#finish();
    }
  }

  function isInteractive(method) {
    return Boolean(method && CONFIG.Dice.fulfillment.methods[method]?.interactive);
  }

  function validFace(term, result) {
    return Number.isInteger(result) && result >= 1 && result <= term.faces;
  }

  class Die {
    constructor({ number, faces, modifiers = [] }) {
      this.number = number;
      this.faces = faces;
      this.modifiers = modifiers;
      this.results = [];
      this.method = null;
      this._consumed = 0;
    }

    get denomination() {
      return `d${this.faces}`;
    }

    get total() {
      if (this.modifiers.some((m) => m.startsWith("cs"))) {
        return this.results.filter((r) => r.active && r.success).length;
      }
      return this.results.filter((r) => r.active).reduce((sum, r) => sum + r.result, 0);
    }

    async roll(resolver, options = {}) {
      let result;
      if (isInteractive(this.method)) result = await resolver.resolveResult(this, this.method, options);
      else result = 1 + Math.floor(CONFIG.Dice.randomUniform() * this.faces);
      const entry = { result, active: true };
      this.results.push(entry);
      return entry;
    }

    async evaluate(resolver) {
      for (let i = 0; i < this.number; i++) await this.roll(resolver);
      for (const modifier of this.modifiers) await this.#apply(modifier, resolver);
    }

    async #apply(modifier, resolver) {
      const match = /^(kh|kl|rr|r|xo|x|cs)(>=|<=|>|<|=)?(\d+)?$/.exec(modifier);
      if (!match) throw new Error(`unknown modifier ${modifier}`);
      const [, op, cmp, n] = match;
      const test = comparison(cmp, n, op === "x" || op === "xo" ? this.faces : op.startsWith("r") ? 1 : null);
      if (op === "kh" || op === "kl") {
        const keep = Number(n ?? 1);
        const order = this.results
          .filter((r) => r.active)
          .sort((a, b) => (op === "kh" ? b.result - a.result : a.result - b.result));
        order.slice(keep).forEach((r) => {
          r.active = false;
          r.discarded = true;
        });
      } else if (op === "r" || op === "rr") {
        for (const r of [...this.results]) {
          if (!r.active || !test(r.result)) continue;
          r.rerolled = true;
          r.active = false;
          let next = await this.roll(resolver, { reroll: true });
          while (op === "rr" && test(next.result)) {
            next.rerolled = true;
            next.active = false;
            next = await this.roll(resolver, { reroll: true });
          }
        }
      } else if (op === "x" || op === "xo") {
        let checked = 0;
        let budget = 100;
        while (checked < this.results.length && budget-- > 0) {
          const r = this.results[checked++];
          if (r.active && test(r.result) && !r.exploded) {
            r.exploded = true;
            const next = await this.roll(resolver, { explode: true });
            if (op === "xo") next.exploded = true;
          }
        }
      } else if (op === "cs") {
        for (const r of this.results) r.success = test(r.result);
      }
    }
  }

  function comparison(cmp, n, fallback) {
    const target = n === undefined ? fallback : Number(n);
    switch (cmp) {
      case ">=":
        return (v) => v >= target;
      case "<=":
        return (v) => v <= target;
      case ">":
        return (v) => v > target;
      case "<":
        return (v) => v < target;
      default:
        return (v) => v === target;
    }
  }

  class Roll {
    static registerResult(method, denomination, result) {
      for (const resolver of [...RollResolver.active].reverse()) {
        if (resolver.registerResult(method, denomination, result)) return true;
      }
      return undefined;
    }

    constructor(formula, data = {}, options = {}) {
      this.formula = formula;
      this.data = data;
      this.options = options;
      this.terms = parse(formula);
      this._evaluated = false;
      this.resolver = null;
    }

    get dice() {
      return this.terms.filter((t) => t instanceof Die);
    }

    get total() {
      let total = 0;
      let sign = 1;
      for (const term of this.terms) {
        if (term === "+") sign = 1;
        else if (term === "-") sign = -1;
        else total += sign * (typeof term === "number" ? term : term.total);
      }
      return total;
    }

    async evaluate() {
      const configured = settings.get("core", "diceConfiguration") ?? {};
      for (const term of this.dice) {
        term.method = configured[term.denomination] || CONFIG.Dice.fulfillment.defaultMethod || null;
      }
      const interactive = new Set(this.dice.map((t) => t.method).filter(isInteractive));
      let Resolver = RollResolver;
      const custom = [...interactive].filter((m) => m !== "manual");
      if (custom.length === 1 && CONFIG.Dice.fulfillment.methods[custom[0]].resolver) {
        Resolver = CONFIG.Dice.fulfillment.methods[custom[0]].resolver;
      }
      this.resolver = new Resolver(this);
      await this.resolver.awaitFulfillment();
      for (const term of this.dice) await term.evaluate(this.resolver);
      this.resolver.close();
      this._evaluated = true;
      return this;
    }
  }

  function parse(formula) {
    const terms = [];
    const tokens = formula.replace(/\s+/g, "").split(/([+-])/);
    for (const token of tokens) {
      if (token === "") continue;
      if (token === "+" || token === "-") {
        terms.push(token);
        continue;
      }
      const dice = /^(\d*)d(\d+)((?:(?:kh|kl|rr|r|xo|x|cs)(?:>=|<=|>|<|=)?\d*)*)$/.exec(token);
      if (dice) {
        const modifiers = dice[3].match(/(kh|kl|rr|r|xo|x|cs)(>=|<=|>|<|=)?\d*/g) ?? [];
        terms.push(new Die({ number: Number(dice[1] || 1), faces: Number(dice[2]), modifiers }));
      } else if (/^\d+$/.test(token)) {
        terms.push(Number(token));
      } else {
        throw new Error(`the fake cannot parse ${token}`);
      }
    }
    return terms;
  }

  const game = {
    user,
    settings,
    i18n: { localize: (key) => key },
  };

  return {
    Hooks,
    game,
    CONFIG,
    ChatMessage,
    Roll,
    ui: { notifications },
    foundry: { applications: { dice: { RollResolver } }, dice: { Roll, terms: { Die } } },
  };
}
