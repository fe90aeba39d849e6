/**
 * The tower's state as one word for the status icon: `online` (idle, ready to throw), `rolling` (a roll is being
 * thrown or waits in its queue) or `unreachable` (no answer, a wrong token, an answer that is not the tower's).
 */

export const STATES = Object.freeze(["online", "rolling", "unreachable"]);

/** The state of a `/api/tower` document (`null` when the tower could not be asked). */
export function towerState(status) {
  if (!status || typeof status !== "object" || !status.roller) return "unreachable";
  if (status.rolling || Number(status.queue_length) > 0) return "rolling";
  return "online";
}

/** The icon's tooltip: the state in words, with the tower's own detail when it gives one. */
export function stateTitle(state, status, error) {
  if (state === "unreachable") return `dicetower: unreachable${error ? ` (${error.message})` : ""}`;
  const dice = typeof status?.roller?.dice === "string" ? `, ${status.roller.dice}` : "";
  const queue = Number(status?.queue_length) > 0 ? `, ${status.queue_length} waiting` : "";
  return `dicetower: ${state}${dice}${queue}`;
}
