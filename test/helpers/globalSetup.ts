/**
 * Once for the whole run: starts one real PostgreSQL cluster and provides its
 * URL to the suites (`inject('pgUrl')`), and compiles src/ (build.ts) for the
 * Maestro processes the suites start. With no PostgreSQL binaries on a
 * developer machine, the PostgreSQL suites skip and say so loudly; in CI
 * (CI=true) a missing PostgreSQL is a failure, never a silent skip. The run's
 * temporary files go in a folder of its own (suiteTmp.ts).
 */
import type { TestProject } from 'vitest/node';
import { buildForTests } from './build.js';
import { PG_MISSING, startPostgres } from './postgres.js';
import { suiteTmp } from './suiteTmp.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string | null;
    /** The compiled CLI entry (build.ts), or null to run the sources through tsx. */
    buildMain: string | null;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const cluster = await startPostgres();
  if (!cluster) {
    if (process.env.CI) throw new Error('CI must run the PostgreSQL suites, but initdb/pg_ctl were not found. .ci/run installs postgresql.');
    process.stderr.write(PG_MISSING);
  }
  project.provide('pgUrl', cluster?.url ?? null);
  // After the cluster (its orphan check reads the system's temporary folder): everything else makes its
  // temporary files in the run's own folder, removed at the end.
  const removeTmp = suiteTmp();
  // A worker or CLI started from the sources spends about 0.7 CPU s more loading TypeScript than a compiled
  // one; the suites start hundreds. The daemons the suites run in-process start theirs from here too
  // (MAESTRO_JS_ROOT, read by src/lib/processes.ts; the test files' processes inherit it).
  const build = buildForTests();
  project.provide('buildMain', build.main);
  process.env.MAESTRO_JS_ROOT = build.root;
  return () => {
    cluster?.stop();
    build.remove();
    removeTmp();
  };
}
