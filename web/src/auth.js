/* auth.js - who is logged in: login, finding the login again after a page
 * reload (GET /server/session), logout and password changes.  `auth.user`
 * is null or {email, userId, role, domain, accessKey, needPasswordChange};
 * a 'change' event follows every change of it, including a session that
 * ended on the manager (an API call answered 401) and a password an
 * administrator asked the user to change (the login's
 * need_password_change, or any call answered 403
 * password-change-required): until it is changed, the manager refuses
 * everything but POST /auth/update-password and the UI shows only that
 * form (tessera-app.js). */
import { api, onPasswordChangeRequired, onSessionEnded, PASSWORD_ROUTE, setCsrfToken } from './api.js';

class Auth extends EventTarget {
  user = null;

  constructor() {
    super();
    onSessionEnded(() => this.#set(null));
    onPasswordChangeRequired(() => this.#needPasswordChange(true));
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

  /* Throws ApiError: 401 the current password is wrong (asked of the
   * manager again: if the login itself ended, the user is logged out
   * first), 400 a new password the manager refuses, 429 too many wrong
   * tries.  Once changed, a password the user had to change no longer
   * holds the UI back. */
  async changePassword(oldPassword, newPassword, newPassword2) {
    try {
      await api('POST', PASSWORD_ROUTE, {
        old_password: oldPassword,
        new_password: newPassword,
        new_password2: newPassword2,
      });
    } catch (e) {
      if (e.status === 401) await this.#stillLoggedIn();
      throw e;
    }
    this.#needPasswordChange(false);
  }

  /* After a 401 that may mean either: is the login still there?  If it
   * ended, the user is logged out. */
  async #stillLoggedIn() {
    try {
      await api('GET', '/server/session');
    } catch (e) {
      if (e.status === 401) this.#set(null);
    }
  }

  #needPasswordChange(need) {
    if (!this.user || this.user.needPasswordChange === need) return;
    this.user = { ...this.user, needPasswordChange: need };
    this.dispatchEvent(new Event('change'));
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
          needPasswordChange: Boolean(answer.need_password_change),
        }
      : null;
    this.dispatchEvent(new Event('change'));
  }
}

export const auth = new Auth();
