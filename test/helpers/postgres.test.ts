/**
 * The suites' PostgreSQL helper: a cluster whose owner is gone (a run killed
 * from outside) is stopped by the next start; one whose owner lives is not.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findPgBin, PG_MISSING, startPostgres, type PgCluster } from './postgres.js';

if (!findPgBin()) process.stderr.write(PG_MISSING);

/** Whether the process runs (a zombie, ended but not yet reaped, does not). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe.skipIf(!findPgBin())('throwaway PostgreSQL clusters', () => {
  it('the next start stops a cluster whose owner is gone and removes its folder; a live owner keeps its own', { timeout: 120_000 }, async () => {
    // The owner lives while its cluster starts (another start meanwhile, a second copy of the suite, must
    // leave it alone), then goes: as a run killed from outside would.
    const owner = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const orphan = (await startPostgres({ ownerPid: owner.pid }))!;
    const orphanPid = orphan.serverPid();
    expect(running(orphanPid)).toBe(true);
    await new Promise((resolve) => owner.once('exit', resolve).kill('SIGKILL'));
    let kept: PgCluster | null = null;
    let next: PgCluster | null = null;
    try {
      kept = (await startPostgres())!;
      expect(running(orphanPid)).toBe(false);
      expect(existsSync(orphan.dataDir)).toBe(false);
      next = (await startPostgres())!;
      expect(running(kept.serverPid())).toBe(true);
    } finally {
      orphan.stop();
      kept?.stop();
      next?.stop();
    }
  });
});
