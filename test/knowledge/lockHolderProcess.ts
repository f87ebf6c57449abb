/**
 * Child process (test/helpers/lockHolder.ts starts it): another process holding `.workflow` locks, as a person's CLI
 * does (`maestro knowledge …`): it takes them synchronously (withCorpusLock), prints HELD, and keeps them, its thread
 * blocked, until a line arrives on its stdin; then it does its work under them, releases them and exits.
 *   hold <target…>                   only holds the corpus locks of the targets
 *   seal-run <projectDir> <sid> <rid> holds the run end's locks, then seals the run under them (`maestro run seal`)
 */
import { readSync } from 'node:fs';
import { join } from 'node:path';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { withCorpusLock } from '../../src/knowledge/format/lock.js';
import { sleepSync } from '../../src/lib/sleepSync.js';
import { createLifecycleContext } from '../../src/knowledge/lifecycle/context.js';
import { runEndLocks, sealRun } from '../../src/knowledge/lifecycle/session/ops.js';

/** Blocks until a line (or the end of stdin: the test died) arrives. */
function awaitLine(): void {
  const buf = Buffer.alloc(64);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf);
    } catch (err) {
      // A stdin the runtime made non-blocking: nothing yet.
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
        sleepSync(5);
        continue;
      }
      throw err;
    }
    if (n === 0 || buf.subarray(0, n).includes(10)) return;
  }
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'hold') {
  withCorpusLock(args, () => {
    process.stdout.write('HELD\n');
    awaitLine();
  });
} else if (mode === 'seal-run') {
  const [dir, sid, rid] = args;
  const root = resolveWorkflowRoot({ workflowRoot: dir!, env: { ...process.env, MAESTRO_HOME: join(dir!, '.home') } });
  withCorpusLock(runEndLocks(root, sid!, rid!), () => {
    process.stdout.write('HELD\n');
    awaitLine();
    sealRun(createLifecycleContext({ embedder: null }), root, sid!, rid!);
  });
} else {
  throw new Error(`unknown mode ${mode}`);
}
process.stdout.write('RELEASED\n');
