import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hookCancelPayload } from './contract.js';
import { HookRunner } from './runner.js';
import { budget } from '../../test/helpers/budget.js';
import { poll } from '../../test/helpers/wait.js';
import { bwrapUnusable } from '../../test/helpers/bwrap.js';

const dirs: string[] = [];
function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'maestro-hooks-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function write(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  if (path.endsWith('.sh')) chmodSync(path, 0o755);
  return path;
}

const task = { id: 'T1', title: 'Add login page', status: 'queued' };

/** A process is gone once it no longer exists or is a zombie nobody reaped yet. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** True once the process is gone; a process still alive after a generous wait fails the test. */
async function eventuallyDead(pid: number): Promise<boolean> {
  return poll(() => !alive(pid), `process ${pid} to end`, 30_000);
}

describe('HookRunner', () => {
  it('lists the six hook names of the contract', () => {
    expect(HookRunner.NAMES).toEqual(['before:task:claim', 'after:planner:output', 'before:execute', 'before:merge', 'on:conflict', 'before:exec-review']);
  });

  it('continues when no hook is defined, keeping the plan and choosing auto on conflict', async () => {
    const runner = new HookRunner({ projectRoot: temp(), globalHome: temp() });
    expect(await runner.run('before:execute', { task, job: {} })).toEqual({ outcome: 'continue' });
    expect(await runner.run('after:planner:output', { task, plan: 'step 1' })).toEqual({ outcome: 'continue', value: 'step 1' });
    expect(await runner.run('on:conflict', { task, files: ['a.ts'] })).toEqual({ outcome: 'continue', value: 'auto' });
  });

  it('cancels with the reason a module hook gives, and passes the task in', async () => {
    const repo = temp();
    write(join(repo, '.maestro/hooks.mjs'), `export default { 'before:task:claim': async (task) => task.title.includes('login') ? { cancel: 'no auth work this week: ' + task.id } : undefined };`);
    const runner = new HookRunner({ projectRoot: repo, globalHome: null });
    const out = await runner.run('before:task:claim', { task });
    expect(out).toMatchObject({ outcome: 'cancel', reason: 'no auth work this week: T1', source: join(repo, '.maestro/hooks.mjs') });
    expect(out.failed).toBeUndefined();
    expect(hookCancelPayload('before:task:claim', out)).toEqual({ hook: 'before:task:claim', reason: 'no auth work this week: T1', source: join(repo, '.maestro/hooks.mjs'), failed: false });
    expect(await runner.run('before:task:claim', { task: { ...task, title: 'Fix footer' } })).toMatchObject({ outcome: 'continue' });
  });

  it('runs a module hook where the daemon’s environment is out of reach, also through /proc/self/environ', async () => {
    const repo = temp();
    const seen = join(repo, 'seen.txt');
    write(join(repo, '.maestro/hooks.mjs'), `import { readFileSync, writeFileSync } from 'node:fs';
export default { 'before:execute': () => { writeFileSync(${JSON.stringify(seen)}, readFileSync('/proc/self/environ', 'utf8') + '\\n' + process.pid); } };`);
    process.env.MAESTRO_TEST_DAEMON_SECRET = 'daemon-only-value';
    try {
      const runner = new HookRunner({ projectRoot: repo, globalHome: null, env: { PATH: process.env.PATH, ALLOWED: 'yes' } });
      expect(await runner.run('before:execute', { task, job: {} })).toMatchObject({ outcome: 'continue' });
    } finally {
      delete process.env.MAESTRO_TEST_DAEMON_SECRET;
    }
    const [environ, pid] = readFileSync(seen, 'utf8').split('\n');
    expect(environ).toContain('ALLOWED=yes');
    expect(environ).not.toContain('daemon-only-value');
    expect(Number(pid)).not.toBe(process.pid);
  });

  it('lets a TypeScript after:planner:output hook rewrite the plan', async () => {
    const repo = temp();
    write(
      join(repo, '.maestro/hooks.ts'),
      `interface Task { title: string }
       export default {
         'after:planner:output': async (task: Task, plan: string): Promise<string> => plan + '\\n- [ ] update the changelog for ' + task.title,
       };`,
    );
    const out = await new HookRunner({ projectRoot: repo, globalHome: null }).run('after:planner:output', { task, plan: '- [ ] build it' });
    expect(out).toMatchObject({ outcome: 'continue', value: '- [ ] build it\n- [ ] update the changelog for Add login page' });
  });

  it('accepts named exports keyed by hook name', async () => {
    const repo = temp();
    write(join(repo, '.maestro/hooks.mjs'), `const manual = () => 'manual'; export { manual as 'on:conflict' }; export const helper = 1;`);
    expect(await new HookRunner({ projectRoot: repo, globalHome: null }).run('on:conflict', { task, files: ['x'] })).toMatchObject({ outcome: 'continue', value: 'manual' });
  });

  it('prefers a project hook over a global one, hook by hook', async () => {
    const repo = temp();
    const home = temp();
    write(join(home, 'hooks.mjs'), `export default { 'before:execute': () => ({ cancel: 'global says no' }), 'before:merge': () => ({ cancel: 'global merge freeze' }) };`);
    write(join(repo, '.maestro/hooks.mjs'), `export default { 'before:execute': () => undefined };`);
    const runner = new HookRunner({ projectRoot: repo, globalHome: home });
    expect(await runner.run('before:execute', { task, job: {} })).toMatchObject({ outcome: 'continue', source: join(repo, '.maestro/hooks.mjs') });
    expect(await runner.run('before:merge', { task, branch: 'maestro/T1' })).toMatchObject({ outcome: 'cancel', reason: 'global merge freeze', source: join(home, 'hooks.mjs') });
    // Without the project, the global hook answers.
    expect(await new HookRunner({ projectRoot: null, globalHome: home }).run('before:execute', { task, job: {} })).toMatchObject({ outcome: 'cancel', reason: 'global says no' });
  });

  it('prefers a project shell script over a global module', async () => {
    const repo = temp();
    const home = temp();
    write(join(home, 'hooks.mjs'), `export default { 'before:merge': () => ({ cancel: 'global' }) };`);
    write(join(repo, '.maestro/hooks/before-merge.sh'), `exit 0\n`);
    expect(await new HookRunner({ projectRoot: repo, globalHome: home }).run('before:merge', { task, branch: 'b' })).toMatchObject({ outcome: 'continue', source: join(repo, '.maestro/hooks/before-merge.sh') });
  });

  it('runs a shell hook with the context on stdin: non-zero exit cancels with stdout as the reason', async () => {
    const repo = temp();
    write(join(repo, '.maestro/hooks/before-execute.sh'), `#!/bin/sh\nif grep -q '"title":"Add login page"'; then echo "login work is frozen"; exit 3; fi\nexit 0\n`);
    const runner = new HookRunner({ projectRoot: repo, globalHome: null });
    expect(await runner.run('before:execute', { task, job: { runId: 'R1' } })).toEqual({ outcome: 'cancel', reason: 'login work is frozen', source: join(repo, '.maestro/hooks/before-execute.sh') });
    expect(await runner.run('before:execute', { task: { ...task, title: 'Other' }, job: {} })).toMatchObject({ outcome: 'continue' });
  });

  it('reads a rewritten plan and a conflict mode from a shell hook’s stdout', async () => {
    const home = temp();
    write(join(home, 'hooks/after-planner-output.sh'), `echo "rewritten by shell"\n`);
    write(join(home, 'hooks/on-conflict.sh'), `echo manual\n`);
    const runner = new HookRunner({ projectRoot: temp(), globalHome: home });
    expect(await runner.run('after:planner:output', { task, plan: 'p' })).toMatchObject({ outcome: 'continue', value: 'rewritten by shell\n' });
    expect(await runner.run('on:conflict', { task, files: [] })).toMatchObject({ outcome: 'continue', value: 'manual' });
  });

  it('counts a shell hook past its time as a cancel and leaves no process behind', async () => {
    const repo = temp();
    const pids = join(repo, 'pids');
    write(join(repo, '.maestro/hooks/before-task-claim.sh'), `sleep 30 &\necho $! > ${pids}\necho $$ >> ${pids}\nsleep 30\n`);
    // Long enough for the shell to start and write its pids on a loaded machine, far below its 30 s sleep.
    const limit = budget(1000);
    const out = await new HookRunner({ projectRoot: repo, globalHome: null, timeoutMs: limit }).run('before:task:claim', { task });
    expect(out).toMatchObject({ outcome: 'cancel', failed: true });
    expect(out.reason).toContain(`did not finish within ${limit} ms`);
    const [background, shell] = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(await eventuallyDead(background!)).toBe(true);
    expect(await eventuallyDead(shell!)).toBe(true);
  });

  it('kills what a shell hook left running in the background after it exits', async () => {
    const repo = temp();
    const pids = join(repo, 'pids');
    write(join(repo, '.maestro/hooks/before-merge.sh'), `sleep 30 &\necho $! > ${pids}\nexit 0\n`);
    expect(await new HookRunner({ projectRoot: repo, globalHome: null }).run('before:merge', { task, branch: 'b' })).toMatchObject({ outcome: 'continue' });
    expect(await eventuallyDead(Number(readFileSync(pids, 'utf8')))).toBe(true);
  });

  it('counts a module hook stuck in a loop as a cancel, and keeps working afterwards', async () => {
    const repo = temp();
    write(join(repo, '.maestro/hooks.mjs'), `export default { 'before:execute': () => { for (;;) {} }, 'before:merge': () => undefined };`);
    const runner = new HookRunner({ projectRoot: repo, globalHome: null, timeoutMs: 1000 });
    const out = await runner.run('before:execute', { task, job: {} });
    expect(out).toMatchObject({ outcome: 'cancel', failed: true });
    expect(out.reason).toContain('"before:execute" did not answer within 1000 ms');
    expect(await runner.run('before:merge', { task, branch: 'b' })).toMatchObject({ outcome: 'continue' });
  });

  it('counts a hook that throws, or exits its process, as a cancel with the error as the reason', async () => {
    const repo = temp();
    write(join(repo, '.maestro/hooks.mjs'), `export default { 'before:execute': async () => { throw new Error('database of approvals unreachable'); }, 'before:merge': () => process.exit(7) };`);
    const runner = new HookRunner({ projectRoot: repo, globalHome: null });
    const threw = await runner.run('before:execute', { task, job: {} });
    expect(threw).toMatchObject({ outcome: 'cancel', failed: true });
    expect(threw.reason).toBe(`hook "before:execute" in ${join(repo, '.maestro/hooks.mjs')} threw: database of approvals unreachable`);
    const exited = await runner.run('before:merge', { task, branch: 'b' });
    expect(exited).toMatchObject({ outcome: 'cancel', failed: true });
    expect(exited.reason).toContain('crashed: exited with code 7');
  });

  // The reply reaches the daemon, which stores a cancel's reason as an event sent to every board; a shell hook's
  // output is kept up to 1 MiB. A module hook's reply is read up to the same size: a 64 MB one took the daemon's memory.
  it("refuses a module hook's reply past 1 MiB (a reason, an error, a plan), naming the hook and the cap", async () => {
    const repo = temp();
    const file = write(join(repo, '.maestro/hooks.mjs'), `export default {
      'before:execute': () => ({ cancel: 'x'.repeat(64 * 1024 * 1024) }),
      'before:merge': async () => { throw new Error('y'.repeat(8 * 1024 * 1024)); },
      'after:planner:output': () => 'z'.repeat(2 * 1024 * 1024),
      'on:conflict': () => ({ cancel: 'fits: ' + 'w'.repeat(1000) }),
    };`);
    const runner = new HookRunner({ projectRoot: repo, globalHome: null, timeoutMs: 20_000 });
    for (const [name, ctx] of [['before:execute', { task, job: {} }], ['before:merge', { task, branch: 'b' }], ['after:planner:output', { task, plan: 'p' }]] as const) {
      const out = await runner.run(name, ctx as never);
      expect(out).toMatchObject({ outcome: 'cancel', failed: true, source: file });
      expect(out.reason).toMatch(new RegExp(`^hook "${name}" in .*hooks\\.mjs answered with more than 1048576 bytes; nothing of it was read`));
    }
    expect((await runner.run('on:conflict', { task, files: [] })).reason).toBe(`fits: ${'w'.repeat(1000)}`);
  }, budget(120_000));

  it('refuses a bad return value with an error naming the hook, the file and what was expected', async () => {
    const repo = temp();
    const file = write(join(repo, '.maestro/hooks.mjs'), `export default { 'before:execute': () => 42, 'on:conflict': () => 'maybe', 'after:planner:output': () => ({ plan: 'x' }), 'before:merge': () => ({ cancel: '' }) };`);
    const runner = new HookRunner({ projectRoot: repo, globalHome: null });
    expect(await runner.run('before:execute', { task, job: {} })).toEqual({
      outcome: 'cancel',
      failed: true,
      source: file,
      reason: `hook "before:execute" in ${file} returned number 42; expected nothing or { cancel: "<non-empty reason>" }`,
    });
    const conflict = await runner.run('on:conflict', { task, files: [] });
    expect(conflict).toMatchObject({ outcome: 'cancel', value: 'manual' });
    expect(conflict.reason).toBe(`hook "on:conflict" in ${file} returned the string "maybe"; expected "auto" or "manual"`);
    expect((await runner.run('after:planner:output', { task, plan: 'p' })).reason).toContain('returned an object with keys ["plan"]; expected the plan as a string');
    expect((await runner.run('before:merge', { task, branch: 'b' })).reason).toContain('returned an object with keys ["cancel"]');
  });

  it('refuses a hooks module that names an unknown hook or does not load', async () => {
    const repo = temp();
    const file = write(join(repo, '.maestro/hooks.mjs'), `export default { 'before:exec': () => undefined };`);
    const runner = new HookRunner({ projectRoot: repo, globalHome: null });
    const out = await runner.run('before:execute', { task, job: {} });
    expect(out).toMatchObject({ outcome: 'cancel', failed: true });
    expect(out.reason).toContain(`${file} defines an unknown hook "before:exec"`);
    rmSync(file);
    write(join(repo, '.maestro/hooks.ts'), `export default { 'before:execute': ( => 1 };`);
    expect((await runner.run('before:execute', { task, job: {} })).reason).toMatch(/hooks\.ts cannot be loaded/);
  });

  it('refuses a shell on:conflict answer outside the contract', async () => {
    const repo = temp();
    write(join(repo, '.maestro/hooks/on-conflict.sh'), `echo later\n`);
    const out = await new HookRunner({ projectRoot: repo, globalHome: null }).run('on:conflict', { task, files: [] });
    expect(out).toMatchObject({ outcome: 'cancel', failed: true, value: 'manual' });
    expect(out.reason).toContain('printed the string "later"; expected "auto" or "manual"');
    expect(existsSync(join(repo, '.maestro'))).toBe(true);
  });
});

