/**
 * A check's log is written only as a file of its own: a link planted in its place (or as the checks folder) is
 * refused, not followed; the file it points to keeps its content, the check is not run, and the failure says what
 * was in the way and where. Real files, real /bin/sh, no sandbox.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MaestroError } from '../core/errors.js';
import { removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { runCheck } from './checks.js';

afterEach(() => removeTempDirs());

const TIMEOUT_MS = 30_000;

function folders() {
  const root = tempDir('maestro-checks-');
  const worktree = join(root, 'worktree');
  const logDir = join(root, 'run', 'checks');
  mkdirSync(worktree);
  mkdirSync(logDir, { recursive: true });
  // What the check leaves behind when it runs at all.
  const ran = join(root, 'ran');
  return { root, worktree, logDir, ran, check: { name: 'test', command: `echo ran > ${ran}; echo checked` } };
}

async function refusal(p: Promise<unknown>): Promise<MaestroError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(MaestroError);
  return err as MaestroError;
}

describe('runCheck and its log', () => {
  it('a link in the log\'s place is refused, not followed: its target keeps its content, the check is not run, the error names both', async () => {
    const f = folders();
    const precious = join(f.root, 'precious.txt');
    writeFileSync(precious, 'keep me\n');
    const logPath = join(f.logDir, 'test.log');
    symlinkSync(precious, logPath);

    const err = await refusal(runCheck(f.check, f.worktree, f.logDir, TIMEOUT_MS, new AbortController().signal));
    expect(err.code).toBe('CHECK_FAILED');
    expect(err.message).toContain(`check test was not run: its log ${logPath} cannot be written: ${logPath} is a symbolic link (to ${precious})`);
    expect(err.message).toContain('not followed');
    expect(err.details).toMatchObject({ check: 'test', logPath });
    expect(readFileSync(precious, 'utf8')).toBe('keep me\n');
    expect(existsSync(f.ran)).toBe(false);
  });

  it('a checks folder that is a link is refused as well: nothing is written where it leads', async () => {
    const f = folders();
    const elsewhere = join(f.root, 'elsewhere');
    mkdirSync(elsewhere);
    const linked = join(f.root, 'run', 'linked-checks');
    symlinkSync(elsewhere, linked);

    const err = await refusal(runCheck(f.check, f.worktree, linked, TIMEOUT_MS, new AbortController().signal));
    expect(err.message).toContain(`${linked} is a symbolic link (to ${elsewhere})`);
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(existsSync(f.ran)).toBe(false);
  });

  it('a FIFO in the log\'s place is refused at once, not waited on', async () => {
    const f = folders();
    execFileSync('mkfifo', [join(f.logDir, 'test.log')]);
    const err = await refusal(runCheck(f.check, f.worktree, f.logDir, TIMEOUT_MS, new AbortController().signal));
    expect(err.message).toContain('is a FIFO, not a regular file: nothing was written to it');
    expect(existsSync(f.ran)).toBe(false);
  });

  it('an ordinary log is emptied and written afresh, and its tail read back', async () => {
    const f = folders();
    writeFileSync(join(f.logDir, 'test.log'), 'an older, longer log\n'.repeat(100));
    const outcome = await runCheck({ name: 'test', command: 'echo one; echo two; exit 3' }, f.worktree, f.logDir, TIMEOUT_MS, new AbortController().signal);
    expect(outcome).toMatchObject({ name: 'test', ok: false, exitCode: 3, logPath: join(f.logDir, 'test.log') });
    expect(readFileSync(outcome.logPath, 'utf8')).toBe('$ echo one; echo two; exit 3\none\ntwo\n');
    expect(outcome.tail).toBe('$ echo one; echo two; exit 3\none\ntwo\n');
  });
});
