/* table-head.js - what the head of every data table repeats: a caption
 * for screen readers and the header row, whose last column (the row's
 * buttons) is named only for them.  Inside <table>: ${tableHead(...)}. */
import { html } from 'lit';

export function tableHead(caption, columns, { actions = true } = {}) {
  return html`<caption class="visually-hidden">${caption}</caption>
    <thead>
      <tr>
        ${columns.map((c) => html`<th scope="col">${c}</th>`)}
        ${actions ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}
      </tr>
    </thead>`;
}
