/**
 * The daemon waiting for a `.workflow` lock another process holds (a person's `maestro knowledge …`): its event loop
 * keeps turning between the tries (format/lock.ts withCorpusLockAsync, lib/lockTry.ts takenAsync), where a blocked
 * thread froze the API, the WebSocket and the scheduler for up to the lock's 10 s budget.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project } from '../helpers/knowledge2.js';
import { budget } from '../helpers/budget.js';
import { lockHolder } from '../helpers/lockHolder.js';
import { acquireKernelLock } from '../../src/lib/kernelLock.js';
import { namespaceLockPath, withCorpusLock, withCorpusLockAsync, withWorkflowLockAsync } from '../../src/knowledge/format/lock.js';

/** Counts the timer's firings; `reached(n)` resolves once it has fired n times. */
function ticker() {
  let n = 0;
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  const timer = setInterval(() => {
    n++;
    for (const w of waiting.filter((x) => x.n <= n)) w.resolve();
  }, 5);
  return {
    count: () => n,
    reached: (at: number) => new Promise<void>((resolve) => waiting.push({ n: at, resolve })),
    stop: () => clearInterval(timer),
  };
}

/** Whether another connection (as another process) gets the corpus's kernel lock now, and no lock file is left. */
function freeForOthers(target: string): boolean {
  try {
    acquireKernelLock(namespaceLockPath(target), 0, () => new Error('busy'))();
  } catch {
    return false;
  }
  return !existsSync(`${target}.lock`);
}

function storeTarget(dir: string): string {
  const sessions = join(dir, '.workflow', 'sessions');
  mkdirSync(sessions, { recursive: true });
  return join(sessions, '.session-store');
}

describe("waiting for another process's corpus lock", { timeout: budget(60_000) }, () => {
  it('the event loop keeps turning while the daemon waits, and it takes the lock once the other process lets go', async () => {
    const target = storeTarget(project().dir);
    const other = await lockHolder(['hold', target]);
    const ticks = ticker();
    try {
      let letGo = false;
      const taken = withCorpusLockAsync([target], async () => ({ ticks: ticks.count(), letGo }), { timeoutMs: budget(10_000) });
      await ticks.reached(10); // the interval fired ten times while the taker waited
      letGo = true;
      expect(await other.release()).toMatchObject({ code: 0, stdout: 'HELD\nRELEASED\n' });
      const inside = await taken;
      expect(inside.letGo).toBe(true); // taken only once the other process was told to let go
      expect(inside.ticks).toBeGreaterThanOrEqual(10);
      expect(freeForOthers(target)).toBe(true);
    } finally {
      ticks.stop();
      await other.release();
    }
  });

  it("two takers in this process wait for it: the first one's hold is joined by the second, not waited for", async () => {
    const target = storeTarget(project().dir);
    const other = await lockHolder(['hold', target]);
    const ticks = ticker();
    try {
      let inside = 0;
      let bothIn!: () => void;
      const both = new Promise<void>((resolve) => (bothIn = resolve));
      // Each holds until both are in: the second must join the first's hold while the first still has it.
      const taker = () => withCorpusLockAsync([target], async () => {
        if (++inside === 2) bothIn();
        await both;
      }, { timeoutMs: budget(10_000) });
      const takers = [taker(), taker()];
      await ticks.reached(10);
      expect(inside).toBe(0);
      await other.release();
      await Promise.all(takers);
      expect(inside).toBe(2);
      expect(freeForOthers(target)).toBe(true);
      withCorpusLock([target], () => expect(freeForOthers(target)).toBe(false)); // and a synchronous holder takes it again
    } finally {
      ticks.stop();
      await other.release();
    }
  });

  it('gives up at its deadline with the synchronous refusal, the loop turning meanwhile, and holds nothing after', async () => {
    const target = storeTarget(project().dir);
    const other = await lockHolder(['hold', target]);
    const ticks = ticker();
    try {
      const refusal = (() => {
        try {
          withCorpusLock([target], () => undefined, { timeoutMs: 1 });
        } catch (err) {
          return err as Error & { code?: string };
        }
      })();
      expect(refusal?.code).toBe('LOCK_TIMEOUT');
      const start = ticks.count();
      await expect(withCorpusLockAsync([target], async () => undefined, { timeoutMs: 200 })).rejects.toMatchObject({ code: 'LOCK_TIMEOUT', message: refusal!.message.replace('after 1 ms', 'after 200 ms') });
      expect(ticks.count()).toBeGreaterThan(start);
      await other.release();
      expect(freeForOthers(target)).toBe(true);
    } finally {
      ticks.stop();
      await other.release();
    }
  });

  it("withWorkflowLockAsync: a synchronous operation's own locks join the folder's hold, awaited with the loop turning", async () => {
    const dir = project().dir;
    const target = storeTarget(dir);
    const spec = join(dir, '.workflow', 'specs', 'learnings.md'); // a target the operation finds only inside
    const other = await lockHolder(['hold', target]);
    const ticks = ticker();
    try {
      let letGo = false;
      const op = withWorkflowLockAsync(join(dir, '.workflow'), () => withCorpusLock([spec], () => ({ ticks: ticks.count(), letGo, others: freeForOthers(spec) })), { timeoutMs: budget(10_000) });
      await ticks.reached(10);
      letGo = true;
      await other.release();
      // Inside: after the other process let go, the loop having turned; nobody else could take the folder's lock.
      expect(await op).toEqual({ ticks: expect.any(Number), letGo: true, others: false });
      expect((await op).ticks).toBeGreaterThanOrEqual(10);
      expect(freeForOthers(spec)).toBe(true);
    } finally {
      ticks.stop();
      await other.release();
    }
  });
});
