/**
 * SIGTERM: the daemon stops claiming, lets a worker finish the stage it is in,
 * then stops it; the next start resumes the run after that stage, so the agent
 * is not called again, and the task reaches done. A corrupt outbox line and a
 * port in use get clear answers and leave the daemon running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { trackResource } from '../../src/lib/resources.js';
import { openMigratedDatabase } from '../../src/store/open.js';
import { createStore, type Store } from '../../src/store/store.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { GiveUp, poll } from '../helpers/wait.js';
import { maestroArgs } from '../helpers/maestro.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/long-agent.yaml', import.meta.url));

/** A daemon process; `alive()` ends a wait at once (GiveUp) with the daemon's stderr when it has exited. */
function serve(home: string, extra: string[] = []): { child: ChildProcess; exited: Promise<number | null>; stderr: () => string; alive: () => void } {
  const child = spawn(process.execPath, [...maestroArgs(), 'serve', '--home', home, '--no-demo', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const untrack = trackResource('process', `daemon ${child.pid}`, () => child.kill('SIGKILL'));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { untrack(); resolve(code); }));
  const alive = () => {
    if (child.exitCode !== null || child.signalCode !== null) throw new GiveUp(`the daemon exited (${child.exitCode ?? child.signalCode}): ${err}`);
  };
  return { child, exited, stderr: () => err, alive };
}

describe('daemon shutdown and bad input', () => {
  let store: Store | null = null;
  afterEach(async () => {
    await store?.close();
    store = null;
    removeTempDirs();
  });

  it('SIGTERM lets the running stage finish; the restart resumes after it and finishes the task', async () => {
    const home = tempDir('maestro-home-');
    writeFileSync(join(home, 'config.json'), JSON.stringify({ tickMs: 100, port: 0 }));
    // A call log sits in its script's folder (the worker refuses one elsewhere: src/agents/scripted.ts).
    const agent = tempDir('maestro-agent-');
    const script = join(agent, 'long-agent.yaml');
    copyFileSync(SCRIPT, script);
    const callLog = join(agent, 'calls.ndjson');
    store = createStore(await openMigratedDatabase(`sqlite:${join(home, 'maestro.db')}`));
    const p = await store.projects.create({ name: 'sigterm', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script, callLog }, autoApproveAfterMs: 0 } });
    const t = await store.tasks.create({ projectId: p.id, title: 'Long stage', complexity: 'easy' });
    const s = store;

    const first = serve(home);
    await poll(async () => (first.alive(), (await s.events.list({ taskId: t.id, type: 'run.phase', limit: 1000 })).events.find((e) => e.payload.stage === 'agent' && e.payload.state === 'start')), 'the agent stage to start');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.stderr()).toMatch(/finishing running stages[\s\S]*maestro: daemon stopped\n/);
    const [run] = await s.runs.list({ taskId: t.id });
    // The stage in flight was allowed to finish; the run either ended within the grace
    // period or was stopped cleanly after the stage, to resume. It did not fail.
    expect(['running', 'succeeded']).toContain(run!.status);
    expect(run!.error).toBeNull();
    expect(Object.keys(JSON.parse(readFileSync(join(run!.runDir!, 'stages.json'), 'utf8')).done)).toContain('agent');

    const second = serve(home);
    await poll(async () => (second.alive(), (await s.tasks.get(t.id)).status === 'done'), 'done after the restart');
    second.child.kill('SIGTERM');
    await second.exited;
    const executeCalls = readFileSync(callLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((c) => c.role === 'execute');
    expect(executeCalls).toHaveLength(1);
    expect((await s.runs.get(run!.id)).status).toBe('succeeded');
  });

  it('corrupt outbox lines are skipped, said in the log, and the run goes on; a port in use is refused clearly', async () => {
    const d = await startTestDaemon({ tickMs: 100 });
    try {
      const p = await d.store.projects.create({ name: 'corrupt', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script: SCRIPT }, autoApproveAfterMs: 0 } });
      const t = await d.store.tasks.create({ projectId: p.id, title: 'Corrupt line', complexity: 'easy' });
      d.orchestrator.kick();
      const run = await poll(async () => (await d.store.runs.list({ taskId: t.id }))[0], 'a run');
      // Not JSON, JSON that is no record, and a record missing what a result needs (its seq would hide the real ones).
      appendFileSync(join(run.runDir!, 'outbox.ndjson'), 'this is not json\nnull\n[1,2]\n{"seq":99999,"type":"result","traceId":"x","runId":"x","at":1}\n');
      await poll(async () => (await d.store.tasks.get(t.id)).status === 'done', 'done despite the corrupt lines');
      const passedOver = d.logs.filter((l) => l.includes('outbox lines that are not records were passed over')).join('\n');
      expect(passedOver).toContain('"text":"null"');
      expect(passedOver).toContain('"seq\\":99999');
      expect(d.logs.join('\n')).not.toContain('TypeError');
      expect((await d.fetch(`/api/health`)).status).toBe(200);
    } finally {
      await d.stop({ graceMs: 1000 });
    }
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(startTestDaemon({ port })).rejects.toMatchObject({ code: 'PORT_IN_USE', message: expect.stringMatching(new RegExp(`^Port ${port} on 127.0.0.1 is in use`)) });
    } finally {
      blocker.close();
    }
  });
});
