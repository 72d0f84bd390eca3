/* harness.mjs - what the browser scripts (web-ui.mjs, web-admin.mjs) share:
 * Debian's chromium through playwright-core, the console watched for
 * errors, screenshots at both sizes, logging in and out, and running a
 * list of named steps.
 *
 * runSteps(steps) is a script's main: with --list it prints the step names,
 * one a line; else it runs them in one page, writing `ok - STEP` or `not ok
 * - STEP: why` per step to $RESULTS, and stops at the first failure (which
 * leaves failure-1280x800.png).  Environment: NODE_MODULES (where
 * playwright-core is: scripts/web-deps.sh), SCREENSHOTS (a directory:
 * <page>-<width>x<height>.png), RESULTS, CHROMIUM (default
 * /usr/bin/chromium), and what the script itself reads. */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
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

const consoleErrors = [];
let loggedIn = false;
let expected = null;

function watchConsole(page) {
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    /* Chromium reports every 4xx as a console error.  While logged out a
     * 401 (GET /server/session on load, a wrong password) or a 429 (a
     * blocked login) is the contract; a step that provokes a refusal says
     * which (expectRefusals); any other is an error. */
    if (!loggedIn && /status of (401|429)/.test(msg.text())) return;
    if (expected?.test(msg.text())) return;
    consoleErrors.push(msg.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`uncaught: ${e.stack ?? e.message}`));
}

/* During the current step, the manager's refusals with these statuses
 * (e.g. [403, 409]) are expected and not console errors. */
export function expectRefusals(statuses) {
  expected = new RegExp(`status of (${statuses.join('|')})`);
}

/* The last step of a script: nothing unexpected in the console. */
export const noConsoleErrors = [
  'no errors in the console',
  async () => {
    if (consoleErrors.length) throw new Error(consoleErrors.join(' | '));
  },
];

/* ---- pages ---- */

/* Screenshots of the page as <name>-<size>.png at both sizes; a page
 * wider than the screen (sideways scrolling) fails. */
export async function screenshots(page, name) {
  const dir = env('SCREENSHOTS');
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
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  loggedIn = true;
  await page.getByRole('button', { name: 'Log in' }).click();
}

export async function logOut(page, email) {
  await page.getByRole('button', { name: email }).click();
  await page.getByRole('button', { name: 'Log out' }).click();
  loggedIn = false;
  await page.getByLabel('Email').waitFor({ timeout: UI_TIMEOUT_MS });
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
  });
  const page = context.pages()[0] ?? (await context.newPage());
  watchConsole(page);
  let failed = 0;
  for (const [name, step] of steps) {
    expected = null;
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
