/* auth.js - who is logged in: login, finding the login again after a page
 * reload (GET /server/session), logout and password changes.  `auth.user`
 * is null or {email, userId, role, domain, accessKey}; a 'change' event
 * follows every change of it, including a session that ended on the
 * manager (an API call answered 401). */
import { api, onSessionEnded, setCsrfToken } from './api.js';

class Auth extends EventTarget {
  user = null;

  constructor() {
    super();
    onSessionEnded(() => this.#set(null));
  }

  /* The session a page reload finds, if any.  Throws ApiError unless the
   * answer is a session or a 401. */
  async restore() {
    try {
      this.#set(await api('GET', '/server/session'));
    } catch (e) {
      if (e.status !== 401) throw e;
      this.#set(null);
    }
  }

  /* Throws ApiError: 401 wrong credentials, 429 blocked (retryAfter). */
  async login(email, password) {
    this.#set(await api('POST', '/server/login', { email, password }));
  }

  async logout() {
    try {
      await api('POST', '/server/logout');
    } finally {
      this.#set(null);
    }
  }

  async changePassword(oldPassword, newPassword, newPassword2) {
    await api('POST', '/auth/update-password', {
      old_password: oldPassword,
      new_password: newPassword,
      new_password2: newPassword2,
    });
  }

  #set(answer) {
    setCsrfToken(answer?.csrf_token);
    this.user = answer
      ? {
          email: answer.email,
          userId: answer.user_id,
          role: answer.role,
          domain: answer.domain,
          accessKey: answer.access_key,
        }
      : null;
    this.dispatchEvent(new Event('change'));
  }
}

export const auth = new Auth();
