/* format.js - numbers for people: slot values with their units, a
 * session's configuration ("2 cores · 8 GiB · 0.5 fGPU"), ages and waits,
 * times, and amounts of three significant digits. */
import { SLOT_NAMES, slotMap } from './slots.js';

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/* 8589934592 -> "8 GiB", 1610612736 -> "1.5 GiB". */
export function formatBytes(n) {
  if (!Number.isFinite(n)) return 'unlimited';
  let u = 0;
  while (n >= 1024 && u < BYTE_UNITS.length - 1) {
    n /= 1024;
    u++;
  }
  return `${Number(n.toFixed(n < 10 && u > 0 ? 1 : 0))} ${BYTE_UNITS[u]}`;
}

function trimmed(n) {
  return String(Number(n.toFixed(3)));
}

/* One slot value with its unit: "2 cores", "1 core", "8 GiB", "0.5 fGPU", "1 GPU". */
export function formatSlot(name, value) {
  if (!Number.isFinite(value)) return 'unlimited';
  switch (name) {
    case 'cpu':
      return `${trimmed(value)} ${value === 1 ? 'core' : 'cores'}`;
    case 'mem':
      return formatBytes(value);
    case 'cuda.shares':
      return `${trimmed(value)} fGPU`;
    case 'cuda.device':
      return `${trimmed(value)} ${value === 1 ? 'GPU' : 'GPUs'}`;
    default:
      return trimmed(value);
  }
}

/* The names of the slots for labels. */
export const SLOT_LABELS = { cpu: 'CPU', mem: 'Memory', 'cuda.shares': 'fGPU', 'cuda.device': 'GPU' };

/* A session's slots as one line: "2 cores · 8 GiB · 0.5 fGPU" (zeros left out). */
export function formatConfig(slots) {
  const map = slotMap(slots);
  const parts = SLOT_NAMES.filter((n) => map[n] > 0).map((n) => formatSlot(n, map[n]));
  return parts.length ? parts.join(' · ') : '—';
}

/* A running session's usage from its lastStat (the agent's measurement:
 * {cpu_util: {current, capacity}, mem, cuda_util, cuda_mem}): "CPU 12% ·
 * 120 MiB of 256 MiB · GPU 30%"; '—' when there is none yet.  CPU and
 * GPU are percent of one core / one GPU, as Backend.AI counts them. */
export function formatUsage(lastStat) {
  const num = (item) => (item && item.current != null ? Number(item.current) : NaN);
  const parts = [];
  const cpu = num(lastStat?.cpu_util), mem = num(lastStat?.mem), memCap = Number(lastStat?.mem?.capacity);
  const gpu = num(lastStat?.cuda_util), gpuMem = num(lastStat?.cuda_mem);
  if (Number.isFinite(cpu)) parts.push(`CPU ${Math.round(cpu)}%`);
  if (Number.isFinite(mem))
    parts.push(Number.isFinite(memCap) && memCap > 0 ? `${formatBytes(mem)} of ${formatBytes(memCap)}` : formatBytes(mem));
  if (Number.isFinite(gpu)) parts.push(`GPU ${Math.round(gpu)}%`);
  else if (Number.isFinite(gpuMem)) parts.push(`GPU ${formatBytes(gpuMem)}`);
  return parts.length ? parts.join(' · ') : '—';
}

const DURATION_UNITS = [
  ['d', 86400],
  ['h', 3600],
  ['min', 60],
  ['s', 1],
];

/* Milliseconds as at most two units: "45 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function formatDuration(ms) {
  const total = Math.max(0, Math.floor(ms / 1000));
  const i = DURATION_UNITS.findIndex(([, size]) => total >= size);
  if (i < 0 || i === DURATION_UNITS.length - 1) return `${total} s`;
  const [unit, size] = DURATION_UNITS[i];
  const [minorUnit, minorSize] = DURATION_UNITS[i + 1];
  const major = Math.floor(total / size), minor = Math.floor((total % size) / minorSize);
  return minor ? `${major} ${unit} ${minor} ${minorUnit}` : `${major} ${unit}`;
}

/* An ISO 8601 time as "2025-03-04 15:06" in the browser's time zone; "—" for none. */
export function formatTime(iso) {
  const d = iso ? new Date(iso) : null;
  if (!d || Number.isNaN(d.getTime())) return '—';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/* An amount with at most three significant digits: 0.00123, 12.3, 1234. */
export function formatAmount(n) {
  if (!Number.isFinite(n)) return '—';
  return Math.abs(n) >= 1000 ? String(Math.round(n)) : String(Number(n.toPrecision(3)));
}
