/**
 * The sandbox suites need bubblewrap that can start a sandbox here. On a developer machine without it they
 * skip and say so loudly; in CI (CI=true) it is a failure, never a silent skip: .ci/run installs bubblewrap.
 */
import { sandboxProblem } from '../../src/lib/sandbox.js';

/** Why bwrap cannot run a sandbox here, or null when it can. Throws in CI. */
export function bwrapUnusable(): string | null {
  const why = sandboxProblem(process.env);
  if (!why) return null;
  if (process.env.CI) throw new Error(`CI must run the agent sandbox suites, but ${why}`);
  process.stderr.write(`\n*** bubblewrap cannot start a sandbox here: the agent sandbox suites are SKIPPED on this machine. ***\n*** ${why}\n*** Install the bubblewrap package (CI does, in .ci/run) to run them.\n`);
  return why;
}
