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
 * every change of sessions, loaded, error, live.  Rows of another owner
 * are deleted with owner_access_key. */
import { api, openEventStream, query } from './api.js';
import { SESSION_EVENTS, isTerminal } from './session-status.js';

const LIST_LIMIT = 100;
const COALESCE_MS = 100;

class SessionStore extends EventTarget {
  everyone; // no owner filter: every session the caller may see
  sessions = []; // newest first: the manager's session objects, plus fetchedAt (performance.now())
  loaded = false;
  error = null; // an ApiError of the last list, or null
  live = false; // the event stream is open
  #owner = null;
  #source = null;
  #timer = null;
  #listing = null;
  #listAgain = false;

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
    this.#source = this.#owner = this.#timer = null;
    this.sessions = [];
    this.loaded = this.live = false;
    this.error = null;
    this.#changed();
  }

  get active() {
    return this.sessions.filter((s) => !isTerminal(s.status));
  }

  get finished() {
    return this.sessions.filter((s) => isTerminal(s.status));
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
        const answer = await api('GET', `/sessions${query({ owner: filter, limit: LIST_LIMIT })}`);
        if (owner !== this.#owner) return;
        const now = performance.now();
        this.sessions = (answer?.items ?? []).map((s) => ({ ...s, fetchedAt: now }));
        this.error = null;
      } catch (e) {
        this.error = e;
      }
      this.loaded = true;
      this.#changed();
    })();
    await this.#listing;
    this.#listing = null;
    if (this.#listAgain) {
      this.#listAgain = false;
      await this.refresh();
    }
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
    const row = this.sessions.find((s) => s.sessionId === data.sessionId);
    if (row) {
      row.status = data.status;
      if (data.reason) row.statusInfo = data.reason;
      this.#changed();
    }
    this.#refreshSoon();
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

/* '?owner_access_key=KEY' for a session of another owner, else ''. */
function ownerQuery(owner) {
  return query({ owner_access_key: owner || null });
}

export const sessionStore = new SessionStore();
export const everyoneStore = new SessionStore({ everyone: true });
