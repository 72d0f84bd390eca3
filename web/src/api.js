/* api.js - the one way the UI calls the manager.
 *
 * The browser authenticates with the session cookie that POST /server/login
 * set (same origin, HttpOnly: this module never sees it).  Every request but
 * GET/HEAD carries the CSRF token of that login in X-Tessera-CSRF.  An answer
 * that is not 2xx becomes an ApiError whose message is the problem+json
 * `title` (the manager's sentence for people), or else a sentence made from
 * the status.  A 401 on an API route (not a login, nor the password change,
 * where it means the current password is wrong) means the session ended:
 * listeners registered with onSessionEnded() hear of it once.  A 403 of
 * type password-change-required means the user must change the password
 * before anything else (an administrator asked for it): listeners
 * registered with onPasswordChangeRequired() hear of each.
 * openEventStream() opens a server-sent events stream with the cookie.
 * errorFrom() makes the same ApiError of an answer fetched otherwise (the
 * uploads' XMLHttpRequests: tus-upload.js). */

let csrfToken = null;
const sessionEndedListeners = new Set();
const passwordChangeListeners = new Set();

/* The manager's password change (the one route open to a user who must
 * change the password): its 401 is a wrong current password. */
export const PASSWORD_ROUTE = '/auth/update-password';

export class ApiError extends Error {
  /* status: the HTTP status (0: the manager could not be reached);
   * type: the problem type's last part ("auth-failed"), if any;
   * retryAfter: seconds from a Retry-After header, or null. */
  constructor(message, { status = 0, type = null, retryAfter = null } = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = type;
    this.retryAfter = retryAfter;
  }
}

export function setCsrfToken(token) {
  csrfToken = token || null;
}

/* fn() is called when an API call answers 401 after a login. */
export function onSessionEnded(fn) {
  sessionEndedListeners.add(fn);
  return () => sessionEndedListeners.delete(fn);
}

/* fn() is called when an API call answers 403 password-change-required. */
export function onPasswordChangeRequired(fn) {
  passwordChangeListeners.add(fn);
  return () => passwordChangeListeners.delete(fn);
}

const STATUS_SENTENCES = {
  400: 'The request was not valid.',
  401: 'You are not logged in.',
  403: 'You are not allowed to do that.',
  404: 'Not found.',
  409: 'That conflicts with the current state; try again.',
  412: 'A limit or quota does not allow that.',
  429: 'Too many requests; wait a moment.',
  500: 'The manager failed (a bug): see its log.',
  503: 'The manager is busy; try again.',
};

/* The ApiError of a Response that is not 2xx. */
export async function errorFrom(response) {
  let title = null, type = null;
  const contentType = response.headers.get('Content-Type') || '';
  if (contentType.includes('json')) {
    const body = await response.json().catch(() => null);
    title = body?.title || body?.msg || body?.error || null;
    type = typeof body?.type === 'string' ? body.type.split('/').pop() : null;
  }
  const retry = Number.parseInt(response.headers.get('Retry-After') ?? '', 10);
  const message = title || STATUS_SENTENCES[response.status] || `The manager answered ${response.status}.`;
  return new ApiError(message, { status: response.status, type, retryAfter: Number.isFinite(retry) ? retry : null });
}

/* api(method, path, body?) -> the answer's JSON (null for 204 or no body).
 * Throws ApiError.  Paths are the manager's, e.g. '/sessions?status=RUNNING'. */
export async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['X-Tessera-CSRF'] = csrfToken;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError('The manager cannot be reached: check the network, or whether it runs.');
  }
  if (!response.ok) {
    const error = await errorFrom(response);
    if (response.status === 401 && csrfToken && !path.startsWith('/server/') && path !== PASSWORD_ROUTE) {
      setCsrfToken(null);
      for (const fn of sessionEndedListeners) fn(error);
    }
    if (response.status === 403 && error.type === 'password-change-required')
      for (const fn of passwordChangeListeners) fn(error);
    throw error;
  }
  if (response.status === 204) return null;
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/* A query string from an object, leaving out null/undefined values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/* openEventStream(path, eventNames, onEvent(name, data)) -> EventSource.
 * Each named event's data is parsed as JSON; the browser reconnects by
 * itself after a dropped connection (after about 3 s).  The
 * caller closes it with .close(). */
export function openEventStream(path, eventNames, onEvent) {
  const source = new EventSource(path, { withCredentials: true });
  for (const name of eventNames) {
    source.addEventListener(name, (e) => {
      let data = null;
      try {
        data = JSON.parse(e.data);
      } catch {
        return;
      }
      onEvent(name, data);
    });
  }
  return source;
}
