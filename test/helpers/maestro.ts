/** How a test starts the `maestro` CLI as a process: from the run's build (globalSetup.ts), else the sources through tsx. */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The Node arguments before the CLI's own: `spawn(process.execPath, [...maestroArgs(), 'serve', …])`. */
export function maestroArgs(): string[] {
  const main = inject('buildMain');
  return main ? [main] : ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts')];
}
