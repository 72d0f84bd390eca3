/* usage-bars.js - <usage-bars>: one scope's resources (a keypair, a
 * project, a resource group) as labelled bars, used against limit per
 * slot.  .used and .limit are slot maps (slots.js); an unlimited slot shows
 * what is used and "no limit".  GPU slots show only where there is a limit
 * or some use, so that a cluster without GPUs shows none.  usageBar() and
 * shownSlots() draw the same bars elsewhere (an agent's slots and GPUs in
 * the admin pages). */
import { html } from 'lit';
import { TesseraElement } from './element.js';
import { SLOT_LABELS, formatSlot } from './format.js';
import { SLOT_NAMES } from './slots.js';

/* The slots worth a bar: CPU and memory always, GPUs where there is a
 * limit or some use. */
export function shownSlots(used, limit) {
  return SLOT_NAMES.filter((name) => {
    if (name === 'cpu' || name === 'mem') return true;
    const u = used[name] ?? 0, l = limit[name] ?? Infinity;
    return u > 0 || (Number.isFinite(l) && l > 0);
  });
}

/* One bar: slot `name`, used against limit (Infinity: no limit), labelled
 * `label` (default: the slot's name), as a meter. */
export function usageBar(name, used, limit, label = SLOT_LABELS[name]) {
  const unlimited = !Number.isFinite(limit);
  const fraction = unlimited ? 0 : limit > 0 ? Math.min(1, used / limit) : 1;
  const text = unlimited
    ? `${formatSlot(name, used)} used, no limit`
    : `${formatSlot(name, used)} of ${formatSlot(name, limit)}`;
  const level = fraction >= 0.9 ? 'full' : fraction >= 0.7 ? 'high' : 'ok';
  return html`<div class="usage-row">
    <span class="usage-label">${label}</span>
    <span class="usage-text">${text}</span>
    <div
      class="bar ${unlimited ? 'unlimited' : level}"
      role="meter"
      aria-label="${label} used"
      aria-valuemin="0"
      aria-valuemax=${unlimited ? used || 1 : limit}
      aria-valuenow=${used}
      aria-valuetext=${text}
    >
      <div class="bar-fill" style="width: ${(fraction * 100).toFixed(1)}%"></div>
    </div>
  </div>`;
}

class UsageBars extends TesseraElement {
  static properties = {
    heading: {},
    note: {},
    used: { attribute: false },
    limit: { attribute: false },
  };

  constructor() {
    super();
    this.heading = '';
    this.note = '';
    this.used = {};
    this.limit = {};
  }

  render() {
    return html`<section class="card usage" aria-label=${this.heading}>
      <h3>${this.heading}</h3>
      ${this.note ? html`<p class="muted small">${this.note}</p>` : ''} ${shownSlots(this.used, this.limit).map((n) =>
        usageBar(n, this.used[n] ?? 0, this.limit[n] ?? Infinity),
      )}
    </section>`;
  }
}

customElements.define('usage-bars', UsageBars);
