/* notices.js - the notices every page shows the same way: an error
 * (role=alert, so that it is announced; kept in the page but hidden while
 * there is none, as screen readers announce changes to a live region
 * best), what an action did (role=status, kept the same way) and a
 * loading line (role=status). */
import { html } from 'lit';

export function errorNotice(message) {
  return html`<p class="error" role="alert" ?hidden=${!message}>${message ?? ''}</p>`;
}

export function doneNotice(message) {
  return html`<p class="done" role="status" ?hidden=${!message}>${message ?? ''}</p>`;
}

export function loadingNotice(what) {
  return html`<p class="muted" role="status">Loading ${what}…</p>`;
}

/* While something loads or after it failed: the notice; once it is
 * there: null.  error: a message or an Error; ready: truthy once loaded. */
export function loadNotice(error, ready, what) {
  if (error) return errorNotice(error.message ?? error);
  return ready ? null : loadingNotice(what);
}
