/**
 * Compiles src/ to JavaScript once, for the suites and benchmarks that start
 * Maestro processes: a compiled process starts in about a third of the CPU of
 * one loading TypeScript through tsx (`node --import tsx src/cli/main.ts
 * --version`: 1.0 CPU s against 0.3). Emit only (`--noCheck`): the typecheck
 * is `npm run lint`'s job. The output goes in a directory right under the
 * project root (as dist/ would), so the compiled files resolve their
 * dependencies from the project's node_modules and find web/ where
 * src/api/web.ts looks; it is removed after.
 *
 * The test run compiles once in its global setup (globalSetup.ts) and every
 * suite starts its CLI and daemons from that build (`maestroArgs`, maestro.ts);
 * MAESTRO_JS_ROOT points the daemons the suites run in-process at it for
 * their workers and helpers (src/lib/processes.ts). The run worker is bundled as `npm run build`
 * bundles it (scripts/bundle.mjs), so the suites run the file the daemon starts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Build {
  /** The compiled src/ (what dist/ holds after `npm run build`). */
  root: string;
  /** The compiled CLI entry (`node <main> serve …`). */
  main: string;
  remove(): void;
}

export function buildForTests(): Build {
  const outDir = mkdtempSync(join(ROOT, '.test-build-'));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  // Its own build info: dist/.tsbuildinfo describes dist/, and `npm start` trusts it to skip compiling.
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', outDir, '--tsBuildInfoFile', join(outDir, '.tsbuildinfo'), '--noCheck', '--sourceMap', 'false'], { cwd: ROOT, stdio: 'pipe' });
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'bundle.mjs'), outDir], { cwd: ROOT, stdio: 'pipe' });
  return { root: outDir, main: join(outDir, 'cli', 'main.js'), remove: () => rmSync(outDir, { recursive: true, force: true }) };
}
