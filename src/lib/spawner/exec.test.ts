import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/db.js';
import { poll } from '../../../test/helpers/wait.js';
import { execOnce, type ExecRequest } from './exec.js';

const sh = (script: string, more: Partial<ExecRequest> = {}): ExecRequest => ({
  file: 'sh',
  args: ['-c', script],
  cwd: tempDir('maestro-exec-'),
  env: { PATH: process.env.PATH },
  maxBuffer: 1024 * 1024,
  ...more,
});

/** Gone, or a zombie no one has reaped yet (this container's first process may not reap). */
function ended(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  try {
    return readFileSync(stat, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}

describe('execOnce', () => {
  it('answers with the output and the exit code, and ENOENT for a missing binary', async () => {
    await expect(execOnce(sh('echo out; echo err >&2; exit 3'))).resolves.toEqual({ stdout: 'out\n', stderr: 'err\n', code: 3, signal: null });
    await expect(execOnce(sh('cat', { input: 'given' }))).resolves.toMatchObject({ stdout: 'given', code: 0 });
    await expect(execOnce({ ...sh(''), file: 'no-such-binary-here' })).resolves.toMatchObject({ code: null, errno: 'ENOENT' });
  });

  it('stops a command past maxBuffer', async () => {
    const out = await execOnce(sh('yes', { maxBuffer: 10_000 }));
    expect(out).toMatchObject({ errno: 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER', signal: 'SIGKILL' });
  });

  it('stops a command that says nothing for stallMs, with the processes it started', async () => {
    const dir = tempDir('maestro-exec-');
    const pidFile = join(dir, 'child.pid');
    // The connection is held by a child (git's ssh or git-remote-https): stopping git alone would leave it.
    const out = await execOnce(sh(`sleep 600 & echo $! > ${pidFile}; wait`, { stallMs: 300 }));
    expect(out).toMatchObject({ code: null, signal: 'SIGKILL', errno: 'STALLED', message: 'nothing from it for 0.3 s, stopped' });
    const child = Number(readFileSync(pidFile, 'utf8'));
    await poll(() => ended(child), 'the stalled command’s own child ended', 10_000);
  });

  it('lets a command that keeps writing run past stallMs, however long it takes', async () => {
    // 30 lines 0.1 s apart: three times stallMs in all, never a second without a word.
    const out = await execOnce(sh('i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo $i >&2; sleep 0.1; done; echo done', { stallMs: 1_000 }));
    expect(out).toMatchObject({ stdout: 'done\n', code: 0, signal: null });
    expect(out.stderr.split('\n').filter(Boolean)).toHaveLength(30);
  });
});
