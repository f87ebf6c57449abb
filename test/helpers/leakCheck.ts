/**
 * Global afterEach: a test that leaves a database handle, a child process, a
 * server or a timer registered in src/lib/resources.ts open fails, naming what
 * leaked. The leaked resources are closed so the next test starts clean.
 */
import { afterEach } from 'vitest';
import { openResources } from '../../src/lib/resources.js';

afterEach(async () => {
  const leaked = openResources();
  if (!leaked.length) return;
  const names = leaked.map((r) => `${r.kind} ${r.name}`);
  for (const r of leaked) {
    try {
      await r.close();
    } catch {
      // already broken; the failure below is what matters
    }
  }
  throw new Error(`Test leaked ${leaked.length} resource(s): ${names.join('; ')}`);
});
