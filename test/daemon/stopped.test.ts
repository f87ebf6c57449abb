/**
 * A stopped daemon ticks no more: a worker's exit or a finished ingest may still ask for a tick after `stop()`
 * (Orchestrator.kick), and the store may be closed by then, so that tick would only fail on it.
 */
import { afterEach, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { Orchestrator } from '../../src/daemon/orchestrator.js';
import { Bus } from '../../src/lib/bus.js';
import { createStore } from '../../src/store/store.js';
import { freshSqlite, removeTempDirs, tempDir } from '../helpers/db.js';

afterEach(() => removeTempDirs());

it('a kick after stop() runs no tick, so nothing meets the closed store', async () => {
  const { db } = await freshSqlite();
  const store = createStore(db);
  const home = tempDir('maestro-stopped-');
  const config = { ...resolveConfig({ home }, {}), name: 'd1', maxConcurrentRuns: 0 };
  const errors: Error[] = [];
  const orchestrator = new Orchestrator(store, new Bus(), config, { env: {}, onChange: () => {}, onError: (e) => errors.push(e) });
  await orchestrator.register();
  orchestrator.start();
  await orchestrator.idle();
  await orchestrator.stop({ graceMs: 0 });
  await store.close();

  orchestrator.kick(); // as a worker's exit or a finished ingest asks, after the stop
  await orchestrator.idle();
  expect(errors).toEqual([]);
});
