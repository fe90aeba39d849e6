/** The module's entry point in Foundry: install it with the page's own globals. */

import { install } from "./module.mjs";

globalThis.dicetower = install(globalThis);
