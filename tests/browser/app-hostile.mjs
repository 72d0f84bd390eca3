/* app-hostile.mjs - a hostile app opened by an admin gets nothing, in a
 * real browser (tests/integration/t6045-web-app-hostile.sh starts a
 * session `hostile` of user mallory whose app `web` serves
 * tests/lib/hostile-app.html).
 *
 *   node tests/browser/app-hostile.mjs --list     the step names
 *   node tests/browser/app-hostile.mjs            run them
 *
 * Environment: TESSERA_URL, TESSERA_EMAIL and TESSERA_PASSWORD (the
 * admin), MALLORY_KEY (mallory's access key), and lib.mjs's.
 *
 * The steps: the admin logs in and opens the app of mallory's session
 * from the session list; it opens in a new tab on the app origin (not the
 * web UI's), where the page's scripts run: it reads /server/session
 * (there and on the web UI's origin) and POSTs /admin/keypairs (both,
 * with any CSRF token it found): it gets no login, no token, no keypair
 * (the test checks the keypair list afterwards); mallory's link, opened
 * in the admin's browser, opens nothing. */
import { UI_TIMEOUT_MS, env, logIn, navigate, runSteps } from './lib.mjs';

const APP_TIMEOUT_MS = 90_000;
const OPEN = 'Open web of session hostile of mallory@apps.test in a new tab';
let app = null; /* the app's tab */

const steps = [
  [
    "the admin logs in and the session list offers the web app of mallory's session",
    async (page) => {
      await page.goto(env('TESSERA_URL'));
      await logIn(page, env('TESSERA_EMAIL'), env('TESSERA_PASSWORD'));
      await page.getByRole('heading', { level: 1, name: 'Summary' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await navigate(page, 'Sessions', 'Sessions');
      await page.getByRole('group', { name: 'Whose sessions' }).getByRole('button', { name: 'Everyone', exact: true })
        .click();
      await page.getByRole('button', { name: OPEN })
        .waitFor({ timeout: UI_TIMEOUT_MS });
    },
  ],
  [
    "the app opens in a new tab on an origin of its own, not the web UI's",
    async (page) => {
      const popup = page.waitForEvent('popup', { timeout: APP_TIMEOUT_MS });
      await page.getByRole('button', { name: OPEN }).click();
      app = await popup;
      await app.waitForURL(/\/apps\/[0-9a-f-]+\/web\/$/, { timeout: APP_TIMEOUT_MS });
      const ui = new URL(env('TESSERA_URL')), there = new URL(app.url());
      console.log(`# web UI ${ui.origin}, app ${there.origin}`);
      if (there.origin === ui.origin) throw new Error('the app runs on the web UI\'s origin');
    },
  ],
  [
    "the app's page gets no login, no CSRF token and no keypair",
    async () => {
      await app.waitForFunction(() => document.title === 'done', null, { timeout: APP_TIMEOUT_MS });
      const text = await app.locator('#out').textContent();
      console.log(`# the page got: ${text}`);
      const got = JSON.parse(text);
      if (/csrf_token|access_key|secret_key/.test(text)) throw new Error('the page read a login, a token or a key');
      for (const k of ['own_session', 'ui_session', 'own_keypair', 'ui_keypair', 'ui_sessions'])
        if (got[k]?.status >= 200 && got[k]?.status < 300) throw new Error(`${k} answered ${got[k].status}`);
      if (!got.ui_session?.error && got.ui_session?.status !== 401)
        throw new Error(`the web UI's /server/session answered the app: ${JSON.stringify(got.ui_session)}`);
    },
  ],
  [
    "mallory's own link, opened in the admin's browser, opens nothing",
    async (page) => {
      const tab = await page.context().newPage();
      const answer = await tab.goto(env('MALLORY_LINK'));
      const body = await tab.locator('body').textContent();
      console.log(`# ${answer.status()} ${new URL(tab.url()).pathname}: ${body.trim().slice(0, 80)}`);
      if (answer.status() !== 403 || !/someone else/.test(body)) throw new Error('the link was not refused');
      await tab.close();
    },
  ],
];

runSteps(steps);
