/**
 * How a suite starts a TypeScript script of its own (a driver it runs dozens
 * of times: the crash points' driver, the claimers, the promote workers): as
 * one JavaScript file bundled once per test run beside the run's build
 * (build.ts, globalSetup.ts), its packages left to node_modules. Loading it
 * through tsx cost each start about 0.7 CPU s more, and the crash-points suite
 * starts ~100. Without the run's build (a script started outside Vitest),
 * through tsx.
 */
import { buildSync } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The Node arguments that run `file`: `spawn(process.execPath, [...scriptArgs(file), …args])`. */
export function scriptArgs(file: string): string[] {
  const root = process.env.MAESTRO_JS_ROOT;
  if (!root) return ['--import', 'tsx', file];
  const out = join(root, 'scripts', `${basename(file, '.ts')}-${createHash('sha1').update(file).digest('hex').slice(0, 8)}.mjs`);
  if (!existsSync(out)) {
    const [bundle] = buildSync({ entryPoints: [file], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', write: false, logLevel: 'silent' }).outputFiles;
    // Test files run in parallel processes: each writes its own file and renames it into place whole.
    mkdirSync(join(root, 'scripts'), { recursive: true });
    const tmp = `${out}.${process.pid}.tmp`;
    writeFileSync(tmp, bundle!.contents);
    renameSync(tmp, out);
  }
  return [out];
}
