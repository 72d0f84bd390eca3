/* session-store.js - sessions kept current by the manager's session
 * events rather than by polling.
 *
 * sessionStore holds the logged-in keypair's own sessions: start(accessKey)
 * lists GET /sessions?owner=<key> and opens GET /events/session for the
 * same owner.  everyoneStore (admins, the sessions page's "Everyone") holds
 * every session the caller may see: the list and the events without an
 * owner, which the manager scopes by role (a domain admin's domain, all
 * for a superadmin).  An event sets the row's status at once and asks for
 * the list again (a burst of events makes one request), so a row follows
 * PENDING -> ... -> RUNNING -> TERMINATED live.  Why a PENDING session
 * waits comes with session_waiting (the scheduler's message, as statusData
 * holds it; asked for with waiting=1).  After the stream reconnects the
 * list is read again (events may have been missed).  'change' follows
 * every change of sessions, loaded, error, live, pageSize.  Rows of
 * another owner are deleted with owner_access_key.  The one thing no
 * event announces is a running session's usage (lastStat, which agents
 * report every few seconds): while a listed session runs, the list is
 * read again every USAGE_REFRESH_MS (not while the page is hidden).
 *
 * The list is two pages as the manager pages them (?status=&limit=
 * &offset=, newest first, with the total): the active sessions and the
 * finished ones, each from its own offset (turn(view, pages)), both of
 * pageSize rows (PAGE_SIZES; setPageSize() sets it for both stores and
 * keeps it in localStorage).  A page left empty (its last rows ended or
 * were deleted) moves back to the last page that has rows. */
import { api, openEventStream, query } from './api.js';
import { ACTIVE_STATUSES, SESSION_EVENTS, TERMINAL_STATUSES, isTerminal } from './session-status.js';

export const PAGE_SIZES = [10, 25, 50, 100];
const DEFAULT_PAGE_SIZE = 50;
const PAGE_SIZE_KEY = 'tessera.sessions.pageSize';
const COALESCE_MS = 100;
const USAGE_REFRESH_MS = 5000; /* the agents' heartbeat interval */

/* The two lists: which statuses each holds. */
const VIEWS = { active: ACTIVE_STATUSES, finished: TERMINAL_STATUSES };

const emptyPage = () => ({ items: [], total: 0, offset: 0 });

function savedPageSize() {
  try {
    const n = Number(localStorage.getItem(PAGE_SIZE_KEY));
    return PAGE_SIZES.includes(n) ? n : DEFAULT_PAGE_SIZE;
  } catch {
    return DEFAULT_PAGE_SIZE;
  }
}

class SessionStore extends EventTarget {
  everyone; // no owner filter: every session the caller may see
  pageSize = savedPageSize();
  /* {items, total, offset} of each view; items newest first: the
   * manager's session objects, plus fetchedAt (performance.now()) */
  pages = { active: emptyPage(), finished: emptyPage() };
  loaded = false;
  error = null; // an ApiError of the last list, or null
  live = false; // the event stream is open
  #owner = null;
  #source = null;
  #timer = null;
  #usageTimer = null;
  #listing = null;
  #listAgain = false;
  #offsets = { active: 0, finished: 0 };

  constructor({ everyone = false } = {}) {
    super();
    this.everyone = everyone;
  }

