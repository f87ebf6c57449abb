/**
 * Whether a sandbox's abstract sockets can be scoped here is settled once, by the daemon at start: the answer travels
 * in the job's sandbox spec (job.sandbox.sockets), and a worker told starts no probe of its own (a bwrap and a perl
 * start in every worker, before). Watched on a real worker process through a `bwrap` on its PATH that logs each call
 * and then runs the real one: the probe is the call that starts perl's scope around `true`.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processAgentEnv } from '../../src/lib/agentEnv.js';
import { writeJob, type JobInput } from '../../src/executor/protocol/job.js';
import { readOutbox } from '../../src/executor/protocol/outbox.js';
import { spawnWorker } from '../../src/executor/spawn.js';
import { socketScopeProblem, type SocketScope } from '../../src/lib/sandbox.js';
import { bwrapUnusable } from '../helpers/bwrap.js';
import { sandbox, type Sandbox } from './helpers.js';

const unusable = bwrapUnusable();
const scopeProblem = unusable ? 'bwrap is unusable here' : socketScopeProblem();
if (scopeProblem && !unusable) console.warn(`\n*** SKIPPED in socketScopeGiven.test.ts: whether an unscoped run reaches a socket made outside (this kernel scopes none): ${scopeProblem} ***\n`);
const PERL = '/usr/bin/perl';

/** Runs a worker whose one check connects to an abstract socket this test listens on; its bwrap calls and outcome. */
async function runWorker(sb: Sandbox, sockets: SocketScope | undefined) {
  const bin = join(sb.root, 'bin');
  const log = join(sb.root, 'bwrap-calls.tsv');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'bwrap'), `#!/bin/sh\n{ printf call; for a in "$@"; do printf '\\t%s' "$a"; done; printf '\\n'; } >> '${log}'\nexec /usr/bin/bwrap "$@"\n`);
  chmodSync(join(bin, 'bwrap'), 0o755);
  const name = `maestro-scope-given-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const server = createServer((c) => c.end());
  await new Promise<void>((ok) => server.listen(`\0${name}`, ok));
  try {
    const connect = `const c = require('net').connect('\\0${name}'); c.on('connect', () => { c.destroy(); process.exit(0); }); c.on('error', (e) => { console.log(e.code); process.exit(1); });`;
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'out.txt', content: 'done\n' } }] }]);
    const runDir = sb.runDir(`scope-${sockets ? String(sockets.scoped) : 'asked'}`);
    const spec = { kind: 'bwrap' as const, hide: [], readOnly: [sb.repo], writable: [], ...(sockets ? { sockets } : {}) };
    writeJob(runDir, sb.job({ kind: 'execute', checks: [{ name: 'outside-socket', command: [process.execPath, '-e', connect] }], sandbox: spec } as Partial<JobInput> & { kind: 'execute' }, script));
    const worker = spawnWorker(runDir, { env: { ...processAgentEnv(), PATH: `${bin}:${process.env.PATH}` } });
    expect((await worker.exited).code, worker.stderrTail()).toBe(0);
    const calls = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map((l) => l.split('\t').slice(1)) : [];
    const command = (args: string[]) => args.slice(args.indexOf('--') + 1);
    const probes = calls.filter((args) => { const c = command(args); return c[0] === PERL && c.at(-1) === 'true'; });
    const checks = calls.filter((args) => command(args).includes(process.execPath)).map(command);
    const final = readOutbox(runDir).records.find((r) => r.type === 'result' || r.type === 'error')!;
    return { probes: probes.length, checks, final };
  } finally {
    server.close();
  }
}

describe.skipIf(unusable)("a worker told the daemon's answer on socket scoping", () => {
  it('told "unscoped", it starts no probe and runs its check unscoped: the check reaches a socket made outside', async () => {
    using sb = sandbox();
    const r = await runWorker(sb, { scoped: false, reason: 'this kernel cannot scope them with Landlock: EINVAL' });
    expect(r.probes).toBe(0);
    expect(r.checks).toHaveLength(1);
    expect(r.checks[0]![0]).toBe(process.execPath); // no perl scope in front of it
    // Where this kernel scopes, only an unscoped run connects (the next case's check is refused, EPERM).
    if (scopeProblem === null) expect(r.final).toMatchObject({ type: 'result' });
  });

  it('told "scoped", it starts no probe and scopes its check', async () => {
    using sb = sandbox();
    const r = await runWorker(sb, { scoped: true });
    expect(r.probes).toBe(0);
    expect(r.checks[0]!.slice(0, 2)).toEqual([PERL, '-e']);
    expect(r.final).toMatchObject({ type: 'error', code: 'CHECK_FAILED' });
    // Refused by the scope where this kernel has one; elsewhere perl says it cannot make one.
    if (scopeProblem === null) expect(r.final.type === 'error' ? String(r.final.details?.log) : '').toMatch(/\nEPERM\n$/);
  });

  it('told nothing (a job written before the daemon said), it asks once itself', async () => {
    using sb = sandbox();
    const r = await runWorker(sb, undefined);
    expect(r.probes).toBe(1);
    expect(r.checks[0]![0]).toBe(scopeProblem === null ? PERL : process.execPath);
  });
});
