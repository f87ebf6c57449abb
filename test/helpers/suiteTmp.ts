/**
 * The run's own temporary folder: every test, and every process the tests start, makes its temporary files
 * under it (TMPDIR), and it goes when the run ends. A test that does not clean up after itself, a worker killed
 * mid-run or a suite stopped by its timeout then leaves nothing in the system's temporary folder (a full run
 * used to leave about 120 folders there). A run killed from outside leaves its folder; the next run removes it.
 * What runs coordinate through stays in the system's folder (sharedTmp): the test PostgreSQL clusters, which the
 * next run stops when their run was killed (postgres.ts), and the network namespaces' subnet locks (netns.ts).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isPidAlive } from '../../src/lib/processes.js';

const PREFIX = 'maestro-suite-';
/** The system's temporary folder, as it was before the run pointed TMPDIR at its own. */
const SHARED_ENV = 'MAESTRO_TEST_SHARED_TMP';

/** The temporary folder every run on this machine sees: for what runs coordinate through, and what a later run cleans up. */
export function sharedTmp(): string {
  return process.env[SHARED_ENV] ?? tmpdir();
}

/**
 * The folders in the shared temporary folder named `prefix…` whose `owner` file names a process that is gone (a run
 * killed from outside). One without an owner yet is being set up, or predates owners: not ours to judge.
 */
export function orphanedFolders(prefix: string): string[] {
  const parent = sharedTmp();
  return readdirSync(parent)
    .filter((name) => name.startsWith(prefix))
    .map((name) => join(parent, name))
    .filter((dir) => {
      let owner: number;
      try {
        owner = Number(readFileSync(join(dir, 'owner'), 'utf8'));
      } catch {
        return false;
      }
      return Number.isInteger(owner) && owner > 0 && !isPidAlive(owner);
    });
}

/** Creates the folder, points TMPDIR at it (the test files' processes inherit it), and returns its removal. */
export function suiteTmp(): () => void {
  const parent = sharedTmp();
  for (const dir of orphanedFolders(PREFIX)) rmSync(dir, { recursive: true, force: true });
  const dir = mkdtempSync(join(parent, PREFIX));
  writeFileSync(join(dir, 'owner'), String(process.pid));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  process.env[SHARED_ENV] = parent;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    delete process.env[SHARED_ENV];
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };
}
