/* backoff.js - how long to wait before trying again after a failure, the
 * same for every retry of the UI (the terminal's reconnects, an upload's
 * resumes): 1 s, 2 s, 4 s ... up to 30 s, each with up to a fifth more at
 * random, so that many browsers cut off together do not come back in step. */
export const RETRY_FIRST_MS = 1000;
export const RETRY_MAX_MS = 30_000;

/* Milliseconds before try number `attempt` (0: the first retry). */
export function retryDelay(attempt, random = Math.random) {
  const base = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.max(0, attempt));
  return Math.round(base * (1 + random() / 5));
}
