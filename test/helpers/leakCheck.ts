/**
 * Global afterEach: a test that leaves a database handle, a child process, a
 * server, a watcher or a timer registered in src/lib/resources.ts open fails,
 * naming what leaked, and the leaked resources are closed so the next test
 * starts clean. Resources a suite opens in beforeAll belong to the suite and
 * are checked once, after all of its tests.
 */
import { afterAll, afterEach, beforeEach } from 'vitest';
import { openResources, type TrackedResource } from '../../src/lib/resources.js';

let before = new Set<TrackedResource>();
const atFileStart = new Set(openResources());

beforeEach(() => {
  before = new Set(openResources());
});

async function fail(leaked: TrackedResource[], when: string): Promise<void> {
  if (!leaked.length) return;
  const names = leaked.map((r) => `${r.kind} ${r.name}`);
  for (const r of leaked) {
    try {
      await r.close();
    } catch {
      // already broken; the failure below is what matters
    }
  }
  throw new Error(`${when} leaked ${leaked.length} resource(s): ${names.join('; ')}`);
}

afterEach(async () => {
  await fail(openResources().filter((r) => !before.has(r)), 'Test');
});

afterAll(async () => {
  await fail(openResources().filter((r) => !atFileStart.has(r)), 'Test file');
});
