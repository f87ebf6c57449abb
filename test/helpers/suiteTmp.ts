/**
 * The run's own temporary folder: every test, and every process the tests start, makes its temporary files
 * under it (TMPDIR), and it goes when the run ends. A test that does not clean up after itself, a worker killed
 * mid-run or a suite stopped by its timeout then leaves nothing in the system's temporary folder (a full run
 * used to leave about 120 folders there). A run killed from outside leaves its folder; the next run removes it.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isPidAlive } from '../../src/lib/processes.js';

const PREFIX = 'maestro-suite-';

/** Creates the folder, points TMPDIR at it (the test files' processes inherit it), and returns its removal. */
export function suiteTmp(): () => void {
  const parent = tmpdir();
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(PREFIX)) continue;
    let owner = 0;
    try {
      owner = Number(readFileSync(join(parent, name, 'owner'), 'utf8'));
    } catch {
      continue; // being set up: not ours to judge
    }
    if (Number.isInteger(owner) && owner > 0 && !isPidAlive(owner)) rmSync(join(parent, name), { recursive: true, force: true });
  }
  const dir = mkdtempSync(join(parent, PREFIX));
  // As open as the system's own: the suites' PostgreSQL clusters run as the postgres user (as root, by runuser).
  chmodSync(dir, 0o1777);
  writeFileSync(join(dir, 'owner'), String(process.pid));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };
}
