/**
 * The orchestrator acts on what TickTriggers decides for each event it hears (src/daemon/tickTriggers.ts has the
 * decisions themselves): a task another daemon claimed and holds costs this daemon no tick, its approval asks for
 * a merge round only, and its end ticks while this daemon has room.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import type { MaestroEvent } from '../../src/core/types.js';
import { Orchestrator } from '../../src/daemon/orchestrator.js';
import { Bus } from '../../src/lib/bus.js';
import { createStore } from '../../src/store/store.js';
import { freshSqlite, removeTempDirs, tempDir } from '../helpers/db.js';

afterEach(() => removeTempDirs());

let nextId = 1;
const moved = (to: string, owner?: string): MaestroEvent => ({
  id: nextId++, projectId: 'p1', taskId: 'T1', runId: null, traceId: null, type: 'task.status', payload: { from: 'x', to, ...(owner ? { owner } : {}) }, at: Date.now(),
});

it("another daemon's task moves: no tick while it holds the task, a merge round when it is approved, a tick when it ends", async () => {
  const { db } = await freshSqlite();
  const store = createStore(db);
  // The timers' own ticks come a minute apart: every tick counted here is one an event asked for.
  const config = { ...resolveConfig({ home: tempDir('maestro-wiring-') }, {}), name: 'a', tickMs: 60_000, maxConcurrentRuns: 2 };
  const errors: Error[] = [];
  const bus = new Bus();
  const orchestrator = new Orchestrator(store, bus, config, { env: {}, onChange: () => {}, onError: (e) => errors.push(e) });
  await orchestrator.register();
  orchestrator.start();
  await orchestrator.idle(); // the first tick, which leaves this daemon room (no task, two slots)
  const ticks = vi.spyOn(orchestrator, 'tick');
  const merges = vi.spyOn(orchestrator as unknown as { kickMerges: () => void }, 'kickMerges');
  try {
    bus.publishEvent(moved('queued', 'b'));
    bus.publishEvent(moved('executing'));
    bus.publishEvent(moved('exec_review'));
    await orchestrator.idle();
    expect(ticks).not.toHaveBeenCalled();
    expect(merges).not.toHaveBeenCalled();

    bus.publishEvent(moved('merging'));
    await orchestrator.idle();
    expect(merges).toHaveBeenCalledTimes(1);
    expect(ticks).not.toHaveBeenCalled();

    bus.publishEvent(moved('done'));
    await orchestrator.idle();
    expect(ticks).toHaveBeenCalledTimes(1);
    expect(errors).toEqual([]);
  } finally {
    await orchestrator.stop({ graceMs: 0 });
    await store.close();
  }
});
