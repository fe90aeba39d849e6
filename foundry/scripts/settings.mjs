/**
 * The module's settings: where the tower is and how to reach it (world settings, set by the GM), and whether the GM's
 * client posts rolls made at the tower to chat.
 */

export const MODULE_ID = "dicetower";

/** key → Foundry setting definition (name and hint are localisation keys of lang/en.json). */
export const SETTINGS = Object.freeze({
  url: { scope: "world", type: String, default: "http://dicetower.local:8080" },
  token: { scope: "world", type: String, default: "" },
  timeoutSeconds: { scope: "world", type: Number, default: 60, range: { min: 5, max: 600, step: 5 } },
  postTowerRolls: { scope: "world", type: Boolean, default: true },
});

/** Register every setting with Foundry; `onChange` runs when the GM changes one (the client is made anew). */
export function registerSettings(settings, onChange) {
  for (const [key, definition] of Object.entries(SETTINGS)) {
    settings.register(MODULE_ID, key, {
      name: `DICETOWER.settings.${key}.name`,
      hint: `DICETOWER.settings.${key}.hint`,
      config: true,
      ...definition,
      onChange: () => onChange(key),
    });
  }
}

/** The current value of one setting. */
export function setting(settings, key) {
  return settings.get(MODULE_ID, key);
}
