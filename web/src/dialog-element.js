/* dialog-element.js - the base class of the modal dialogs (a question, a
 * form, a list, a task's progress): an element that renders one <dialog>.
 * openDialog(focus) shows it modal, moves the focus to the element the
 * selector `focus` names in it, and resolves when it closes (a button
 * calling closeDialog(), or Escape) with `this.result` (null unless the
 * dialog set it).  dialogClosed() runs first, for what a dialog lets go
 * of when it closes.  The browser gives the focus back to where it was. */
import { TesseraElement } from './element.js';

export class DialogElement extends TesseraElement {
  result = null;
  #resolve = null;

  constructor() {
    super();
    /* 'close' does not bubble: listen while it goes down to the dialog */
    this.addEventListener('close', (e) => e.target.localName === 'dialog' && this.#closed(), true);
  }

  async openDialog(focus) {
    this.result = null;
    const closed = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    await this.updateComplete;
    this.querySelector('dialog').showModal();
    this.querySelector(`dialog ${focus}`)?.focus();
    return closed;
  }

  closeDialog() {
    const dialog = this.querySelector('dialog');
    if (dialog?.open) dialog.close();
  }

  dialogClosed() {}

  #closed() {
    this.dialogClosed();
    const resolve = this.#resolve;
    this.#resolve = null;
    resolve?.(this.result);
  }
}
