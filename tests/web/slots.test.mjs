/* slots.test.mjs - web/src/slots.js: wire values, sizes, image minimums, steps. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ceilTo,
  floorTo,
  imageMinimums,
  minSlots,
  parseSize,
  slotMap,
  slotNumber,
  toRequestSlots,
} from '../../web/src/slots.js';

test('wire values become numbers, "Infinity" unlimited', () => {
  assert.equal(slotNumber('2'), 2);
  assert.equal(slotNumber('0.5'), 0.5);
  assert.equal(slotNumber('Infinity'), Infinity);
  assert.equal(slotNumber(undefined), 0);
  assert.equal(slotNumber('garbage'), 0);
  assert.deepEqual(slotMap({ cpu: '4' }, Infinity), { cpu: 4, mem: Infinity, 'cuda.shares': Infinity, 'cuda.device': Infinity });
  assert.deepEqual(minSlots({ cpu: 4, mem: Infinity }, { cpu: 2, mem: 8 }).cpu, 2);
});

test('sizes as users write them', () => {
  assert.equal(parseSize('64m'), 64 * 2 ** 20);
  assert.equal(parseSize('1.5G'), 1.5 * 2 ** 30);
  assert.equal(parseSize('512MiB'), 512 * 2 ** 20);
  assert.equal(parseSize('1024'), 1024);
  assert.ok(Number.isNaN(parseSize('lots')));
});

test("an image's minimums come from its labels", () => {
  const min = imageMinimums({ 'ai.backend.resource.min.cpu': '0.1', 'ai.backend.resource.min.mem': '32m' });
  assert.equal(min.cpu, 0.1);
  assert.equal(min.mem, 32 * 2 ** 20);
  assert.equal(min['cuda.shares'], 0);
  assert.equal(imageMinimums(undefined).cpu, 0);
});

test('values move to the steps of a slider', () => {
  assert.equal(floorTo(1.99, 0.1), 1.9);
  assert.equal(floorTo(0.3, 0.1), 0.3);
  assert.equal(ceilTo(0.03125, 0.125), 0.125);
  assert.equal(ceilTo(0.25, 0.125), 0.25);
  assert.equal(floorTo(Infinity, 1), Infinity);
});

test('requests are exact decimal strings, zeros left out', () => {
  assert.deepEqual(toRequestSlots({ cpu: 0.1 + 0.2, mem: 268435456, 'cuda.shares': 0.5, 'cuda.device': 0 }), {
    cpu: '0.3',
    mem: '268435456',
    'cuda.shares': '0.5',
  });
});
