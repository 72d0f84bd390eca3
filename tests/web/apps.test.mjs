/* apps.test.mjs - reading the service-ports label (web/src/apps.js). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseServicePorts, webApps } from '../../web/src/apps.js';

test('one app, several, and ports in brackets', () => {
  assert.deepEqual(parseServicePorts('jupyter:http:8888'), [{ name: 'jupyter', protocol: 'http', ports: [8888] }]);
  assert.deepEqual(parseServicePorts('jupyter:http:8888, tb:preopen:6006,ssh:tcp:2200'), [
    { name: 'jupyter', protocol: 'http', ports: [8888] },
    { name: 'tb', protocol: 'preopen', ports: [6006] },
    { name: 'ssh', protocol: 'tcp', ports: [2200] },
  ]);
  assert.deepEqual(parseServicePorts('vscode:http:[8180,8181]'), [
    { name: 'vscode', protocol: 'http', ports: [8180, 8181] },
  ]);
});

test('broken items are left out, the rest kept', () => {
  assert.deepEqual(parseServicePorts(''), []);
  assert.deepEqual(parseServicePorts(undefined), []);
  assert.deepEqual(parseServicePorts('x:http:notaport,ok:http:8000,:http:2000,bad:http:70000,low:http:80'), [
    { name: 'ok', protocol: 'http', ports: [8000] },
  ]);
});

test('a browser opens only http and preopen apps', () => {
  const labels = { 'ai.backend.service-ports': 'jupyter:http:8888,ssh:tcp:2200,tb:preopen:6006' };
  assert.deepEqual(
    webApps(labels).map((a) => a.name),
    ['jupyter', 'tb'],
  );
  assert.deepEqual(webApps({}), []);
});
