/* build.mjs - bundle the web UI into the directory the manager serves.
 *
 *   node web/build.mjs --node-modules DIR --out DIR
 *
 * src/main.js and what it imports statically become app.js (an ES module,
 * minified); pages imported on demand become chunk-*.js files beside it;
 * src/app.css and its @imports become app.css; index.html is copied last,
 * so that its date says the build finished.  Each file but the source maps
 * gets a gzip twin (<file>.gz), which the manager sends to browsers that
 * take gzip.  Prints each file's gzip size
 * and the first load's compressed JavaScript (app.js, its static imports
 * and the pages a first visit shows: login and summary); a first load over
 * the budget fails the build.  The packages come from DIR (scripts/
 * web-deps.sh), never from a node_modules inside the repository. */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const FIRST_LOAD_BUDGET = 300 * 1024;
/* The pages a first visit loads besides app.js (see src/pages.js). */
const FIRST_VISIT_PAGES = ['src/summary-page.js'];

const webDir = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!['node-modules', 'out'].includes(key) || argv[i + 1] === undefined)
      throw new Error(`usage: node build.mjs --node-modules DIR --out DIR (bad argument '${argv[i]}')`);
    args[key] = path.resolve(argv[i + 1]);
  }
  if (!args['node-modules'] || !args.out)
    throw new Error('usage: node build.mjs --node-modules DIR --out DIR');
  return args;
}

/* Every output the entry needs before it runs: its static imports, transitively. */
function staticClosure(outputs, file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const imp of outputs[file]?.imports ?? [])
    if (imp.kind === 'import-statement') staticClosure(outputs, imp.path, seen);
  return seen;
}

function outputOf(outputs, source) {
  return Object.keys(outputs).find((o) => outputs[o].entryPoint === source);
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

function bundle(esbuild, nodeModules, out) {
  return esbuild.build({
    absWorkingDir: webDir,
    entryPoints: [
      { in: 'src/main.js', out: 'app' },
      { in: 'src/app.css', out: 'app' },
    ],
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    outdir: out,
    bundle: true,
    splitting: true,
    format: 'esm',
    target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
    minify: true,
    sourcemap: 'linked',
    legalComments: 'eof',
    nodePaths: [nodeModules],
    metafile: true,
    logLevel: 'warning',
  });
}

/* Prints the gzip size of each script and of the first load, writes them
 * to bundle-size.json; returns the first load's size. */
async function measure(outputs, out) {
  const sizes = {};
  for (const o of Object.keys(outputs).filter((o) => o.endsWith('.js')))
    sizes[o] = gzipSync(await readFile(path.resolve(webDir, o)), { level: 9 }).length;
  const firstLoad = staticClosure(outputs, outputOf(outputs, 'src/main.js'));
  for (const page of FIRST_VISIT_PAGES) staticClosure(outputs, outputOf(outputs, page), firstLoad);
  const sum = (files) => [...files].reduce((n, f) => n + (sizes[f] ?? 0), 0);
  const first = sum(firstLoad), all = sum(Object.keys(sizes));

  for (const [o, n] of Object.entries(sizes).sort((a, b) => b[1] - a[1]))
    console.log(`  WEB     ${path.basename(o).padEnd(28)} ${kb(n).padStart(9)} gzip`);
  console.log(`  WEB     first load ${kb(first)} of JavaScript gzip (budget ${kb(FIRST_LOAD_BUDGET)}), all ${kb(all)}`);
  const files = Object.fromEntries(Object.entries(sizes).map(([f, n]) => [path.basename(f), n]));
  await writeFile(path.join(out, 'bundle-size.json'),
                  JSON.stringify({ first_load_gzip: first, all_gzip: all, files }, null, 1) + '\n');
  return first;
}

/* <file>.gz beside every file but source maps and the size report. */
async function writeGzipTwins(out) {
  for (const f of await readdir(out))
    if (!/\.(map|gz)$/.test(f) && f !== 'bundle-size.json')
      await writeFile(path.join(out, `${f}.gz`), gzipSync(await readFile(path.join(out, f)), { level: 9 }));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const require = createRequire(path.join(args['node-modules'], 'noop.js'));
  const out = args.out;

  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const result = await bundle(require('esbuild'), args['node-modules'], out);
  const first = await measure(result.metafile.outputs, out);
  if (first > FIRST_LOAD_BUDGET)
    throw new Error(`the first load is ${kb(first)} of compressed JavaScript, over the ${kb(FIRST_LOAD_BUDGET)} budget`);
  const html = await readFile(path.join(webDir, 'index.html'));
  await writeFile(path.join(out, 'index.html.gz'), gzipSync(html, { level: 9 }));
  await writeGzipTwins(out);
  await writeFile(path.join(out, 'index.html'), html);
}

main().catch((e) => {
  console.error(`web/build.mjs: ${e.message}`);
  process.exit(1);
});
