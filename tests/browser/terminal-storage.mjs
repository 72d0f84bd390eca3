/* terminal-storage.mjs - the web terminal and the storage pages in a real
 * browser (tests/integration/t6020-web-terminal-storage.sh starts the
 * manager, its agent and the busybox image, and makes a second user).
 *
 * Environment: TESSERA_URL, TESSERA_EMAIL, TESSERA_PASSWORD (the admin),
 * TESSERA_USER2_EMAIL and TESSERA_USER2_PASSWORD (the user invited to a
 * folder), and those of lib.mjs.
 *
 * The steps: the admin logs in and launches a busybox session; its
 * terminal opens from the session list, runs `echo hello` and shows
 * hello; Ctrl+] leaves it; it follows the window's size (stty size at
 * two widths); a page reload finds the same shell (a variable set and a
 * job started before it are there, the job's output while away too); a
 * connection cut under it comes back by itself to the same shell, the
 * page saying so meanwhile, without showing anything twice; another tab
 * has a shell of its own; after `exit`, "Open a new shell" gives a new
 * one, which a reload finds again; a folder is made on the storage page; a file goes up with
 * the picker, cut off once in the middle and resumed (HEAD asks the
 * offset), another by drag and drop, a third stopped by a page reload
 * and resumed when chosen again; directories made, renamed and deleted;
 * the first file downloads byte for byte, the folder as a tar; a folder
 * through the trash and back, then purged; a second session from the
 * launcher mounts the folder and its terminal reads the dropped file and
 * the sums of the uploaded ones; the terminal says when its session ends;
 * the folder is shared with the second user, who accepts the invitation
 * and sees its files (read only), the owner's share dialog lists them,
 * then they leave it; every page at
 * 1280x800 and 390x844; no errors in the console. */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  START_TIMEOUT_MS,
  UI_TIMEOUT_MS,
  env,
  expectConsoleErrors,
  logIn,
  logOut,
  navigate,
  noConsoleErrors,
  runInTerminal,
  runSteps,
  screenshots,
  terminalLines,
  waitForTerminal,
} from './lib.mjs';

const FOLDER = 'webfiles';
const BIG_FILE_BYTES = 20 * 2 ** 20 + 12345; /* three chunks of tus-upload.js, the last one short */
const DROPPED_TEXT = 'hello from a drop';

const RESUMED_FILE_BYTES = 12 * 2 ** 20; /* two chunks */

const scratch = mkdtempSync(path.join(tmpdir(), 'tessera-browser-'));
const bigFile = path.join(scratch, 'big.bin');
const resumedFile = path.join(scratch, 'resumed.bin');
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/* ---- sessions and the terminal ---- */

