/**
 * Starts one real PostgreSQL cluster for the whole run and provides its URL to
 * the suites (`inject('pgUrl')`). With no PostgreSQL binaries on a developer
 * machine, the PostgreSQL suites skip and say so loudly; in CI (CI=true) a
 * missing PostgreSQL is a failure, never a silent skip.
 */
import type { TestProject } from 'vitest/node';
import { PG_MISSING, startPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string | null;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const cluster = await startPostgres();
  if (!cluster) {
    if (process.env.CI) throw new Error('CI must run the PostgreSQL suites, but initdb/pg_ctl were not found. .ci/run installs postgresql.');
    process.stderr.write(PG_MISSING);
  }
  project.provide('pgUrl', cluster?.url ?? null);
  return () => cluster?.stop();
}
