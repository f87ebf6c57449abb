/**
 * Child process for runEnd.test.ts: another process at a run's end, as a person's CLI or a second daemon on the
 * same project folder is. Each mode works in rounds, at least <min>, until the file <stop> exists, printing
 * STARTED after its first round and DONE <rounds> at the end; any error goes to stderr with exit code 1.
 *   refresh <projectDir> <stop> <min> <sid> <rid…>   reconciles each run in turn (`maestro knowledge review --refresh`)
 *   create-runs <projectDir> <stop> <min> <sid>      registers runs c-0, c-1, … one a round (`maestro run create`)
 *   stage <projectDir> <stop> <min> <sid> <rid…>     stages a candidate into the first of the runs not sealed
 *                                                    (`maestro knowledge stage --run`); RUN_SEALED, a run sealed
 *                                                    meanwhile, is the refusal a person sees, not a failure
 *   load <projectDir> <stop> <min> <sid> <rid…>      records a load (`maestro load` in an agent: $MAESTRO_RUN_DIR, the
 *                                                    run's folder in the daemon's home) into the first run not sealed
 *   stage-session <projectDir> <stop> <min> <sid…>   the same into the ledger of the first session still open
 *                                                    (`maestro knowledge stage --session`); ILLEGAL_TRANSITION is its refusal
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { createLifecycleContext } from '../../src/knowledge/lifecycle/context.js';
import { reconcileSource, runSourceInside } from '../../src/knowledge/lifecycle/reconcile/receipt.js';
import { isMaestroError } from '../../src/core/errors.js';
import { recordConsumed, stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createRun, isSealed, readRun, readSession } from '../../src/knowledge/lifecycle/session/store.js';

const [mode, dir, stop, min, sid, ...rids] = process.argv.slice(2);
const root = resolveWorkflowRoot({ workflowRoot: dir!, env: { ...process.env, MAESTRO_HOME: join(dir!, '.home') } });
const lc = createLifecycleContext({ embedder: null });
const round: Record<string, (i: number) => void> = {
  refresh: () => {
    for (const rid of rids) reconcileSource(lc, root, runSourceInside(root, sid!, rid));
  },
  'create-runs': (i) => {
    createRun(root, sid!, { runId: `c-${i}` });
  },
  stage: (i) => {
    const rid = rids.find((r) => !isSealed(readRun(root, sid!, r)));
    if (!rid) return;
    try {
      stage(root, { target: 'spec', title: `Staged ${i}`, content: `Rule number ${i} staged while the run ends.`, run: rid, session: sid! }, {});
    } catch (err) {
      if (!isMaestroError(err, 'RUN_SEALED')) throw err;
    }
  },
  load: () => {
    const rid = rids.find((r) => !isSealed(readRun(root, sid!, r)));
    if (!rid) return;
    const r = recordConsumed(root, ['S-20260101-aaaa'], { MAESTRO_RUN_DIR: join(dir!, '.home', 'runs', rid) });
    if (r.warning) throw new Error(r.warning);
  },
  'stage-session': (i) => {
    const open = [sid!, ...rids].find((s) => readSession(root, s).status === 'open');
    if (!open) return;
    try {
      stage(root, { target: 'spec', title: `Staged ${i}`, content: `Rule number ${i} staged while the session is sealed.`, session: open }, {});
    } catch (err) {
      if (!isMaestroError(err, 'ILLEGAL_TRANSITION')) throw err;
    }
  },
};
const step = round[mode!];
if (!step) throw new Error(`unknown mode ${mode}`);
let rounds = 0;
do {
  step(rounds++);
  if (rounds === 1) process.stdout.write('STARTED\n');
} while (rounds < Number(min) || !existsSync(stop!));
process.stdout.write(`DONE ${rounds}\n`);