  start(accessKey) {
    if (this.#owner === accessKey && this.#source) return;
    this.stop();
    this.#owner = accessKey;
    const owner = this.everyone ? null : accessKey;
    const path = `/events/session${query({ sessionName: '*', ownerAccessKey: owner, waiting: 1 })}`;
    this.#source = openEventStream(path, SESSION_EVENTS, (_name, data) => this.#onEvent(data));
    this.#source.addEventListener('open', () => {
      const reconnected = this.live === false && this.loaded;
      this.#setLive(true);
      if (reconnected) this.refresh();
    });
    this.#source.addEventListener('error', () => this.#setLive(false));
    this.refresh();
  }

  stop() {
    this.#source?.close();
    clearTimeout(this.#timer);
    clearTimeout(this.#usageTimer);
    this.#source = this.#owner = this.#timer = this.#usageTimer = null;
    this.pages = { active: emptyPage(), finished: emptyPage() };
    this.#offsets = { active: 0, finished: 0 };
    this.loaded = this.live = false;
    this.error = null;
    this.#changed();
  }

  /* The active page (less a row an event just saw end), the finished
   * page, and both. */
  get active() {
    return this.pages.active.items.filter((s) => !isTerminal(s.status));
  }

  get finished() {
    return this.pages.finished.items;
  }

  get sessions() {
    return [...this.pages.active.items, ...this.pages.finished.items];
  }

  /* Another page of `view` ('active' or 'finished'): pages forward (or
   * back, negative) from the one shown. */
  turn(view, pages) {
    this.#offsets[view] = Math.max(0, this.pages[view].offset + pages * this.pageSize);
    return this.refresh();
  }

  /* Both lists from their first page (the page that turned them is left). */
  firstPages() {
    if (!this.#offsets.active && !this.#offsets.finished) return;
    this.#offsets = { active: 0, finished: 0 };
    this.refresh();
  }

  /* size rows a page, from the first page. */
  setPageSize(size) {
    if (!PAGE_SIZES.includes(size) || size === this.pageSize) return;
    this.pageSize = size;
    this.#offsets = { active: 0, finished: 0 };
    this.#changed();
    if (this.#owner) this.refresh();
  }

  /* The list again; concurrent calls make one more request at most. */
  async refresh() {
    if (this.#listing) {
      this.#listAgain = true;
      return this.#listing;
    }
    const owner = this.#owner;
    if (!owner) return;
    this.#listing = (async () => {
      try {
        const filter = this.everyone ? null : owner;
        const [active, finished] = await Promise.all(Object.keys(VIEWS).map((view) => this.#page(filter, view)));
        if (owner !== this.#owner) return;
        this.pages = { active, finished };
        this.error = null;
      } catch (e) {
        this.error = e;
      }
      this.loaded = true;
      this.#changed();
      this.#watchUsage();
    })();
    await this.#listing;
    this.#listing = null;
    if (this.#listAgain) {
      this.#listAgain = false;
      await this.refresh();
    }
  }

  /* The page of `view` at its offset; an empty page past the end moves
   * back to the last one. */
  async #page(owner, view) {
    const list = (offset) =>
      api('GET', `/sessions${query({ owner, status: VIEWS[view].join(','), limit: this.pageSize, offset })}`);
    let answer = await list(this.#offsets[view]);
    const total = Number(answer?.total) || 0;
    if (!answer?.items?.length && this.#offsets[view] > 0 && total > 0) {
      this.#offsets[view] = Math.floor((total - 1) / this.pageSize) * this.pageSize;
      answer = await list(this.#offsets[view]);
    }
    const now = performance.now();
    return {
      items: (answer?.items ?? []).map((s) => ({ ...s, fetchedAt: now })),
      total: Number(answer?.total) || 0,
      offset: Number(answer?.offset) || 0,
    };
  }

  /* POST /session with body (enqueueOnly is the caller's choice); the
   * answer {sessionId, sessionName, status, ...}.  Throws ApiError. */
  async create(body) {
    const answer = await api('POST', '/session', body);
    this.#refreshSoon();
    return answer;
  }

  /* DELETE /session/{name}: a PENDING session is cancelled, others end.
   * owner: the owner's access key when it is not the caller's (admins). */
  async destroy(name, owner = null) {
    await api('DELETE', `/session/${encodeURIComponent(name)}${ownerQuery(owner)}`);
    this.#refreshSoon();
  }

  /* Milliseconds since a session was created, counted on from its fetch. */
  ageOf(session) {
    const age = Number(session.age) || 0;
    return isTerminal(session.status) ? age : age + (performance.now() - session.fetchedAt);
  }

  #onEvent(data) {
    const row = this.pages.active.items.find((s) => s.sessionId === data.sessionId);
    if (row) {
      row.status = data.status;
      if (data.reason) row.statusInfo = data.reason;
      this.#changed();
    }
    this.#refreshSoon();
  }

  /* Read the list again in USAGE_REFRESH_MS if a listed session runs. */
  #watchUsage() {
    clearTimeout(this.#usageTimer);
    this.#usageTimer = null;
    if (!this.pages.active.items.some((s) => s.status === 'RUNNING')) return;
    this.#usageTimer = setTimeout(() => {
      if (document.hidden) this.#watchUsage();
      else this.refresh();
    }, USAGE_REFRESH_MS);
  }

  #refreshSoon() {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.refresh(), COALESCE_MS);
  }

  #setLive(live) {
    if (this.live === live) return;
    this.live = live;
    this.#changed();
  }

  #changed() {
    this.dispatchEvent(new Event('change'));
  }
}

/* size rows a page for both stores, from now on (localStorage). */
export function setPageSize(size) {
  try {
    localStorage.setItem(PAGE_SIZE_KEY, String(size));
  } catch {
    /* not remembered: private browsing */
  }
  sessionStore.setPageSize(size);
  everyoneStore.setPageSize(size);
}

/* '?owner_access_key=KEY' for a session of another owner, else ''. */
function ownerQuery(owner) {
  return query({ owner_access_key: owner || null });
}

export const sessionStore = new SessionStore();
export const everyoneStore = new SessionStore({ everyone: true });
