/**
 * The module's wiring into Foundry, given Foundry's globals: settings, the fulfillment method, the status icon and the
 * chat feed of tower rolls. `main.mjs` calls it with the page's globals; the tests call it with a fake of Foundry's
 * documented surface.
 */

import { FOUNDRY_ROLLER_SUFFIX, shouldPost, towerRollMessage } from "./chat.mjs";
import { READABLE_DENOMINATIONS, towerDenominations } from "./dice.mjs";
import { METHOD, defineTowerResolver } from "./resolver.mjs";
import { MODULE_ID, registerSettings, setting } from "./settings.mjs";
import { stateTitle, towerState } from "./status.mjs";
import { TowerClient } from "./tower.mjs";

/** How often the status icon asks the tower how it is. */
export const STATUS_EVERY_MS = 15_000;

/** Rolls the chat feed remembers having posted (older ones are forgotten first). */
const POSTED_MEMORY = 500;

/**
 * Install the module into a Foundry page.
 * @param {object} env Foundry's globals: `Hooks`, `game`, `CONFIG`, `foundry`, `ui`, `ChatMessage`, and `document`
 *   (absent under Node: no icon is drawn); `fetch` and `WebSocket` may be given for tests.
 * @returns {object} the module's live state (its client, denominations, the chat feed), for tests and macros
 */
export function install(env) {
  const live = {
    client: null,
    denominations: new Set(READABLE_DENOMINATIONS),
    state: "unreachable",
    feed: null,
    timer: null,
    posted: new Set(),
    /** the last chat post (a promise), so tests can wait for it */
    lastPost: Promise.resolve(),
  };
  const client = () =>
    (live.client ??= new TowerClient({
      url: setting(env.game.settings, "url"),
      token: setting(env.game.settings, "token"),
      fetch: env.fetch,
      WebSocket: env.WebSocket,
    }));
  const notify = (error) =>
    env.ui.notifications.error(`dicetower: ${error.message}. Enter the dice by hand in the roll's window.`);

  const refresh = async () => {
    let status = null;
    let problem = null;
    try {
      status = await client().status();
      live.denominations = new Set(towerDenominations(status));
    } catch (error) {
      problem = error;
    }
    showState(env, live, towerState(status), stateTitle(towerState(status), status, problem));
    return status;
  };

  const follow = () => {
    live.feed?.();
    live.feed = null;
    if (!env.game.user?.isGM || !setting(env.game.settings, "postTowerRolls")) return;
    live.feed = client().follow((event) => {
      if (event.type === "rolling" || event.type === "queued") showState(env, live, "rolling", "dicetower: rolling");
      if (event.type !== "result" || !shouldPost(event.roll) || live.posted.has(event.roll.id)) return;
      remember(live.posted, event.roll.id);
      live.lastPost = postRoll(env, client(), event.roll).catch((error) => notify(error));
      refresh();
    });
  };

  env.Hooks.once("init", () => {
    registerSettings(env.game.settings, () => {
      live.client = null;
      refresh();
      follow();
    });
    env.CONFIG.Dice.fulfillment.methods[METHOD] = {
      label: env.game.i18n?.localize?.("DICETOWER.method") ?? "dicetower (real dice)",
      icon: '<i class="fa-solid fa-dice-d20"></i>',
      interactive: true,
      resolver: defineTowerResolver(env.foundry.applications.dice.RollResolver, {
        client,
        denominations: () => live.denominations,
        roller: () => `${String(env.game.user?.name ?? "player").slice(0, 30)}${FOUNDRY_ROLLER_SUFFIX}`,
        timeoutMs: () => 1000 * Number(setting(env.game.settings, "timeoutSeconds") || 60),
        notify,
      }),
    };
  });

  env.Hooks.once("ready", () => {
    live.ready = refresh();
    live.timer = setInterval(refresh, STATUS_EVERY_MS);
    follow();
  });

  live.refresh = refresh;
  live.stop = () => {
    clearInterval(live.timer);
    live.feed?.();
  };
  return live;
}

async function postRoll(env, client, roll) {
  const whole = roll.truncated ? await client.roll(roll.id) : roll;
  return env.ChatMessage.create(towerRollMessage(whole, (path) => client.resolve(path)));
}

function remember(set, id) {
  set.add(id);
  if (set.size > POSTED_MEMORY) set.delete(set.values().next().value);
}

function showState(env, live, state, title) {
  live.state = state;
  const document = env.document;
  if (!document?.body) return;
  let icon = document.getElementById(`${MODULE_ID}-status`);
  if (!icon) {
    icon = document.createElement("div");
    icon.id = `${MODULE_ID}-status`;
    icon.setAttribute("role", "status");
    document.body.appendChild(icon);
  }
  icon.className = state;
  icon.textContent = `🎲 ${state}`;
  icon.title = title;
}
