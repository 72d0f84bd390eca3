/* web-ui.mjs - the web UI in a real browser: Debian's chromium, driven by
 * playwright-core, against a running manager with an agent and the busybox
 * image (tests/integration/t6000-web-ui.sh starts them).
 *
 *   node tests/browser/web-ui.mjs --list     the step names, one a line
 *   node tests/browser/web-ui.mjs            run them
 *
 * Environment: TESSERA_URL (the manager), TESSERA_EMAIL, TESSERA_PASSWORD
 * (the admin), TESSERA_BLOCKED_EMAIL (a user whose login the steps block),
 * and those of lib.mjs (NODE_MODULES, SCREENSHOTS, RESULTS, CHROMIUM).
 *
 * The steps: a wrong password is refused with a message; the admin logs
 * in and sees the summary; the keyboard finds a skip link and the
 * navigation; the launcher offers busybox with bounded sliders; three
 * sessions launched at once with 1 fGPU each on a node of one mock GPU
 * worth 2 fGPU, and the folder webdata, so that the third waits: all
 * listed, the third PENDING with the scheduler's reason; deleting the
 * first starts the third, seen live (the page never reloads: statuses come
 * from the event stream); the finished list keeps the first with its
 * reason; every page
 * at 1280x800 and at phone width (no sideways scrolling); a reload finds
 * the login; a batch session ends with its result; the password changes
 * from the user menu (a short one refused) and the new one logs in;
 * logout; repeated wrong passwords block a login with a message; and no
 * errors in the console. */
import {
  START_TIMEOUT_MS,
  UI_TIMEOUT_MS,
  env,
  logIn,
  logOut as logOutAs,
  navigate,
  noConsoleErrors,
  runSteps,
  screenshots,
} from './lib.mjs';

const NEW_PASSWORD = 'a-new-web-password';
const INTERACTIVE_MS = 1000;

/* ---- helpers of these steps ---- */

/* The status a session row shows, or null when it is not listed. */
function rowStatus(page, name) {
  return page.locator(`tr[data-session="${name}"]`).getAttribute('data-status', { timeout: 1000 }).catch(() => null);
}

async function waitForStatus(page, name, status, timeout = START_TIMEOUT_MS) {
  await page.locator(`tr[data-session="${name}"][data-status="${status}"]`).waitFor({ timeout });
}

/* Records, in the page, each status each session row shows: the proof that
 * the list changed by itself (and, with the marker, without a reload). */
function recordStatuses(page) {
  return page.evaluate(() => {
    window.__seen = {};
    window.__noReload = true;
    const note = () => {
      for (const tr of document.querySelectorAll('tr[data-session]')) {
        const seen = (window.__seen[tr.dataset.session] ??= []);
        if (seen.at(-1) !== tr.dataset.status) seen.push(tr.dataset.status);
      }
    };
    new MutationObserver(note).observe(document.body, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ['data-status'],
    });
    note();
  });
}

const logOut = (page) => logOutAs(page, env('TESSERA_EMAIL'));

async function clickDelete(page, name) {
  await page.getByRole('button', { name: `Delete session ${name}` }).click();
  const dialog = page.getByRole('dialog', { name: `Delete session ${name}?` });
  await dialog.waitFor({ timeout: UI_TIMEOUT_MS });
  await dialog.getByRole('button', { name: 'Delete' }).click();
}

/* ---- the steps ---- */

