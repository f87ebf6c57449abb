/**
 * A test run killed from outside in the faults suite leaves its temporary folder with a tmpfs still mounted in it.
 * The next run removes that folder before it starts (suiteTmp): the mount is detached first, or the removal failed
 * with EBUSY and so did every run after it, before any test.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeOrphanedFolders, sharedTmp } from '../helpers/suiteTmp.js';
import { requireTmpfs } from './tmpfs.js';

const mountable = requireTmpfs('faults: a killed run\'s folder');

describe.skipIf(!mountable)("a killed run's temporary folder", () => {
  it('is removed by the next run, a tmpfs still mounted in it included', () => {
    const prefix = `maestro-orphan-test-${process.pid}-`;
    const dir = mkdtempSync(join(sharedTmp(), prefix));
    // Its owner, a process that has ended.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    writeFileSync(join(dir, 'owner'), gone);
    const mounted = mkdtempSync(join(dir, 'maestro-tmpfs-'));
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mounted]).status).toBe(0);
    writeFileSync(join(mounted, 'filler'), 'x');
    removeOrphanedFolders(prefix);
    expect(existsSync(dir)).toBe(false);
    expect(readFileSync('/proc/self/mounts', 'utf8')).not.toContain(mounted);
  });
});
