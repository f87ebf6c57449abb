#!/usr/bin/env node
/**
 * Bundles the run worker (src/executor/worker.ts) into one file beside the compiled one:
 * `<out>/executor/worker.bundle.js`, which the daemon starts when it is there (nodeEntry,
 * src/lib/processes.ts). Node 20 has no compile cache, and a cold worker spent more on finding,
 * reading and linking its 170 modules (ours and zod's) than on anything it then ran: its start
 * took 0.19-0.22 CPU s compiled module by module, 0.13 s bundled, and 0.095 s once yaml and
 * better-sqlite3 were loaded on first use (a bare `node` takes 0.05 s). A run on a machine
 * running several at once (bench:multihost's first wave) starts that much sooner.
 *
 * The packages stay outside but zod: better-sqlite3 is native, the agent SDKs are loaded only
 * by the runs that use them, and each resolves from node_modules as before. The bundle sits at
 * the compiled worker's depth, so what a module finds from its own location (`../..`, the
 * package root) it finds from the bundle's too; what it finds deeper goes through nodeEntry.
 *
 *   node scripts/bundle.mjs dist        # after tsc: `npm run build` runs both, as the test build does
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Packages bundled into the worker: pure JavaScript, imported by every run, and many files each. */
const BUNDLED = new Set(['zod']);

const out = process.argv[2];
if (!out) {
  process.stderr.write('usage: node scripts/bundle.mjs <compiled src/ folder, e.g. dist>\n');
  process.exit(2);
}
const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
/**
 * zod's namespace re-exports every locale (`z.locales`, 360 KB of the bundle's 955 KB, parsed at every worker's
 * start); the worker uses none of them, and English, zod's default, it imports by itself. Here `locales` is
 * English alone.
 */
const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    const zod = `${sep}node_modules${sep}zod${sep}`;
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => (args.importer.includes(zod) ? { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-english' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'zod-english' }, (args) => ({ contents: `export { default as en } from ${JSON.stringify(args.path)};`, resolveDir: dirname(args.path) }));
  },
};
await build({
  entryPoints: [join(ROOT, 'src', 'executor', 'worker.ts')],
  outfile: join(resolve(out), 'executor', 'worker.bundle.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  external: Object.keys(dependencies).filter((name) => !BUNDLED.has(name)),
  plugins: [englishOnly],
  logLevel: 'warning',
});
