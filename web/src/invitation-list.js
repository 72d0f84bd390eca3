/* invitation-list.js - <invitation-list>: the invitations to the user's
 * folders that wait for an answer (GET /folders/invitations/list), each
 * to accept or decline.  Says nothing when there are none.  An accepted
 * one fires 'invitation-accepted' (detail: the answer), so that the
 * folder list is read again. */
import { html } from 'lit';
import { TesseraElement } from './element.js';
import { acceptInvitation, listInvitations, permissionLabel, rejectInvitation } from './folders.js';
import { doneNotice, errorNotice } from './notices.js';

class InvitationList extends TesseraElement {
  static properties = {
    invitations: { state: true },
    busy: { state: true },
    error: { state: true },
    done: { state: true },
  };

  constructor() {
    super();
    this.invitations = [];
    this.busy = false;
    this.error = this.done = null;
  }

  connectedCallback() {
    super.connectedCallback();
    this.#load();
  }

  async #load() {
    try {
      this.invitations = await listInvitations();
    } catch (e) {
      this.error = e.message;
    }
  }

  async #answer(invitation, accept) {
    this.busy = true;
    this.error = this.done = null;
    try {
      if (accept) {
        const answer = await acceptInvitation(invitation.id);
        this.done = `You now use ${invitation.vfolder_name}.`;
        this.dispatchEvent(new CustomEvent('invitation-accepted', { detail: answer, bubbles: true }));
      } else {
        await rejectInvitation(invitation.id);
        this.done = `Declined ${invitation.vfolder_name}.`;
      }
      await this.#load();
    } catch (e) {
      this.error = e.message;
    } finally {
      this.busy = false;
    }
  }

  render() {
    if (!this.invitations.length && !this.error && !this.done) return '';
    return html`<section class="card invitations" aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      ${errorNotice(this.error)} ${doneNotice(this.done)}
      <ul class="plain-list">
        ${this.invitations.map(
          (inv) => html`<li data-invitation=${inv.vfolder_name}>
            <span><strong>${inv.inviter}</strong> invites you to <strong>${inv.vfolder_name}</strong>
              (${permissionLabel(inv.perm)})</span>
            <span class="row-actions">
              <button type="button" class="primary small" ?disabled=${this.busy}
                aria-label="Accept the invitation to ${inv.vfolder_name}" @click=${() => this.#answer(inv, true)}>Accept</button>
              <button type="button" class="small" ?disabled=${this.busy}
                aria-label="Decline the invitation to ${inv.vfolder_name}" @click=${() => this.#answer(inv, false)}>Decline</button>
            </span>
          </li>`,
        )}
      </ul>
    </section>`;
  }
}

customElements.define('invitation-list', InvitationList);
