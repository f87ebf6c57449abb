import { describe, expect, it } from 'vitest';
import { terminalLine, terminalPrinter } from '../../src/cli/commands/serve.js';
import { terminalName } from '../../src/app/terminalName.js';
import { defaultDaemonName } from '../../src/config/config.js';
import type { MaestroEvent } from '../../src/core/types.js';

describe("maestro serve's terminal lines", () => {
  it('say a status change, a merge conflict or a locked checkout and the start of a conflict run; nothing for other events', () => {
    const at = new Date(2026, 11, 2, 9, 30, 5).getTime();
    const title = 'Document the greeting';
    expect(terminalLine({ type: 'task.status', at, payload: { from: 'merging', to: 'done', reason: 'merged' } }, title)).toBe(`09:30:05  ${title.padEnd(32)}  merging → done  (merged)`);
    expect(terminalLine({ type: 'merge.conflict', at, payload: { branch: 'maestro/t_1-v1', message: 'CONFLICT (content): README.md' } }, title)).toBe(`09:30:05  ${title.padEnd(32)}  merge conflict on maestro/t_1-v1: a conflict run will resolve it`);
    expect(terminalLine({ type: 'run.started', at, payload: { kind: 'conflict' } }, title)).toBe(`09:30:05  ${title.padEnd(32)}  conflict run started`);
    expect(terminalLine({ type: 'merge.waiting', at, payload: { kind: 'merge_check', owner: 'build-1' } }, title))
      .toBe(`09:30:05  ${title.padEnd(32)}  merge check waits for a worker: every run slot on daemon build-1 is taken (maxConcurrentRuns); it starts when one of those runs ends`);
    expect(terminalLine({ type: 'merge.waiting', at, payload: { kind: 'conflict', owner: 'build-1' } }, title)).toMatch(/ {2}conflict run waits for a worker: /);
    expect(terminalLine({ type: 'merge.locked', at, payload: { lock: '/r/.git/index.lock', message: 'the main checkout /r is locked: …' } }, title))
      .toBe(`09:30:05  ${title.padEnd(32)}  merge waits: /r/.git/index.lock exists (a git process at work in the checkout); it merges once that is gone`);
    expect(terminalLine({ type: 'task.released', at, payload: { owner: 'build-1', status: 'reviewing' } }, title)).toBe(`09:30:05  ${title.padEnd(32)}  released at reviewing by build-1, which stopped: another daemon goes on with it now`);
    expect(terminalLine({ type: 'task.taken_over', at, payload: { owner: 'build-2', previousOwner: 'build-1', status: 'reviewing', attempt: 2 } }, title))
      .toBe(`09:30:05  ${title.padEnd(32)}  taken over at reviewing by build-2 from build-1, whose lease ended: it goes on from the work build-1 pushed`);
    expect(terminalLine({ type: 'task.renewed', at, payload: { owner: 'build-1', status: 'reviewing', attempt: 1 } }, title))
      .toBe(`09:30:05  ${title.padEnd(32)}  lease renewed at reviewing by build-1, which was cut off from the database for longer than its lease: it goes on with the task, nothing taken over`);
    expect(terminalLine({ type: 'run.started', at, payload: { kind: 'execute' } }, title)).toBeNull();
    expect(terminalLine({ type: 'run.phase', at, payload: {} }, title)).toBeNull();
    expect(terminalLine({ type: 'project.settings_files', at, payload: { files: ['.maestro/hooks.mjs', '.workflow/specs/api.md'], sha: 'abc' } }, title))
      .toBe(`09:30:05  ${title.padEnd(32)}  merged changes to what later runs use: .maestro/hooks.mjs, .workflow/specs/api.md`);
    const many = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => `.workflow/knowhow/${n}.md`);
    expect(terminalLine({ type: 'project.settings_files', at, payload: { files: many } }, title)).toMatch(/knowhow\/e\.md and 2 more$/);
    expect(terminalLine({ type: 'project.settings_files', at, payload: { files: 'not a list' } }, title)).toMatch(/use: \(files not named\)$/);
    expect(terminalLine({ type: 'project.settings_files', at, payload: { files: ['.workflow/specs/api.md'], promotion: true } }, title)).toBe(`09:30:05  ${title.padEnd(32)}  knowledge promoted into main: .workflow/specs/api.md`);
    expect(terminalLine({ type: 'project.runs_elsewhere', at, payload: { files: ['.github/workflows/ci.yml'] } }, title))
      .toBe(`09:30:05  ${title.padEnd(32)}  merged changes to what runs outside Maestro: .github/workflows/ci.yml (CI runs its workflows on the next push; hooks and package scripts run where it is checked out)`);
    // An approval names where it came from (origin) and still the status it leaves; one stored before had only the origin.
    expect(terminalLine({ type: 'task.status', at, payload: { from: 'exec_review', to: 'merging', origin: { address: '127.0.0.1' } } }, title)).toBe(`09:30:05  ${title.padEnd(32)}  exec_review → merging`);
    expect(terminalLine({ type: 'task.status', at, payload: { from: { address: '127.0.0.1' }, to: 'merging' } }, title)).toBe(`09:30:05  ${title.padEnd(32)}  → merging`);
  });

  it('name a task whose title cannot be read (PostgreSQL restarting) by its id, and never reject', async () => {
    const lines: string[] = [];
    let down = true;
    const reads: string[] = [];
    const print = terminalPrinter(async (id) => {
      reads.push(id);
      if (down) throw new Error('terminating connection due to administrator command');
      return { title: 'Add the command line' };
    }, (line) => lines.push(line));
    const event = (type: string, payload: Record<string, unknown>): MaestroEvent => ({ id: 1, projectId: 'p', taskId: 't_1', runId: null, traceId: null, type, payload, at: 0 });
    await print(event('run.started', { kind: 'conflict' }));
    down = false;
    await print(event('task.status', { from: 'merging', to: 'done' }));
    await print(event('task.status', { from: 'done', to: 'done' }));
    await print(event('run.phase', { stage: 'agent' }));
    expect(lines.map((l) => l.slice(10).replace(/\s+/g, ' '))).toEqual(['t_1 conflict run started', 'Add the command line merging → done', 'Add the command line done → done']);
    expect(reads).toEqual(['t_1', 't_1']);
  });

  it('print every event they say: a merge waiting for a lock and a merge that changed what runs outside Maestro too', async () => {
    const lines: string[] = [];
    const print = terminalPrinter(async () => ({ title: 'Add CI' }), (line) => lines.push(line));
    const event = (id: number, type: string, payload: Record<string, unknown>): MaestroEvent => ({ id, projectId: 'p', taskId: 't_1', runId: null, traceId: null, type, payload, at: 0 });
    await print(event(1, 'merge.locked', { lock: '/r/.git/index.lock' }));
    await print(event(2, 'project.runs_elsewhere', { files: ['.github/workflows/ci.yml'] }));
    expect(lines.map((l) => l.slice(10).replace(/\s+/g, ' '))).toEqual([
      'Add CI merge waits: /r/.git/index.lock exists (a git process at work in the checkout); it merges once that is gone',
      'Add CI merged changes to what runs outside Maestro: .github/workflows/ci.yml (CI runs its workflows on the next push; hooks and package scripts run where it is checked out)',
    ]);
  });

  it('say when main changed hooks, checks or quoted knowledge on the shared remote without a Maestro merge, naming the project, the commit and its author', async () => {
    const lines: string[] = [];
    const print = terminalPrinter(async () => null, (line) => lines.push(line));
    const sha = 'a'.repeat(40);
    await print({ id: 2, projectId: 'p_web', taskId: null, runId: null, traceId: null, type: 'project.settings_files', at: 0, payload: { files: ['.maestro/hooks.mjs'], who: 'Tess Mate <tess@example.com>', from: 'a commit on the shared remote\'s main, not a Maestro merge', subject: 'Add a hook', sha, remote: true } });
    await print({ id: 3, projectId: 'p_web', taskId: null, runId: null, traceId: null, type: 'task.status', at: 0, payload: { to: 'done' } });
    expect(lines.map((l) => l.slice(10).replace(/\s+/g, ' '))).toEqual([
      `project p_web main changed what later runs use, not through a Maestro merge: .maestro/hooks.mjs (commit aaaaaaaaaaaa by Tess Mate <tess@example.com>: "Add a hook")`,
    ]);
  });

  it('say a change of the settings that run code or let work through without a person, naming the project, who and from where, and what it means; nothing for other changes', async () => {
    const lines: string[] = [];
    const print = terminalPrinter(async () => null, (line) => lines.push(line));
    const event = (id: number, payload: Record<string, unknown>): MaestroEvent => ({ id, projectId: 'p_1', taskId: null, runId: null, traceId: null, type: 'project.config', at: 0, payload });
    const from = { address: '10.0.0.5', client: 'cli', userAgent: 'maestro' };
    await print(event(1, { name: 'repo', who: 'mallory', from, changed: ['autoApproveAfterMs'], code: { autoApproveAfterMs: { before: null, after: 0 } }, autoApproval: { afterMs: 0, previousMs: null, waiting: 2 } }));
    await print(event(2, { name: 'repo', from, changed: ['keepBranches'], code: {} }));
    await print(event(3, { from, changed: ['provider', 'autoReply'], code: { provider: { before: null, after: { kind: 'command', command: ['x'] } }, autoReply: { before: null, after: 'yes' } } }));
    await print(event(4, { name: 'repo', from, changed: ['autoApproveAfterMs'], code: { autoApproveAfterMs: { before: 0, after: null } }, autoApproval: { afterMs: null, previousMs: 0, waiting: 0 } }));
    expect(lines.map((l) => l.slice(10).replace(/\s+/g, ' '))).toEqual([
      'project repo settings changed by mallory from 10.0.0.5 (cli): autoApproveAfterMs unset → 0; tasks reaching a gate from now on are approved after 0 ms without a person; the 2 already waiting still wait for you',
      'project p_1 settings changed from 10.0.0.5 (cli): provider changed, autoReply changed',
      'project repo settings changed from 10.0.0.5 (cli): autoApproveAfterMs 0 → unset; every gate waits for a person again',
    ]);
  });

  it('show what people, agents and repositories wrote as `maestro task list` does: no escape, bell, bidi control or line break reaches the terminal', () => {
    const at = new Date(2026, 11, 2, 9, 30, 5).getTime();
    const RAW = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;
    const title = 'Fix \u202egnp.exe';
    const remote = terminalLine({ type: 'project.settings_files', at, payload: {
      files: ['.maestro/hooks/before-merge\u001b]0;X\u0007.sh', '.workflow/specs/a\nfake line.md'],
      who: 'Eve\u001b[2J\u001b[H\u001b[31mRED <eve@example.com>', subject: 'Tidy\u009b2J "up"\u202e', sha: 'b'.repeat(40), remote: true,
    } }, title)!;
    expect(remote).not.toMatch(RAW);
    expect(remote).toBe(`09:30:05  ${'Fix \\u{202e}gnp.exe'.padEnd(32)}  main changed what later runs use, not through a Maestro merge: `
      + '.maestro/hooks/before-merge\\u{1b}]0;X\\u{7}.sh, .workflow/specs/a\\u{a}fake line.md '
      + '(commit bbbbbbbbbbbb by Eve\\u{1b}[2J\\u{1b}[H\\u{1b}[31mRED <eve@example.com>: "Tidy\\u{9b}2J "up"\\u{202e}")');
    const lines = [
      terminalLine({ type: 'task.status', at, payload: { from: 'merging', to: 'needs_attention', reason: 'hook said \u001b[2J' } }, title),
      terminalLine({ type: 'merge.conflict', at, payload: { branch: 'maestro/\u001b[31mx' } }, title),
      terminalLine({ type: 'project.settings_files', at, payload: { files: ['.workflow/knowhow/\u001b[2J.md'] } }, title),
    ];
    for (const line of lines) expect(line).not.toMatch(RAW);
    expect(lines.map((l) => l!.slice(44))).toEqual(['merging → needs_attention  (hook said \\u{1b}[2J)', 'merge conflict on maestro/\\u{1b}[31mx: a conflict run will resolve it', 'merged changes to what later runs use: .workflow/knowhow/\\u{1b}[2J.md']);
  });

  it("start with the daemon's name on a shared database or when it was given one, and not for a lone daemon under its default name", async () => {
    const home = '/var/tmp/maestro-home';
    const sqlite = 'sqlite:/var/tmp/maestro-home/maestro.db';
    expect(terminalName({ home, database: sqlite, name: defaultDaemonName(home) })).toBeNull();
    expect(terminalName({ home, database: sqlite, name: 'laptop' })).toBe('laptop');
    expect(terminalName({ home, database: 'postgres://maestro@db.example/maestro', name: defaultDaemonName(home) })).toBe(defaultDaemonName(home));
    expect(terminalName({ home, database: 'postgres://maestro@db.example/maestro', name: 'build-1\u001b[2J' })).toBe('build-1\\u{1b}[2J');

    const event: MaestroEvent = { id: 1, projectId: 'p', taskId: 't_1', runId: null, traceId: null, type: 'task.status', payload: { from: 'queued', to: 'executing' }, at: new Date(2026, 11, 2, 9, 30, 5).getTime() };
    const lines: string[] = [];
    await terminalPrinter(async () => ({ title: 'Add CI' }), (line) => lines.push(line), 'build-1')(event);
    await terminalPrinter(async () => ({ title: 'Add CI' }), (line) => lines.push(line), null)(event);
    expect(lines).toEqual([`[build-1] 09:30:05  ${'Add CI'.padEnd(32)}  queued → executing`, `09:30:05  ${'Add CI'.padEnd(32)}  queued → executing`]);
  });
});
