/**
 * The tower as a Foundry dice fulfillment method: a RollResolver that throws a roll's tower dice as one throw.
 *
 * Foundry (v12+) asks a roll's interactive terms of a RollResolver: `awaitFulfillment()` is the first pass over every
 * fulfillable term, `registerResult(method, denomination, result)` fills one die, and `resolveResult(term, method,
 * options)` asks for one more die when a modifier rerolls or explodes. This resolver keeps Foundry's own form (so a
 * player can always type a die by hand), throws every die of the terms set to the tower at once, and registers the
 * faces the tower logged in tray-slot order; a reroll or an explosion is another throw of one die. Any failure is
 * said in Foundry and leaves the form open for manual entry: the module never rolls digitally in the tower's place.
 */

import { foundryResults, throwNotation } from "./dice.mjs";

export const METHOD = "dicetower";

/**
 * A RollResolver subclass bound to the module's live settings.
 * @param {Function} RollResolver Foundry's `foundry.applications.dice.RollResolver`
 * @param {object} deps
 * @param {() => import("./tower.mjs").TowerClient} deps.client the client for the tower now configured
 * @param {() => Set<string>} deps.denominations the denominations the tower's tray holds
 * @param {() => string} deps.roller who is rolling, as the tower's log should name them
 * @param {() => number} deps.timeoutMs longest one throw may take
 * @param {(error: Error) => void} deps.notify tells the player a throw failed and that they may type the dice
 */
export function defineTowerResolver(RollResolver, deps) {
  return class TowerResolver extends RollResolver {
    /** The tower rolls that answered this Foundry roll: `{id, hash, notation}` each, in throw order. */
    towerRolls = [];

    /** The first pass's throw, settled once its faces are registered or its failure said (tests await it). */
    towerThrow = Promise.resolve();

    async awaitFulfillment() {
      const waiting = super.awaitFulfillment();
      const terms = [];
      for (const descriptor of this.fulfillable.values()) {
        if (descriptor.method === METHOD && !terms.includes(descriptor.term)) terms.push(descriptor.term);
      }
      if (terms.length) this.towerThrow = this.#firstPass(terms);
      return waiting;
    }

    async resolveResult(term, method, options = {}) {
      if (method === METHOD && (options.reroll || options.explode)) {
        try {
          const [[value]] = await this.#throw([{ denomination: term.denomination, count: 1 }]);
          return value;
        } catch (error) {
          deps.notify(error);
        }
      }
      return super.resolveResult(term, method, options);
    }

    async #firstPass(terms) {
      const asks = terms.map((term) => ({ denomination: term.denomination, count: term.number }));
      try {
        const results = await this.#throw(asks);
        terms.forEach((term, index) => {
          for (const value of results[index]) this.registerResult(METHOD, term.denomination, value);
        });
      } catch (error) {
        deps.notify(error);
      }
    }

    async #throw(asks) {
      const missing = asks.map((ask) => ask.denomination).filter((d) => !deps.denominations().has(d));
      if (missing.length) {
        throw new Error(`the tower's tray holds no ${[...new Set(missing)].join(" or ")}`);
      }
      const notation = throwNotation(asks);
      const roll = await deps.client().throwDice(notation, { roller: deps.roller(), timeoutMs: deps.timeoutMs() });
      const results = foundryResults(asks, roll);
      const record = { id: roll.id, hash: roll.hash ?? null, notation };
      this.towerRolls.push(record);
      const options = this.roll?.options;
      if (options && typeof options === "object") (options.dicetower ??= []).push(record);
      return results;
    }
  };
}
