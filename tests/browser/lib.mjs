/* lib.mjs - what every browser script of tests/browser shares: Debian's
 * chromium through playwright-core, the console watched for errors,
 * screenshots at both sizes, logging in and out, typing into the
 * terminal page and reading what it shows, and the step runner.
 *
 * A script is a list of [name, async (page) => {...}] steps ending in
 * runSteps(steps): `node SCRIPT --list` prints the names, one a line;
 * `node SCRIPT` runs them in order and stops at the first failure.
 *
 * Environment: NODE_MODULES (where playwright-core is: scripts/
 * web-deps.sh), SCREENSHOTS (a directory: <page>-<width>x<height>.png),
 * RESULTS (a file: `ok - STEP` or `not ok - STEP: why` per step run; a
 * failure also leaves failure-1280x800.png), CHROMIUM (default
 * /usr/bin/chromium), and what each script names. */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
export const START_TIMEOUT_MS = 90_000; /* a container start under ASan on a loaded machine */
export const UI_TIMEOUT_MS = 15_000;

/* Chromium's flags for this network-less machine (env's notes): no
 * sandbox as root, no GPU, no calls home. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const env = (name, fallback) => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`${name} is not set`);
  return v;
};

/* ---- the console ---- */

export const consoleErrors = [];
let loggedIn = false;
let tolerated = null;

function watchConsole(page) {
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    /* Chromium reports every 4xx as a console error.  While logged out a
     * 401 (GET /server/session on load, a wrong password) or a 429 (a
     * blocked login) is the contract; any other is an error, but for
     * those a step expects (expectConsoleErrors). */
    if (!loggedIn && /status of (401|429)/.test(msg.text())) return;
    if (tolerated?.test(msg.text())) return;
    consoleErrors.push(msg.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`uncaught: ${e.stack ?? e.message}`));
}

/* Runs fn() while console errors matching `pattern` are expected (a
 * connection a step cuts on purpose). */
export async function expectConsoleErrors(pattern, fn) {
  tolerated = pattern;
  try {
    return await fn();
  } finally {
    tolerated = null;
  }
}

export const noConsoleErrors = [
  'no errors in the console',
  async () => {
    if (consoleErrors.length) throw new Error(consoleErrors.join(' | '));
  },
];

/* ---- pages ---- */

/* The fields shown without a name for assistive technologies (a label,
 * aria-label or aria-labelledby), as 'tag#id'. */
function unlabelledFields(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea')]
      .filter((e) => e.getClientRects().length && e.type !== 'hidden')
      .filter((e) => !e.labels?.length && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
      .map((e) => `${e.tagName.toLowerCase()}#${e.id || e.name || '?'}`),
  );
}

/* <name>-1280x800.png and <name>-390x844.png of the page, which must not
 * scroll sideways at either width nor show a field without a label. */
export async function screenshots(page, name) {
  const dir = env('SCREENSHOTS');
  const unlabelled = await unlabelledFields(page);
  if (unlabelled.length) throw new Error(`${name} has fields without a label: ${unlabelled.join(', ')}`);
  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    if (wide > size.width) throw new Error(`${name} at ${size.width}px is ${wide}px wide: it scrolls sideways`);
    await page.screenshot({ path: path.join(dir, `${name}-${size.width}x${size.height}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

export async function navigate(page, linkName, heading) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: linkName }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: UI_TIMEOUT_MS });
}

export async function logIn(page, email, password) {
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  loggedIn = true;
  await page.getByRole('button', { name: 'Log in' }).click();
}

export async function logOut(page, email) {
  await page.getByRole('button', { name: email, exact: true }).click();
  await page.getByRole('button', { name: 'Log out' }).click();
  loggedIn = false;
  await page.getByLabel('Email', { exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
}

/* ---- the terminal page ---- */

export async function waitForTerminal(page, state = 'open', timeout = UI_TIMEOUT_MS) {
  await page.locator(`.terminal-status[data-state="${state}"]`).waitFor({ timeout });
}

/* The lines the terminal shows (xterm.js's rows), trimmed. */
export function terminalLines(page) {
  return page.locator('.xterm-rows > div').allTextContents().then((rows) => rows.map((r) => r.trim()));
}

/* Types `command` into the terminal and waits for a line that `want` matches. */
export async function runInTerminal(page, command, want) {
  await page.locator('.terminal-frame').click();
  await page.keyboard.type(command);
  await page.keyboard.press('Enter');
  const deadline = Date.now() + UI_TIMEOUT_MS;
  for (;;) {
    const line = (await terminalLines(page)).find((l) => want.test(l));
    if (line) return line;
    if (Date.now() > deadline)
      throw new Error(`no line matching ${want} after '${command}': ${(await terminalLines(page)).filter(Boolean).join(' | ')}`);
    await page.waitForTimeout(100);
  }
}

/* ---- running the steps ---- */

async function run(steps) {
  const results = env('RESULTS');
  writeFileSync(results, '');
  mkdirSync(env('SCREENSHOTS'), { recursive: true });
  const require = createRequire(path.join(env('NODE_MODULES'), 'noop.js'));
  const { chromium } = require('playwright-core');
  const profile = mkdtempSync(path.join(tmpdir(), 'tessera-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: env('CHROMIUM', '/usr/bin/chromium'),
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: DESKTOP,
    acceptDownloads: true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  watchConsole(page);
  let failed = 0;
  for (const [name, step] of steps) {
    try {
      await step(page);
      appendFileSync(results, `ok - ${name}\n`);
      console.log(`ok - ${name}`);
    } catch (e) {
      const why = String(e.message).split('\n')[0];
      appendFileSync(results, `not ok - ${name}: ${why}\n`);
      console.log(`not ok - ${name}: ${e.message}`);
      await page.screenshot({ path: path.join(env('SCREENSHOTS'), 'failure-1280x800.png'), fullPage: true }).catch(() => {});
      failed = 1;
      break;
    }
  }
  await context.close();
  rmSync(profile, { recursive: true, force: true });
  return failed;
}

export function runSteps(steps) {
  if (process.argv[2] === '--list') {
    for (const [name] of steps) console.log(name);
    return;
  }
  run(steps).then(
    (rc) => process.exit(rc),
    (e) => {
      console.error(`${path.basename(process.argv[1])}: ${e.stack ?? e}`);
      process.exit(2);
    },
  );
}