describe.skipIf(bwrapUnusable())("a project's hooks in the agent sandbox", () => {
  it("run there, module and shell alike, and find no token; the user's own global hooks run as the user", async () => {
    const home = temp();
    const token = write(join(home, 'token'), 'daemon-token-42\n');
    const repo = temp();
    const probe = `cat ${token} 2>&1; test -e /proc/${process.pid} && echo daemon-visible || echo no-daemon; exit 1`;
    write(join(repo, '.maestro/hooks/before-merge.sh'), `#!/bin/sh\n${probe}\n`);
    write(join(repo, '.maestro/hooks.mjs'), `import { readFileSync } from 'node:fs';
export default { 'before:execute': () => { try { return { cancel: readFileSync(${JSON.stringify(token)}, 'utf8') }; } catch (e) { return { cancel: e.code }; } } };`);
    write(join(home, 'hooks/before-task-claim.sh'), `#!/bin/sh\n${probe}\n`);
    const sandbox = { kind: 'bwrap' as const, hide: [home], readOnly: [repo], writable: [] };
    const runner = new HookRunner({ projectRoot: repo, globalHome: home, sandbox });

    const shell = await runner.run('before:merge', { task, branch: 'maestro/T1-v1' });
    expect(shell.reason).toMatch(/token: No such file or directory\nno-daemon/);
    expect((await runner.run('before:execute', { task, job: {} })).reason).toBe('ENOENT');
    // The project's module does not define it: the global hook answers, outside the sandbox.
    expect((await runner.run('before:task:claim', { task })).reason).toBe('daemon-token-42\ndaemon-visible');
    // The same project hooks without a sandbox read it: what the assertions above measure against.
    const open = new HookRunner({ projectRoot: repo, globalHome: home });
    expect((await open.run('before:merge', { task, branch: 'maestro/T1-v1' })).reason).toBe('daemon-token-42\ndaemon-visible');
  });
});
