/* admin-cells.js - one cell of an admin list: a row's value drawn as its
 * column's kind says (admin-entities.js): text, booleans, switches,
 * lists, slot amounts, sizes, times, labels, storage host permissions,
 * status badges, and an agent's slots and GPUs as usage bars
 * (usage-bars.js). */
import { html } from 'lit';
import { HOST_PERMISSIONS } from './admin-form.js';
import { formatBytes, formatConfig, formatTime } from './format.js';
import { slotMap, slotNumber } from './slots.js';
import { shownSlots, usageBar } from './usage-bars.js';

/* An agent's GPUs, one bar each: what its kernels hold of the device. */
function devices(list) {
  if (!list?.length) return html`<span class="muted">none</span>`;
  return list.map((d) => {
    const slot = d.slot === 'cuda.device' ? 'cuda.device' : 'cuda.shares';
    const label = `GPU ${d.id}${d.model ? ` · ${d.model}` : ''}`;
    return usageBar(slot, slotNumber(d.occupied ?? 0), slotNumber(d.capacity), label);
  });
}

function slotBars(used, limit) {
  const u = slotMap(used), l = slotMap(limit);
  return shownSlots(u, l).map((name) => usageBar(name, u[name], l[name]));
}

function labels(object) {
  const entries = Object.entries(object ?? {});
  if (!entries.length) return html`<span class="muted">none</span>`;
  return html`<details class="labels">
    <summary>${entries.length} ${entries.length === 1 ? 'label' : 'labels'}</summary>
    <dl>${entries.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
  </details>`;
}

/* allowed_vfolder_hosts: the hosts, each with its permissions on opening. */
function hostPerms(object) {
  const entries = Object.entries(object ?? {});
  if (!entries.length) return html`<span class="muted">none</span>`;
  const what = (perms) => (perms.length === HOST_PERMISSIONS.length ? 'all' : perms.length ? perms.join(', ') : 'nothing');
  return html`<details class="labels">
    <summary>${entries.map(([host, perms]) => `${host} (${perms.length === HOST_PERMISSIONS.length ? 'all' : `${perms.length} of ${HOST_PERMISSIONS.length}`})`).join(', ')}</summary>
    <dl>${entries.map(([host, perms]) => html`<dt>${host}</dt><dd>${what(perms)}</dd>`)}</dl>
  </details>`;
}

/* The content of column `col` for `row`.  toggle(col, row) is called when
 * a switch is flipped; busy disables the switches. */
export function cell(col, row, { toggle, busy, name }) {
  const v = row[col.name];
  const empty = v === null || v === undefined || v === '' || (Array.isArray(v) && !v.length);
  if (col.zero && !empty && Number(v) === 0) return html`<span class="muted">${col.zero}</span>`;
  switch (col.kind) {
    case 'toggle':
      return html`<label class="switch">
        <input
          type="checkbox"
          .checked=${Boolean(v)}
          ?disabled=${busy}
          aria-label="${col.label}: ${name}"
          @change=${() => toggle(col, row)}
        />
        <span aria-hidden="true">${v ? 'yes' : 'no'}</span>
      </label>`;
    case 'bool':
      return v ? 'yes' : 'no';
    case 'status':
      return html`<span class="status status-${(typeof col.classes === 'function' ? col.classes(v) : col.classes?.[v]) ?? 'ended'}"
        >${v}</span
      >`;
    case 'slot-bars':
      return slotBars(v, row[col.limit]);
    case 'devices':
      return devices(v);
    case 'labels':
      return labels(v);
    case 'host-perms':
      return hostPerms(v);
    case 'bytes':
      return empty ? html`<span class="muted">${col.empty ?? '—'}</span>` : formatBytes(Number(v));
    case 'slots':
      return v && Object.keys(v).length ? formatConfig(v) : col.empty ?? '—';
    case 'time':
      return formatTime(v);
    case 'list':
      return empty ? html`<span class="muted">${col.empty ?? 'none'}</span>` : v.join(', ');
    default:
      return empty ? html`<span class="muted">${col.empty ?? '—'}</span>` : String(v);
  }
}
