/* apps.mjs - in-session apps from the web UI in a real browser, against a
 * manager whose admin runs a session `notebook` of the jupyter test image
 * (tests/integration/t6040-web-apps.sh starts it).
 *
 *   node tests/browser/apps.mjs --list     the step names, one a line
 *   node tests/browser/apps.mjs            run them
 *
 * Environment: TESSERA_URL, TESSERA_EMAIL and TESSERA_PASSWORD (the
 * admin), and lib.mjs's.
 *
 * The steps: the session list offers the session's app (the image's
 * ai.backend.service-ports label); clicking it opens Jupyter in a new tab
 * through the app proxy (/apps/...); a new Python notebook, opened from
 * Jupyter's own menu in a further tab, runs a cell that imports numpy and
 * prints 3; our page at 1280x800 and 390x844, Jupyter's two at 1280x800;
 * no errors in our page's console. */
import path from 'node:path';
import { UI_TIMEOUT_MS, env, logIn, navigate, noConsoleErrors, runSteps, screenshots } from './lib.mjs';

const APP_TIMEOUT_MS = 90_000; /* Jupyter's first start in a container, under ASan */

let jupyter = null; /* the tab of the app */

/* A screenshot of an app's own page (not ours: lib.mjs's checks of labels
 * and widths are for the web UI's pages). */
const appShot = (page, name) => page.screenshot({ path: path.join(env('SCREENSHOTS'), `${name}-1280x800.png`) });

const steps = [
  [
    "the admin logs in and the session list offers the notebook session's jupyter app",
    async (page) => {
      await page.goto(env('TESSERA_URL'));
      await logIn(page, env('TESSERA_EMAIL'), env('TESSERA_PASSWORD'));
      await page.getByRole('heading', { level: 1, name: 'Summary' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await navigate(page, 'Sessions', 'Sessions');
      await page.getByRole('button', { name: 'Open jupyter of session notebook in a new tab' })
        .waitFor({ timeout: UI_TIMEOUT_MS });
      await screenshots(page, 'apps');
    },
  ],
  [
    'clicking it opens Jupyter in a new tab, through the app proxy',
    async (page) => {
      const popup = page.waitForEvent('popup', { timeout: APP_TIMEOUT_MS });
      await page.getByRole('button', { name: 'Open jupyter of session notebook in a new tab' }).click();
      jupyter = await popup;
      await jupyter.waitForURL(/\/apps\/[0-9a-f-]+\/jupyter\/tree/, { timeout: APP_TIMEOUT_MS });
      await jupyter.locator('#new-dropdown-button').waitFor({ timeout: APP_TIMEOUT_MS });
      console.log(`# jupyter at ${new URL(jupyter.url()).pathname}`);
      await appShot(jupyter, 'jupyter');
    },
  ],
  [
    'a new notebook runs a cell: numpy sums 0, 1 and 2 to 3',
    async () => {
      const notebookTab = jupyter.context().waitForEvent('page', { timeout: APP_TIMEOUT_MS });
      await jupyter.locator('#new-dropdown-button').click();
      await jupyter.locator('#new-menu a').filter({ hasText: /Python 3/ }).first().click();
      const notebook = await notebookTab;
      await notebook.waitForURL(/\/apps\/[0-9a-f-]+\/jupyter\/notebooks\//, { timeout: APP_TIMEOUT_MS });
      await notebook.locator('#kernel_indicator_icon.kernel_idle_icon').waitFor({ timeout: APP_TIMEOUT_MS });
      await notebook.locator('.cell .CodeMirror').first().click();
      await notebook.keyboard.type('import numpy; print(numpy.arange(3).sum())');
      await notebook.keyboard.press('Shift+Enter');
      const output = notebook.locator('.output_subarea').first();
      await output.filter({ hasText: /^\s*3\s*$/ }).waitFor({ timeout: APP_TIMEOUT_MS });
      console.log(`# the cell printed ${(await output.textContent()).trim()}`);
      await appShot(notebook, 'notebook');
    },
  ],
  noConsoleErrors,
];

runSteps(steps);