async function launch(page, name, { folder = null } = {}) {
  await navigate(page, 'Launch', 'Launch a session');
  await page.getByRole('combobox', { name: 'Version' }).selectOption({ index: 0 });
  await page.getByRole('spinbutton', { name: 'CPU' }).fill('0.5');
  await page.getByRole('spinbutton', { name: 'Memory' }).fill('0.25');
  await page.getByRole('spinbutton', { name: 'Memory' }).press('Tab');
  if (folder) await page.getByRole('checkbox', { name: new RegExp(`^${folder}`) }).check();
  await page.getByLabel('Name (optional)').fill(name);
  await page.getByRole('button', { name: 'Launch', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Sessions' }).waitFor({ timeout: UI_TIMEOUT_MS });
  await page.locator(`tr[data-session="${name}"][data-status="RUNNING"]`).waitFor({ timeout: START_TIMEOUT_MS });
}

/* ---- storage ---- */

async function openFolder(page, name) {
  await navigate(page, 'Storage', 'Storage');
  await page.locator(`tr[data-folder="${name}"]`).getByRole('link', { name }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor({ timeout: UI_TIMEOUT_MS });
}

async function confirm(page, title, button) {
  const dialog = page.getByRole('dialog', { name: title });
  await dialog.getByRole('button', { name: button }).click();
  await dialog.waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
}

async function prompt(page, title, value, button) {
  const dialog = page.getByRole('dialog', { name: title });
  await dialog.getByRole('textbox').fill(value);
  await dialog.getByRole('button', { name: button }).click();
  await dialog.waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
}

const fileRow = (page, name) => page.locator(`tr[data-file="${name}"]`);
const upload = (page, name) => page.locator(`li[data-upload="${FOLDER}/${name}"]`);

/* ---- the steps ---- */

const steps = [
  [
    'the admin logs in and launches a busybox session',
    async (page) => {
      await page.goto(env('TESSERA_URL'));
      await logIn(page, env('TESSERA_EMAIL'), env('TESSERA_PASSWORD'));
      await page.getByRole('heading', { level: 1, name: 'Summary' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await launch(page, 'webterm');
    },
  ],
  [
    'the terminal opens from the session list and echoes hello',
    async (page) => {
      await page.getByRole('link', { name: 'Open a terminal in session webterm' }).click();
      await page.getByRole('heading', { level: 1, name: /Terminal/ }).waitFor({ timeout: UI_TIMEOUT_MS });
      await waitForTerminal(page);
      await runInTerminal(page, 'echo hello', /^hello$/);
      await screenshots(page, 'terminal');
    },
  ],
  [
    'Ctrl+] leaves the terminal for the keyboard',
    async (page) => {
      await page.locator('.terminal-frame').click();
      await page.keyboard.press('Control+BracketRight');
      const focused = await page.evaluate(() => document.activeElement?.textContent?.trim());
      if (focused !== 'Sessions') throw new Error(`the focus went to '${focused}'`);
    },
  ],
  [
    'the terminal follows the window size',
    async (page) => {
      const cols = async (mark) =>
        Number((await runInTerminal(page, `echo ${mark}-$(stty size)`, new RegExp(`^${mark}-\\d+ \\d+$`))).split(' ')[1]);
      const wide = await cols('wide');
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(300);
      const narrow = await cols('narrow');
      await page.setViewportSize({ width: 1280, height: 800 });
      console.log(`# stty size: ${wide} columns at 1280 px, ${narrow} at 390 px`);
      if (!(narrow < 50 && wide > 100)) throw new Error(`${wide} columns at 1280 px, ${narrow} at 390 px`);
    },
  ],
  [
    'a page reload finds the same shell, with what it printed meanwhile',
    async (page) => {
      await runInTerminal(page, 'X=kept42; echo set-$X', /^set-kept42$/);
      await runInTerminal(page, '(sleep 2; echo away-$((40+2))) & echo started', /^started$/);
      await page.reload();
      await waitForTerminal(page);
      const said = await page.locator('.terminal-status').textContent();
      if (!/the same shell/.test(said)) throw new Error(`after the reload the page says '${said}'`);
      await runInTerminal(page, 'echo got-$X', /^got-kept42$/);
      await runInTerminal(page, 'sleep 2; echo slept', /^slept$/);
      if (!(await terminalLines(page)).some((l) => l.endsWith('away-42'))) throw new Error("the job's output is missing");
      const title = await page.title();
      if (!title.startsWith('webterm')) throw new Error(`the title is '${title}'`);
    },
  ],
  [
    'a connection cut under the terminal comes back by itself to the same shell, and the page says so',
    async (page) => {
      const sockets = [];
      await page.routeWebSocket(/\/stream\/session\/.*\/pty/, (ws) => {
        ws.connectToServer();
        sockets.push(ws);
      });
      await page.reload();
      await waitForTerminal(page);
      await runInTerminal(page, 'Y=cut7; echo before-cut-$Y', /^before-cut-cut7$/);
      await sockets.at(-1).close({ code: 4000, reason: 'cut by the test' });
      await waitForTerminal(page, 'waiting');
      const said = await page.locator('.terminal-status').textContent();
      console.log(`# while cut: ${said}`);
      if (!/Reconnecting in \d+ s/.test(said)) throw new Error(`the page says '${said}'`);
      await waitForTerminal(page);
      await runInTerminal(page, 'echo back-$((2+3))-$X-$Y', /^back-5-kept42-cut7$/);
      const lines = await terminalLines(page);
      const shown = lines.filter((l) => l === 'before-cut-cut7').length;
      if (shown !== 1) throw new Error(`before-cut-cut7 shows ${shown} times: ${lines.filter(Boolean).join(' | ')}`);
      await page.unrouteAll();
    },
  ],
  [
    'another tab has a shell of its own',
    async (page) => {
      const other = await page.context().newPage();
      await other.goto(page.url());
      await waitForTerminal(other);
      await runInTerminal(other, 'echo other-[$X]', /^other-\[\]$/);
      await other.close();
    },
  ],
  [
    'after exit, a new shell, which a reload finds again',
    async (page) => {
      await page.locator('.terminal-frame').click();
      await page.keyboard.type('exit');
      await page.keyboard.press('Enter');
      await waitForTerminal(page, 'ended');
      await page.getByRole('status').filter({ hasText: 'The shell ended.' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByRole('button', { name: 'Open a new shell' }).click();
      await waitForTerminal(page);
      await runInTerminal(page, 'Z=fresh1; echo new-[$X]-$Z', /^new-\[\]-fresh1$/);
      await page.reload();
      await waitForTerminal(page);
      await runInTerminal(page, 'echo again-$Z', /^again-fresh1$/);
    },
  ],
  [
    'a folder is made on the storage page',
    async (page) => {
      await navigate(page, 'Storage', 'Storage');
      await page.getByRole('button', { name: 'New folder' }).click();
      const dialog = page.getByRole('dialog', { name: 'New folder' });
      await dialog.getByLabel('Name').fill(FOLDER);
      await dialog.getByLabel('Usage').selectOption('data');
      await dialog.getByRole('button', { name: 'Create' }).click();
      await page.locator(`tr[data-folder="${FOLDER}"]`).waitFor({ timeout: UI_TIMEOUT_MS });
      await screenshots(page, 'storage');
    },
  ],
  [
    'a file uploaded with the picker, cut off in the middle, resumes from the offset HEAD gives',
    async (page) => {
      writeFileSync(bigFile, randomBytes(BIG_FILE_BYTES));
      await openFolder(page, FOLDER);
      const seen = [];
      let patches = 0;
      await page.route('**/folders/_/upload?*', (route) => {
        const method = route.request().method();
        seen.push(method);
        if (method === 'PATCH' && ++patches === 2) return route.abort('connectionreset');
        return route.continue();
      });
      await expectConsoleErrors(/ERR_CONNECTION_RESET|ERR_FAILED/, async () => {
        await page.getByLabel('Files to upload').setInputFiles(bigFile);
        await upload(page, 'big.bin').and(page.locator('[data-state="retrying"]')).waitFor({ timeout: UI_TIMEOUT_MS });
        await screenshots(page, 'upload');
        await upload(page, 'big.bin').and(page.locator('[data-state="done"]')).waitFor({ timeout: START_TIMEOUT_MS });
      });
      await page.unrouteAll();
      console.log(`# the upload's requests: ${seen.join(' ')}`);
      const afterCut = seen.slice(seen.indexOf('PATCH') + 2);
      if (seen[0] !== 'POST' || afterCut[0] !== 'HEAD') throw new Error(`requests ${seen.join(' ')}: no HEAD after the cut`);
      await fileRow(page, 'big.bin').waitFor({ timeout: UI_TIMEOUT_MS });
    },
  ],
  [
    'a file dropped on the page uploads too',
    async (page) => {
      await page.locator('.drop-zone').evaluate((zone, text) => {
        const data = new DataTransfer();
        data.items.add(new File([`${text}\n`], 'dropped.txt', { type: 'text/plain' }));
        for (const type of ['dragenter', 'dragover', 'drop'])
          zone.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
      }, DROPPED_TEXT);
      await fileRow(page, 'dropped.txt').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByRole('button', { name: 'Clear finished' }).click();
      await screenshots(page, 'folder');
    },
  ],
  [
    'an upload a page reload stopped goes on from where it was when its file is chosen again',
    async (page) => {
      writeFileSync(resumedFile, randomBytes(RESUMED_FILE_BYTES));
      let patches = 0;
      await page.route('**/folders/_/upload?*', (route) =>
        route.request().method() === 'PATCH' && ++patches > 1 ? route.abort('connectionreset') : route.continue(),
      );
      await expectConsoleErrors(/ERR_CONNECTION_RESET|ERR_FAILED/, async () => {
        await page.getByLabel('Files to upload').setInputFiles(resumedFile);
        await upload(page, 'resumed.bin').and(page.locator('[data-state="retrying"]')).waitFor({ timeout: UI_TIMEOUT_MS });
        await page.reload();
      });
      await page.unrouteAll();
      const entry = page.locator(`li[data-interrupted="${FOLDER}/resumed.bin"]`);
      await entry.filter({ hasText: '8 MiB of 12 MiB' }).waitFor({ timeout: UI_TIMEOUT_MS });
      const offsets = [];
      page.on('response', (r) => r.request().method() === 'POST' && r.url().includes('/folders/_/upload?') &&
        offsets.push(r.headers()['upload-offset']));
      const [chooser] = await Promise.all([
        page.waitForEvent('filechooser'),
        page.getByRole('button', { name: `Resume ${FOLDER}/resumed.bin: choose the file again` }).click(),
      ]);
      await chooser.setFiles(resumedFile);
      await upload(page, 'resumed.bin').and(page.locator('[data-state="done"]')).waitFor({ timeout: START_TIMEOUT_MS });
      await fileRow(page, 'resumed.bin').waitFor({ timeout: UI_TIMEOUT_MS });
      if (offsets[0] !== String(8 * 2 ** 20)) throw new Error(`the upload started again at ${offsets[0]}, not at 8 MiB`);
      await entry.waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
    },
  ],
  [
    'directories are made, opened, renamed and deleted',
    async (page) => {
      await page.getByRole('button', { name: 'New directory' }).click();
      await prompt(page, 'New directory', 'docs', 'Create');
      await fileRow(page, 'docs').getByRole('link', { name: 'docs/' }).click();
      await page.getByRole('heading', { level: 1, name: 'docs' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByText('This directory is empty.').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByRole('navigation', { name: 'Path' }).getByRole('link', { name: FOLDER }).click();
      await page.getByRole('button', { name: 'Rename docs' }).click();
      await prompt(page, 'Rename docs', 'notes', 'Rename');
      await fileRow(page, 'notes').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByRole('button', { name: 'Delete notes' }).click();
      await confirm(page, 'Delete notes?', 'Delete');
      await fileRow(page, 'notes').waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
    },
  ],
  [
    'the uploaded file downloads byte for byte, the folder as a tar',
    async (page) => {
      const [download] = await Promise.all([
        page.waitForEvent('download', { timeout: UI_TIMEOUT_MS }),
        page.getByRole('button', { name: 'Download big.bin' }).click(),
      ]);
      if (download.suggestedFilename() !== 'big.bin') throw new Error(`downloaded as ${download.suggestedFilename()}`);
      const got = readFileSync(await download.path());
      if (sha256(got) !== sha256(readFileSync(bigFile)))
        throw new Error(`${got.length} bytes downloaded, not the ${BIG_FILE_BYTES} uploaded`);
      const [tar] = await Promise.all([
        page.waitForEvent('download', { timeout: UI_TIMEOUT_MS }),
        page.getByRole('button', { name: 'Download folder' }).click(),
      ]);
      const archive = readFileSync(await tar.path());
      if (tar.suggestedFilename() !== `${FOLDER}.tar` || !archive.includes(got.subarray(0, 4096)))
        throw new Error(`the folder came as ${tar.suggestedFilename()}, ${archive.length} bytes without big.bin`);
    },
  ],
  [
    'a folder goes to the trash, comes back, and is purged',
    async (page) => {
      await navigate(page, 'Storage', 'Storage');
      await page.getByRole('button', { name: 'New folder' }).click();
      await page.getByRole('dialog', { name: 'New folder' }).getByLabel('Name').fill('webtrash');
      await page.getByRole('dialog', { name: 'New folder' }).getByRole('button', { name: 'Create' }).click();
      await page.getByRole('button', { name: 'Move webtrash to the trash' }).click();
      await confirm(page, 'Move webtrash to the trash?', 'Move to trash');
      await page.locator('tr[data-folder="webtrash"]').waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
      await page.getByRole('button', { name: 'Trash', exact: true }).click();
      await page.getByRole('button', { name: 'Restore webtrash' }).click();
      await page.locator('tr[data-folder="webtrash"]').waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
      await page.getByRole('button', { name: 'Folders', exact: true }).click();
      await page.getByRole('button', { name: 'Move webtrash to the trash' }).click();
      await confirm(page, 'Move webtrash to the trash?', 'Move to trash');
      await page.getByRole('button', { name: 'Trash', exact: true }).click();
      await page.getByRole('button', { name: 'Delete webtrash for good' }).click();
      await confirm(page, 'Delete webtrash for good?', 'Delete for good');
      await page.getByText('The trash is empty.').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByRole('button', { name: 'Folders', exact: true }).click();
    },
  ],
  [
    'a session from the launcher mounts the folder, and its terminal reads the files',
    async (page) => {
      await launch(page, 'webmount', { folder: FOLDER });
      await page.getByRole('link', { name: 'Open a terminal in session webmount' }).click();
      await waitForTerminal(page);
      await runInTerminal(page, `cat /home/work/${FOLDER}/dropped.txt`, new RegExp(`^${DROPPED_TEXT}$`));
      for (const file of [bigFile, resumedFile]) {
        const name = path.basename(file), want = sha256(readFileSync(file));
        const line = await runInTerminal(page, `sha256sum /home/work/${FOLDER}/${name}`, new RegExp(`^[0-9a-f]{64} .*${name}$`));
        if (!line.startsWith(want)) throw new Error(`${name} in the session: ${line}, not ${want}`);
      }
    },
  ],
  [
    'the terminal says when its session ends',
    async (page) => {
      const other = await page.context().newPage();
      await other.goto(`${env('TESSERA_URL')}/#/sessions`);
      await other.getByRole('button', { name: 'Delete session webmount' }).click();
      await other.getByRole('dialog', { name: 'Delete session webmount?' }).getByRole('button', { name: 'Delete' }).click();
      await waitForTerminal(page, 'ended', START_TIMEOUT_MS);
      console.log(`# ${await page.locator('.terminal-status').textContent()}`);
      await page.getByRole('status').filter({ hasText: /The session is (TERMINATED|TERMINATING)/ }).waitFor({ timeout: UI_TIMEOUT_MS });
      await other.close();
    },
  ],
  [
    'the admin shares the folder with a second user',
    async (page) => {
      await navigate(page, 'Storage', 'Storage');
      await page.getByRole('button', { name: `Share ${FOLDER}` }).click();
      const dialog = page.getByRole('dialog', { name: `Share ${FOLDER}` });
      await dialog.getByLabel('Emails', { exact: true }).fill(env('TESSERA_USER2_EMAIL'));
      await dialog.getByLabel('Permission').selectOption('ro');
      await dialog.getByRole('button', { name: 'Invite' }).click();
      await dialog.getByRole('status').filter({ hasText: 'Invited' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await screenshots(page, 'share');
      await dialog.getByRole('button', { name: 'Close' }).click();
    },
  ],
  [
    'the second user accepts the invitation, reads the folder, and leaves it',
    async (page) => {
      await logOut(page, env('TESSERA_EMAIL'));
      await logIn(page, env('TESSERA_USER2_EMAIL'), env('TESSERA_USER2_PASSWORD'));
      await navigate(page, 'Storage', 'Storage');
      await page.locator(`[data-invitation="${FOLDER}"]`).waitFor({ timeout: UI_TIMEOUT_MS });
      await screenshots(page, 'invitations');
      await page.getByRole('button', { name: `Accept the invitation to ${FOLDER}` }).click();
      const row = page.locator(`tr[data-folder="${FOLDER}"]`);
      await row.filter({ hasText: 'Shared by' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await openFolder(page, FOLDER);
      await fileRow(page, 'dropped.txt').waitFor({ timeout: UI_TIMEOUT_MS });
      if (await page.getByRole('button', { name: 'Choose files…' }).count())
        throw new Error('a read-only folder offers uploads');
      // the owner's share dialog now lists who uses the folder
      await logOut(page, env('TESSERA_USER2_EMAIL'));
      await logIn(page, env('TESSERA_EMAIL'), env('TESSERA_PASSWORD'));
      await navigate(page, 'Storage', 'Storage');
      await page.getByRole('button', { name: `Share ${FOLDER}` }).click();
      const dialog = page.getByRole('dialog', { name: `Share ${FOLDER}` });
      await dialog.getByRole('listitem').filter({ hasText: `${env('TESSERA_USER2_EMAIL')} (ro)` })
        .waitFor({ timeout: UI_TIMEOUT_MS });
      await dialog.getByRole('button', { name: 'Close' }).click();
      await logOut(page, env('TESSERA_EMAIL'));
      await logIn(page, env('TESSERA_USER2_EMAIL'), env('TESSERA_USER2_PASSWORD'));
      await navigate(page, 'Storage', 'Storage');
      await page.getByRole('button', { name: `Leave ${FOLDER}` }).click();
      await confirm(page, `Leave ${FOLDER}?`, 'Leave');
      await page.getByText('You have no folders yet.').waitFor({ timeout: UI_TIMEOUT_MS });
      await logOut(page, env('TESSERA_USER2_EMAIL'));
    },
  ],
  noConsoleErrors,
];

runSteps(steps);
