/* slots.js - resource slots as the manager writes them.  On the wire a
 * value is a decimal string ("2", "0.5", "8589934592") or "Infinity";
 * here it becomes a Number (Infinity for unlimited) for display and for
 * bounding sliders.  Requests go back as strings the manager parses
 * exactly (toRequestSlots). */

/* The slots the UI shows, in display order: cores, bytes, fGPU, GPUs. */
export const SLOT_NAMES = ['cpu', 'mem', 'cuda.shares', 'cuda.device'];

/* The fraction of a GPU one fGPU step is (the manager's cuda.shares quantum). */
export const FGPU_QUANTUM = 0.01;

/* A slot value: Infinity for "Infinity", 0 for missing or malformed. */
export function slotNumber(value) {
  if (value === 'Infinity' || value === Infinity) return Infinity;
  const n = typeof value === 'number' ? value : Number.parseFloat(value);
  return Number.isFinite(n) ? n : 0;
}

/* {cpu, mem, 'cuda.shares', 'cuda.device'} as numbers from a manager's object. */
export function slotMap(slots, missing = 0) {
  const map = {};
  for (const name of SLOT_NAMES) map[name] = slots && name in slots ? slotNumber(slots[name]) : missing;
  return map;
}

/* The smallest of each slot over several slot maps. */
export function minSlots(...maps) {
  const out = {};
  for (const name of SLOT_NAMES) out[name] = Math.min(...maps.map((m) => m[name] ?? Infinity));
  return out;
}

const SIZE_UNITS = { '': 1, b: 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40, p: 2 ** 50 };

/* "64m", "4g", "1.5G", "1024" -> bytes; NaN if it is not a size. */
export function parseSize(text) {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgtpb]?)(?:i?b)?\s*$/i.exec(String(text));
  return m ? Math.round(Number.parseFloat(m[1]) * SIZE_UNITS[m[2].toLowerCase()]) : Number.NaN;
}

/* The least an image needs, from its ai.backend.resource.min.* labels:
 * {cpu, mem, 'cuda.shares', 'cuda.device'} (0 where it says nothing). */
export function imageMinimums(labels = {}) {
  const min = slotMap({});
  for (const name of SLOT_NAMES) {
    const label = labels[`ai.backend.resource.min.${name}`];
    if (label === undefined) continue;
    const value = name === 'mem' ? parseSize(label) : slotNumber(label);
    if (Number.isFinite(value)) min[name] = value;
  }
  return min;
}

/* Round v down to a multiple of step (in the step's decimals). */
export function floorTo(v, step) {
  if (!Number.isFinite(v)) return v;
  const decimals = (String(step).split('.')[1] ?? '').length;
  return Number((Math.floor(v / step + 1e-9) * step).toFixed(decimals));
}

/* A config.resources object for POST /session: exact decimal strings,
 * zero slots left out ({cpu: "2", mem: "8589934592", "cuda.shares": "0.5"}). */
export function toRequestSlots(slots) {
  const out = {};
  for (const name of SLOT_NAMES) {
    const v = slots[name];
    if (!v) continue;
    out[name] = name === 'mem' || name === 'cuda.device' ? String(Math.round(v)) : String(Number(v.toFixed(3)));
  }
  return out;
}

/* Round v up to a multiple of step. */
export function ceilTo(v, step) {
  if (!Number.isFinite(v)) return v;
  const decimals = (String(step).split('.')[1] ?? '').length;
  return Number((Math.ceil(v / step - 1e-9) * step).toFixed(decimals));
}
