/**
 * Issue 16 item 7: the knowledge loop in the offline demo. The first run's
 * report records a decision and a constraint; the review queue shows them;
 * the demo promotes the decision by itself and leaves the constraint for a
 * person; the next tasks' briefs cite the promoted entry, and the board's
 * knowledge search finds it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JOB_FILE } from '../../src/executor/protocol/job.js';
import { sessionIdFor } from '../../src/knowledge/lifecycle/bridge.js';
import { openKnowledge } from '../../src/knowledge/knowledge.js';
import { review } from '../../src/knowledge/lifecycle/reconcile/review.js';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { parseSpecText } from '../../src/knowledge/format/specParser.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';
import { createLifecycleContext } from '../../src/knowledge/lifecycle/context.js';

// What the lifecycle operations keep between calls (the KnowledgeService's, in the daemon); no embedder here.
const lc = createLifecycleContext({ embedder: null });

const DECISION = 'The command line and the documentation call greet(name) from src/greet.js; no other module builds the greeting text.';
const CONSTRAINT = 'The greeting always names the person it greets.';

describe('the knowledge loop in the offline demo', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  it('records, promotes one decision by itself, leaves the constraint for review, and cites the promoted entry in later briefs', { timeout: budget(240_000) }, async () => {
    daemon = await startTestDaemon({ tickMs: 100, maxConcurrentRunsPerProject: 3 }, { demo: { autoApproveAfterMs: 200, autoReplyAfterMs: 200 } });
    const { store, bus } = daemon;
    const [project] = await store.projects.list();
    const [parent] = await store.tasks.list({ projectId: project!.id, parentId: null });
    await until(bus, async () => {
      const t = await store.tasks.get(parent!.id);
      if (t.status === 'needs_attention') throw new Error(`parent needs attention: ${t.lastRunError}`);
      return t.status === 'done';
    }, 'the demo parent task to be done', 200_000);

    const children = await store.tasks.list({ parentId: parent!.id });
    const define = children.find((c) => c.title === 'Define the greeting')!;
    const cli = children.find((c) => c.title === 'Add the command line')!;
    // As `maestro knowledge review` reads it with the daemon's MAESTRO_HOME: its run folders link into that home's runs/.
    const root = resolveWorkflowRoot({ env: { ...process.env, MAESTRO_HOME: daemon.config.home }, workflowRoot: project!.repoPath });

    // The decision was promoted by the demo itself, into the project's specs.
    const specFile = join(root.workflowDir, 'specs', 'architecture-constraints.md');
    expect(existsSync(specFile)).toBe(true);
    const promoted = parseSpecText(readFileSync(specFile, 'utf8'), specFile).entries.find((e) => e.content.includes(DECISION))!;
    expect(promoted.sid).toMatch(/^S-\d{8}-[a-f0-9]{16}$/);
    const events = (await store.events.list({ taskId: define.id, type: 'knowledge.promoted' })).events;
    expect(events.map((e) => e.payload.promoted)).toEqual([[promoted.sid]]);

    // The constraint waits in the review queue for a person.
    const queue = review(lc, root, sessionIdFor(define.id));
    const waiting = queue.candidates.filter((c) => c.status === 'pending');
    expect(waiting.map((c) => c.title)).toEqual([CONSTRAINT]);
    expect(waiting[0]).toMatchObject({ source_kind: 'constraint', promotion_eligibility: 'eligible' });

    // The next task's brief cites the promoted entry.
    const cliRun = (await store.runs.list({ taskId: cli.id })).find((r) => r.kind === 'execute')!;
    const job = JSON.parse(readFileSync(join(cliRun.runDir!, JOB_FILE), 'utf8')) as { project: { knowledge: string } };
    expect(job.project.knowledge).toContain(`[${promoted.sid}]`);

    // The board's Knowledge screen lists it: the same search its route runs.
    const k = openKnowledge({ env: process.env, workflowRoot: project!.repoPath });
    try {
      const found = (await k.searchHybrid('greeting text command line', { readOnlyProbe: true })).results;
      expect(found.map((r) => r.name)).toContain(promoted.title);
    } finally {
      k.close();
    }
  });
});
