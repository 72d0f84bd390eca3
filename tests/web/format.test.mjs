/* format.test.mjs - web/src/format.js: units, configurations, durations. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  formatAmount,
  formatBytes,
  formatConfig,
  formatDuration,
  formatSlot,
  formatTime,
  formatUsage,
} from '../../web/src/format.js';

test('bytes take the largest unit, one decimal below 10', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(268435456), '256 MiB');
  assert.equal(formatBytes(1610612736), '1.5 GiB');
  assert.equal(formatBytes(8 * 2 ** 30), '8 GiB');
  assert.equal(formatBytes(Infinity), 'unlimited');
});

test('slots carry their unit', () => {
  assert.equal(formatSlot('cpu', 1), '1 core');
  assert.equal(formatSlot('cpu', 0.5), '0.5 cores');
  assert.equal(formatSlot('cuda.shares', 0.25), '0.25 fGPU');
  assert.equal(formatSlot('cuda.device', 2), '2 GPUs');
  assert.equal(formatSlot('cpu', Infinity), 'unlimited');
});

test("a session's configuration is one line without zeros", () => {
  assert.equal(formatConfig({ cpu: '2', mem: '8589934592', 'cuda.shares': '0.5' }), '2 cores · 8 GiB · 0.5 fGPU');
  assert.equal(formatConfig({ cpu: '1', mem: '268435456', 'cuda.device': '0' }), '1 core · 256 MiB');
  assert.equal(formatConfig({}), '—');
});

test('durations use at most two units', () => {
  assert.equal(formatDuration(0), '0 s');
  assert.equal(formatDuration(45_000), '45 s');
  assert.equal(formatDuration(60_000), '1 min');
  assert.equal(formatDuration(3_661_000), '1 h 1 min');
  assert.equal(formatDuration(3_600_000), '1 h');
  assert.equal(formatDuration(2 * 86_400_000 + 4 * 3_600_000), '2 d 4 h');
  assert.equal(formatDuration(-5), '0 s');
});

test('amounts keep three significant digits; times are local minutes', () => {
  assert.equal(formatAmount(0.001234), '0.00123');
  assert.equal(formatAmount(12.345), '12.3');
  assert.equal(formatAmount(1234.5), '1235');
  assert.equal(formatAmount(0), '0');
  assert.equal(formatTime(null), '—');
  assert.match(formatTime('2025-03-04T15:06:07Z'), /^2025-03-0[45] [0-9]{2}:[0-9]{2}$/);
});

test('usage from a lastStat: CPU and GPU percent, memory of its limit', () => {
  const stat = {
    cpu_util: { current: '12.4', capacity: '100', unit_hint: 'percent' },
    mem: { current: String(120 * 1048576), capacity: String(256 * 1048576), unit_hint: 'bytes' },
    cuda_util: { current: '30', capacity: '100', unit_hint: 'percent' },
  };
  assert.equal(formatUsage(stat), 'CPU 12% · 120 MiB of 256 MiB · GPU 30%');
  assert.equal(formatUsage({ mem: { current: '1048576' } }), '1 MiB');
  assert.equal(formatUsage({ cuda_mem: { current: String(2 * 1073741824) } }), 'GPU 2 GiB');
  assert.equal(formatUsage(null), '—');
  assert.equal(formatUsage({}), '—');
});
