/**
 * PATH as a person's shell has it, when Maestro runs under `npm start`. npm puts `node_modules/.bin` of the
 * package and of every folder above it first, and Maestro's own holds the agent CLIs its tests drive (codex,
 * gemini) and its tools (tsc, vitest, vite). From a clone, the board then listed agents that `maestro doctor`
 * in a shell called not installed, and a run of codex would have used Maestro's test copy; a project's checks
 * that call `vitest` or `tsc` would have run Maestro's, not the project's own.
 */
import { delimiter, dirname, join, resolve } from 'node:path';

/** The npm script that starts the daemon in the README's quick start. */
const NPM_START = 'start';

/**
 * `env.PATH` without the folders npm added for the package at `root`, when an npm `start` script runs this
 * process; undefined otherwise (PATH stays as it is). Every other entry stays, in its order.
 */
export function pathOutsideNpmStart(env: NodeJS.ProcessEnv, root: string): string | undefined {
  if (env.npm_lifecycle_event !== NPM_START || env.PATH === undefined) return undefined;
  const added = new Set<string>();
  for (let dir = resolve(root); ; dir = dirname(dir)) {
    added.add(join(dir, 'node_modules', '.bin'));
    if (dirname(dir) === dir) break;
  }
  return env.PATH.split(delimiter).filter((entry) => !added.has(entry)).join(delimiter);
}