const steps = [
  [
    'the login page loads',
    async (page) => {
      await page.goto(env('TESSERA_URL'));
      await page.getByLabel('Email').waitFor({ timeout: UI_TIMEOUT_MS });
      /* the bar: interactive within 1 s on localhost */
      const ms = await page.evaluate(() => performance.now());
      console.log(`# the login form was there ${Math.round(ms)} ms after the navigation began`);
      if (ms > INTERACTIVE_MS) throw new Error(`the login form took ${Math.round(ms)} ms (more than ${INTERACTIVE_MS})`);
      await screenshots(page, 'login');
    },
  ],
  [
    'a wrong password is refused with a message',
    async (page) => {
      await page.getByLabel('Email').fill(env('TESSERA_EMAIL'));
      await page.getByLabel('Password').fill('not-the-password');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Wrong email or password' }).waitFor({ timeout: UI_TIMEOUT_MS });
    },
  ],
  [
    'the admin logs in and sees the summary',
    async (page) => {
      await logIn(page, env('TESSERA_EMAIL'), env('TESSERA_PASSWORD'));
      await page.getByRole('heading', { level: 1, name: 'Summary' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator('usage-bars [role="meter"]').first().waitFor({ timeout: UI_TIMEOUT_MS });
      const headings = await page.locator('usage-bars h3').allTextContents();
      for (const want of ['Your keypair', 'Project default', 'Resource group'])
        if (!headings.some((h) => h.startsWith(want))) throw new Error(`no '${want}' bars among ${headings}`);
      await page.getByText('No session is running').waitFor({ timeout: UI_TIMEOUT_MS });
    },
  ],
  [
    'the keyboard reaches a skip link first, then the navigation',
    async (page) => {
      await page.keyboard.press('Tab');
      const first = await page.evaluate(() => document.activeElement?.textContent?.trim());
      if (first !== 'Skip to content') throw new Error(`the first Tab stop is '${first}'`);
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      const second = await page.evaluate(() => document.activeElement?.closest('nav')?.getAttribute('aria-label'));
      if (second !== 'Main') throw new Error('the navigation does not follow the brand');
    },
  ],
  [
    'the launcher offers busybox with sliders bounded by what remains',
    async (page) => {
      await navigate(page, 'Launch', 'Launch a session');
      const environment = page.getByRole('combobox', { name: 'Image' });
      await environment.waitFor({ timeout: UI_TIMEOUT_MS });
      const image = await environment.inputValue();
      if (image !== 'busybox') throw new Error(`the image is '${image}'`);
      const cpu = page.getByRole('spinbutton', { name: 'CPU' });
      const max = Number(await cpu.getAttribute('max'));
      if (!(max >= 0.1)) throw new Error(`the CPU slider's max is ${max}`);
      await screenshots(page, 'launcher');
    },
  ],
  [
    'three sessions of 1 fGPU each on a 2-fGPU node, with a folder: a warning, then all listed, the third PENDING with a reason',
    async (page) => {
      await recordStatuses(page);
      await page.getByRole('spinbutton', { name: 'CPU' }).fill('0.25');
      await page.getByRole('spinbutton', { name: 'CPU' }).press('Tab');
      await page.getByRole('spinbutton', { name: 'Memory' }).fill('0.25');
      await page.getByRole('spinbutton', { name: 'Memory' }).press('Tab');
      await page.getByRole('spinbutton', { name: 'GPU' }).fill('1');
      await page.getByRole('spinbutton', { name: 'GPU' }).press('Tab');
      await page.getByRole('combobox', { name: 'Version' }).selectOption({ index: 0 });
      await page.getByRole('checkbox', { name: /^webdata/ }).check();
      await page.getByLabel('Name (optional)').fill('webui');
      await page.getByLabel('Sessions', { exact: true }).fill('3');
      await page.getByLabel('Sessions', { exact: true }).press('Tab');
      await page.getByText('some will wait in the queue').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByRole('button', { name: 'Launch 3 sessions' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sessions' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await waitForStatus(page, 'webui-1', 'RUNNING');
      await waitForStatus(page, 'webui-2', 'RUNNING');
      await waitForStatus(page, 'webui-3', 'PENDING', UI_TIMEOUT_MS);
      const info = await page.evaluate(async () => (await (await fetch('/session/webui-1')).json()));
      if (!JSON.stringify(info.mounts).includes('webdata')) throw new Error(`webui-1 mounts ${JSON.stringify(info.mounts)}`);
      if (String(info.occupiedSlots?.['cuda.shares']) !== '1')
        throw new Error(`webui-1 holds ${JSON.stringify(info.occupiedSlots)}, not 1 fGPU`);
      /* the scheduler's own reason, not the placeholder */
      const reason = 'tr[data-session="webui-3"] .status-reason';
      await page.waitForFunction(
        (selector) => {
          const text = document.querySelector(selector)?.textContent.trim();
          return text && !/waiting for the scheduler/.test(text);
        },
        reason,
        { timeout: UI_TIMEOUT_MS },
      );
      console.log(`# webui-3 waits: ${await page.locator(reason).textContent()}`);
    },
  ],
  [
    'every page with sessions, at 1280x800 and 390x844',
    async (page) => {
      await screenshots(page, 'sessions');
      await navigate(page, 'Summary', 'Summary');
      await page.locator('summary-page tr[data-session="webui-1"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await screenshots(page, 'summary');
      await navigate(page, 'Sessions', 'Sessions');
    },
  ],
  [
    'deleting a running session starts the waiting one, live',
    async (page) => {
      await clickDelete(page, 'webui-1');
      await waitForStatus(page, 'webui-3', 'RUNNING');
      await page.locator('tr[data-session="webui-1"]').waitFor({ state: 'detached', timeout: START_TIMEOUT_MS });
      const { seen, noReload } = await page.evaluate(() => ({ seen: window.__seen, noReload: window.__noReload }));
      if (!noReload) throw new Error('the page was reloaded');
      const web3 = seen['webui-3'] ?? [];
      if (web3[0] !== 'PENDING' || web3.at(-1) !== 'RUNNING')
        throw new Error(`webui-3 went ${web3.join(' -> ')}, not PENDING -> ... -> RUNNING`);
      console.log(`# webui-1: ${seen['webui-1']?.join(' -> ')}; webui-3: ${web3.join(' -> ')}`);
    },
  ],
  [
    "a running session shows its usage (the agent's measurement) and its logs",
    async (page) => {
      await page.locator('tr[data-session="webui-2"] td[data-label="Usage"]').filter({ hasText: /CPU \d+%/ })
        .waitFor({ timeout: START_TIMEOUT_MS });
      console.log(`# webui-2 uses ${await page.locator('tr[data-session="webui-2"] td[data-label="Usage"]').textContent()}`);
      await page.getByRole('button', { name: 'Logs of session webui-2' }).click();
      const dialog = page.getByRole('dialog', { name: 'Logs of webui-2' });
      await dialog.locator('pre.logs').waitFor({ timeout: UI_TIMEOUT_MS });
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
    },
  ],
  [
    'the finished list shows the deleted session and why it ended',
    async (page) => {
      await page.getByRole('button', { name: /^Finished/ }).click();
      const row = page.locator('tr[data-session="webui-1"][data-status="TERMINATED"]');
      await row.filter({ hasText: 'user-requested' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByRole('button', { name: /^Active/ }).click();
    },
  ],
  [
    'a reload finds the login and the running session',
    async (page) => {
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Sessions' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await waitForStatus(page, 'webui-3', 'RUNNING', UI_TIMEOUT_MS);
    },
  ],
  [
    'deleting the last sessions empties the list',
    async (page) => {
      await clickDelete(page, 'webui-2');
      await clickDelete(page, 'webui-3');
      await page.getByText('No active session').waitFor({ timeout: START_TIMEOUT_MS });
    },
  ],
  [
    'a batch session runs its command and ends with its result',
    async (page) => {
      await navigate(page, 'Launch', 'Launch a session');
      await page.getByLabel('Batch: runs a command, then ends').check();
      await page.getByLabel('Command', { exact: true }).fill('echo hello from the web UI');
      await page.getByLabel('Name (optional)').fill('webbatch');
      await page.getByRole('button', { name: 'Launch', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Sessions' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByRole('button', { name: /^Finished/ }).click();
      /* the event brings the status, the list read after it the result */
      const row = page.locator('tr[data-session="webbatch"][data-status="TERMINATED"]');
      await row.filter({ hasText: /success/i }).waitFor({ timeout: START_TIMEOUT_MS });
    },
  ],
  [
    'changing the password from the user menu',
    async (page) => {
      await page.getByRole('button', { name: env('TESSERA_EMAIL') }).click();
      await page.getByRole('button', { name: 'Change password' }).click();
      const dialog = page.getByRole('dialog', { name: 'Change password' });
      await dialog.getByLabel('Current password').fill(env('TESSERA_PASSWORD'));
      await dialog.getByLabel('New password', { exact: true }).fill('short');
      await dialog.getByLabel('New password again').fill('short');
      await dialog.getByRole('button', { name: 'Change password' }).click();
      await dialog.getByRole('alert').filter({ hasText: 'at least 8 characters' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await dialog.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await dialog.getByLabel('New password again').fill(NEW_PASSWORD);
      await dialog.getByRole('button', { name: 'Change password' }).click();
      await dialog.getByText('Your password was changed.').waitFor({ timeout: UI_TIMEOUT_MS });
      await dialog.getByRole('button', { name: 'Close' }).click();
    },
  ],
  [
    'logging out from the user menu, and a reload stays logged out',
    async (page) => {
      await logOut(page);
      await page.reload();
      await page.getByLabel('Email').waitFor({ timeout: UI_TIMEOUT_MS });
    },
  ],
  [
    'the new password logs in',
    async (page) => {
      await logIn(page, env('TESSERA_EMAIL'), NEW_PASSWORD);
      await page.getByRole('heading', { level: 1, name: 'Sessions' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await logOut(page);
    },
  ],
  [
    'repeated wrong passwords block the login, and the page says so',
    async (page) => {
      await page.getByLabel('Email').fill(env('TESSERA_BLOCKED_EMAIL'));
      for (let i = 0, status = 401; status === 401; i++) {
        if (i === 10) throw new Error('ten wrong passwords, and the login is not blocked');
        await page.getByLabel('Password').fill(`wrong-${i}`);
        const [answer] = await Promise.all([
          page.waitForResponse((r) => r.url().endsWith('/server/login')),
          page.getByRole('button', { name: 'Log in' }).click(),
        ]);
        status = answer.status();
      }
      await page.getByRole('alert').filter({ hasText: 'Too many failed logins' }).waitFor({ timeout: UI_TIMEOUT_MS });
      if (!(await page.getByRole('button', { name: 'Log in' }).isDisabled()))
        throw new Error('the Log in button stays enabled while blocked');
    },
  ],
  noConsoleErrors,
];

runSteps(steps);
