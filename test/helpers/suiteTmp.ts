/**
 * The run's own temporary folder: every test, and every process the tests start, makes its temporary files
 * under it (TMPDIR), and it goes when the run ends. A test that does not clean up after itself, a worker killed
 * mid-run or a suite stopped by its timeout then leaves nothing in the system's temporary folder (a full run
 * used to leave about 120 folders there). A run killed from outside leaves its folder; the next run removes it.
 * What runs coordinate through stays in the system's folder (sharedTmp): the test PostgreSQL clusters, which the
 * next run stops when their run was killed (postgres.ts), and the network namespaces' subnet locks (netns.ts).
 */
import { spawnSync } from 'node:child_process';
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

/**
 * Removes the folders runs killed from outside left (orphanedFolders). A run killed in the faults suite leaves its
 * tmpfs mounted in its folder, which no removal gets past (EBUSY): such mounts are detached first. A folder that
 * still does not go is said, and left: the run goes on in a folder of its own.
 */
export function removeOrphanedFolders(prefix: string): void {
  for (const dir of orphanedFolders(prefix)) {
    for (const point of mountsUnder(dir)) spawnSync('umount', ['-l', point], { stdio: 'ignore' });
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      process.stderr.write(`maestro tests: could not remove ${dir}, left by a run killed from outside: ${(err as Error).message}\n`);
    }
  }
}

/** Mount points inside `dir` (Linux; none where /proc/self/mounts cannot be read). */
function mountsUnder(dir: string): string[] {
  let table: string;
  try {
    table = readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return [];
  }
  // Fields are space-separated, a space in a path written \040.
  const points = table.split('\n').map((line) => (line.split(' ')[1] ?? '').replace(/\\040/g, ' '));
  return points.filter((p) => p.startsWith(`${dir}/`)).sort((a, b) => b.length - a.length);
}

/** Creates the folder, points TMPDIR at it (the test files' processes inherit it), and returns its removal. */
export function suiteTmp(): () => void {
  const parent = sharedTmp();
  removeOrphanedFolders(PREFIX);
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
