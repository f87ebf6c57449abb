/**
 * One promoting process for the concurrency and kill -9 tests:
 * `promoteWorker.ts <projectDir> <sessionId> [candidateId]` (`--all` without a
 * candidate). Retries while its receipt is stale because another process
 * promoted first (fail closed, then refresh). With MAESTRO_KNOWLEDGE_CRASH_AFTER_WRITE=<candidate id>
 * it kills itself (-9) through promote's afterWrite seam, right after that candidate's knowledge file is written.
 */
import { promote } from '../../src/knowledge/lifecycle/promote/promote.js';
import { review } from '../../src/knowledge/lifecycle/reconcile/review.js';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { createLifecycleContext } from '../../src/knowledge/lifecycle/context.js';

// What the lifecycle operations keep between calls (the KnowledgeService's, in the daemon); no embedder here.
const lc = createLifecycleContext({ embedder: null });

const [dir, sid, candidate] = process.argv.slice(2) as [string, string, string | undefined];
const root = resolveWorkflowRoot({ env: process.env, workflowRoot: dir });
const crashAfter = process.env.MAESTRO_KNOWLEDGE_CRASH_AFTER_WRITE;
const afterWrite = (id: string) => {
  if (id === crashAfter) process.kill(process.pid, 'SIGKILL');
};
for (let attempt = 0; attempt < 50; attempt++) {
  try {
    const r = promote(lc, root, sid, { ...(candidate ? { candidates: [candidate] } : { all: true }), afterWrite });
    process.stdout.write(`${JSON.stringify({ attempts: attempt + 1, promoted: r.promoted, already_promoted: r.already_promoted })}\n`);
    process.exit(0);
  } catch (err) {
    if ((err as { code?: string }).code !== 'STALE_RECEIPT') throw err;
    review(lc, root, sid, { refresh: true });
  }
}
process.exit(3);
