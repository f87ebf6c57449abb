import { describe, expect, it } from 'vitest';
import { KnowledgeEnds } from './knowledgeEnds.js';

/** A promise settled by hand. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Whether `p` has settled once the microtasks queued now have run. */
async function settledNow(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true), () => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('KnowledgeEnds', () => {
  it("waits for the task's own end only, and once it has settled, for nothing", async () => {
    const ends = new KnowledgeEnds({});
    const end = deferred();
    ends.add({ id: 'r1', taskId: 'T1' }, end.promise);
    expect(await ends.settled('T2')).toBe(true);
    const waiting = ends.settled('T1');
    expect(await settledNow(waiting)).toBe(false);
    end.resolve();
    expect(await waiting).toBe(true);
    expect(await ends.settled('T1')).toBe(true);
  });

  it('an end that fails counts as settled: the next run starts (knowledge never fails a run)', async () => {
    const ends = new KnowledgeEnds({});
    const end = deferred();
    const kept = ends.add({ id: 'r1', taskId: 'T1' }, end.promise);
    const waiting = ends.settled('T1');
    end.reject(new Error('the ledger is corrupt'));
    await expect(kept).rejects.toThrow('the ledger is corrupt'); // what the caller gets back is the end itself
    expect(await waiting).toBe(true);
  });

  it('a stop ends the waits (false: the start gives up), and a start waits again after', async () => {
    const ends = new KnowledgeEnds({});
    ends.add({ id: 'r1', taskId: 'T1' }, new Promise(() => {}));
    const waiting = ends.settled('T1');
    ends.stop();
    expect(await waiting).toBe(false);
    expect(await ends.settled('T1')).toBe(false);
    ends.start();
    expect(await settledNow(ends.settled('T1'))).toBe(false);
    ends.stop();
  });

  it('a start that waits long says so once, naming the task and the run', async () => {
    const said = deferred<Record<string, unknown>>();
    const lines: string[] = [];
    const ends = new KnowledgeEnds({ slowMs: 0, log: { info: (obj, msg) => (lines.push(msg), said.resolve(obj)) } });
    const end = deferred();
    ends.add({ id: 'r1', taskId: 'T1' }, end.promise);
    const waiting = ends.settled('T1');
    expect(await said.promise).toMatchObject({ taskId: 'T1', runId: 'r1' });
    end.resolve();
    await waiting;
    expect(lines).toEqual(["a run of the task waits to start until its previous run's knowledge is finished (its report staged, its ledger stored)"]);
  });
});
