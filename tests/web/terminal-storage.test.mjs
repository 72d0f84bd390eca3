/* terminal-storage.test.mjs - web/src/pty-protocol.js, terminal-route.js,
 * backoff.js and the path and name rules of folders.js: the terminal's
 * messages, IDs and route, the retry delays, paths inside a folder. */
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { test } from 'node:test';
import { RETRY_MAX_MS, retryDelay } from '../../web/src/backoff.js';
import {
  browseArg,
  joinPath,
  parentPath,
  parseBrowseArg,
  parseEmails,
  pathSteps,
  permissionLabel,
  transferUrl,
  validFileName,
  validFolderName,
} from '../../web/src/folders.js';
import {
  PING_MESSAGE,
  TERMINAL_TAKEN_CODE,
  base64ToBytes,
  bytesToBase64,
  newTerminalId,
  parseMessage,
  ptyUrl,
  resizeMessage,
  stdinMessage,
  terminalIdFor,
} from '../../web/src/pty-protocol.js';
import { parseTerminalArg, terminalArg } from '../../web/src/terminal-route.js';

/* The Web Crypto global browsers have; node has it from 19 on, Debian 12's
 * node is 18. */
globalThis.crypto ??= webcrypto;

test("the terminal's URL is on the page's origin, ws or wss, with its size", () => {
  assert.equal(
    ptyUrl({ protocol: 'http:', host: '127.0.0.1:8090' }, 'my session', 24, 80),
    'ws://127.0.0.1:8090/stream/session/my%20session/pty?rows=24&cols=80',
  );
  assert.equal(ptyUrl({ protocol: 'https:', host: 'gpu.lab' }, 's1', 0, 5000), 'wss://gpu.lab/stream/session/s1/pty?rows=1&cols=1000');
});

test('a kept terminal is named in the URL', () => {
  assert.equal(
    ptyUrl({ protocol: 'http:', host: 'h' }, 's1', 24, 80, 'Ab_-0123456789'),
    'ws://h/stream/session/s1/pty?rows=24&cols=80&terminal=Ab_-0123456789',
  );
  assert.equal(TERMINAL_TAKEN_CODE, 4001);
});

test("another owner's session: its access key in the URL, the page's argument and the terminal's name", () => {
  const owner = 'AKIAUSERUSERUSERUSER';
  assert.equal(
    ptyUrl({ protocol: 'http:', host: 'h' }, 's1', 24, 80, 'Ab_-0123456789', owner),
    `ws://h/stream/session/s1/pty?rows=24&cols=80&terminal=Ab_-0123456789&owner_access_key=${owner}`,
  );
  assert.equal(terminalArg('s1'), 's1');
  assert.equal(terminalArg('s1', null), 's1');
  assert.equal(terminalArg('s1', owner), `s1/${owner}`);
  assert.deepEqual(parseTerminalArg(`s1/${owner}`), { session: 's1', owner });
  assert.deepEqual(parseTerminalArg('s1'), { session: 's1', owner: null });
  assert.deepEqual(parseTerminalArg(null), { session: '', owner: null });
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  const mine = terminalIdFor(storage, 's1');
  const theirs = terminalIdFor(storage, 's1', { owner });
  assert.notEqual(theirs, mine); /* the admin's own s1 is another shell */
  assert.equal(store.get(`tessera.terminal.s1/${owner}`), theirs);
  assert.equal(terminalIdFor(storage, 's1', { owner }), theirs);
});

test('terminal IDs: 22 characters the manager takes, one per tab and session, a fresh one on demand', () => {
  const id = newTerminalId();
  assert.match(id, /^[A-Za-z0-9_-]{22}$/);
  assert.notEqual(newTerminalId(), id);
  assert.equal(newTerminalId((b) => b.fill(0xff)), '_____________________w');
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  const a = terminalIdFor(storage, 'sess-a');
  assert.equal(terminalIdFor(storage, 'sess-a'), a); /* a reload of the tab */
  assert.equal(store.get('tessera.terminal.sess-a'), a);
  const b = terminalIdFor(storage, 'sess-b');
  assert.notEqual(b, a);
  const fresh = terminalIdFor(storage, 'sess-a', { fresh: true });
  assert.notEqual(fresh, a);
  assert.equal(terminalIdFor(storage, 'sess-a'), fresh);
  store.set('tessera.terminal.sess-c', 'bad id!');
  assert.match(terminalIdFor(storage, 'sess-c'), /^[A-Za-z0-9_-]{22}$/);
  const refusing = { getItem: () => { throw new Error('denied'); }, setItem: () => { throw new Error('denied'); } };
  assert.match(terminalIdFor(refusing, 'sess-a'), /^[A-Za-z0-9_-]{22}$/);
});

test('keystrokes go as base64 of UTF-8; resize and ping as the agent reads them', () => {
  assert.deepEqual(JSON.parse(stdinMessage('echo héllo\r')), { type: 'stdin', chars: 'ZWNobyBow6lsbG8N' });
  assert.deepEqual(JSON.parse(resizeMessage(40.4, 132)), { type: 'resize', rows: 40, cols: 132 });
  assert.deepEqual(JSON.parse(PING_MESSAGE), { type: 'ping' });
});

test("the manager's messages: output as bytes, errors as text, the rest ignored", () => {
  const out = parseMessage(JSON.stringify({ type: 'out', data: bytesToBase64(new Uint8Array([0xe2, 0x82])) }));
  assert.equal(out.type, 'out');
  assert.deepEqual([...out.bytes], [0xe2, 0x82]); /* half a character: xterm.js joins it with the next */
  assert.deepEqual(parseMessage('{"type":"error","data":"cannot reach the agent"}'), {
    type: 'error',
    message: 'cannot reach the agent',
  });
  assert.equal(parseMessage('not json'), null);
  assert.equal(parseMessage('{"type":"out","data":"%%%"}'), null);
  assert.equal(parseMessage('{"type":"pong"}'), null);
  assert.deepEqual(parseMessage('{"type":"terminal","id":"abcdefgh","kept":true}'), {
    type: 'terminal',
    id: 'abcdefgh',
    kept: true,
  });
  assert.equal(parseMessage('{"type":"terminal","id":"abcdefgh"}').kept, false);
  const big = new Uint8Array(100_000).map((_, i) => i % 251);
  assert.deepEqual(base64ToBytes(bytesToBase64(big)), big);
});

test('retries wait 1 s, 2 s, 4 s ... up to 30 s, with at most a fifth more', () => {
  assert.equal(retryDelay(0, () => 0), 1000);
  assert.equal(retryDelay(1, () => 0), 2000);
  assert.equal(retryDelay(3, () => 0.5), 8800);
  assert.equal(retryDelay(10, () => 0), RETRY_MAX_MS);
  assert.equal(retryDelay(50, () => 1), RETRY_MAX_MS * 1.2);
});

test('paths inside a folder, and the route of a folder page', () => {
  assert.equal(joinPath('', 'a.txt'), 'a.txt');
  assert.equal(joinPath('data/raw', 'a.txt'), 'data/raw/a.txt');
  assert.equal(parentPath('data/raw/a.txt'), 'data/raw');
  assert.equal(parentPath('a.txt'), '');
  assert.deepEqual(pathSteps('a/b'), [
    { name: 'a', path: 'a' },
    { name: 'b', path: 'a/b' },
  ]);
  assert.deepEqual(pathSteps(''), []);
  assert.equal(browseArg('webfiles', 'a/b'), 'webfiles/a/b');
  assert.deepEqual(parseBrowseArg('webfiles/a/b'), { folder: 'webfiles', path: 'a/b' });
  assert.deepEqual(parseBrowseArg('webfiles'), { folder: 'webfiles', path: '' });
  assert.deepEqual(parseBrowseArg(null), { folder: '', path: '' });
});

test("names the manager takes for folders and files", () => {
  for (const ok of ['data', '.config', 'a', 'x-1_2.3', 'a'.repeat(64)]) assert.ok(validFolderName(ok), ok);
  for (const bad of ['', '.', '-x', 'a b', 'a/b', '.ssh', 'invitations', 'a'.repeat(65)]) assert.ok(!validFolderName(bad), bad);
  for (const ok of ['a.txt', 'ünïcode', '.hidden', 'x'.repeat(255)]) assert.ok(validFileName(ok), ok);
  for (const bad of ['', '.', '..', 'a/b', 'tab\there', 'é'.repeat(128)]) assert.ok(!validFileName(bad), bad);
});

test('emails, permissions and transfer URLs', () => {
  assert.deepEqual(parseEmails(' a@x.org, b@x.org;c@x.org  a@x.org\n'), ['a@x.org', 'b@x.org', 'c@x.org']);
  assert.equal(permissionLabel('rw'), 'read and write');
  assert.equal(permissionLabel('xx'), 'xx');
  assert.equal(
    transferUrl({ token: 'abc.d-e', url: 'http://10.0.0.5:8090/folders/_/upload' }, 'https://gpu.lab/#/storage'),
    '/folders/_/upload?token=abc.d-e',
  );
});
