/**
 * Real data for the knowledge and observer routes of test/api/responses.test.ts:
 * a git repository with code, the mf-workflow specs and knowhow (its fabric
 * session's run ledger too), a session with one staged candidate, and an
 * observer wiki in `<repo>/wiki` holding a session bundle, a torn one and a
 * curation proposal (set up as src/observer/curation/proposals.test.ts does,
 * without an agent). Folders come from test/helpers/db.ts: removeTempDirs().
 */
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createSession } from '../../src/knowledge/lifecycle/session/store.js';
import { TranscriptBuilder, writeEntry } from '../../src/observer/__fixtures__/transcript-builder.js';
import { resolveObserverConfig } from '../../src/observer/config.js';
import type { ObserverConfig } from '../../src/observer/config.js';
import { ObserverSession } from '../../src/observer/session.js';
import { tempDir } from '../helpers/db.js';
import { makeRepo } from '../helpers/repo.js';

const MF_WORKFLOW = fileURLToPath(new URL('../fixtures/knowledge/mf-workflow', import.meta.url));

export interface KnowledgeProject {
  dir: string;
  sessionId: string;
  candidate: string;
  observer: ObserverConfig;
  /** The observer session whose bundle reads, and the one whose bundle is torn. */
  bundled: string;
  torn: string;
}

/** The repository with its knowledge and a staged candidate (review queue: this session and the fixture's). */
function knowledgeRepo(): { dir: string; sessionId: string; candidate: string } {
  const dir = makeRepo({ 'README.md': '# wire\n', 'src/queue.ts': 'export function drainQueue(queue: string[]): void {\n  queue.length = 0;\n}\n' });
  cpSync(MF_WORKFLOW, dir, { recursive: true });
  const root = resolveWorkflowRoot({ env: process.env, workflowRoot: dir });
  createSession(root, 'task-1', 'teach the board');
  const c = stage(root, { target: 'spec', title: 'Queues drain before shutdown', content: 'Every queue is drained before the process shuts down, so no accepted job is lost.', category: 'coding', session: 'task-1', evidence: ['src/queue.ts:1'] }, process.env).candidate;
  return { dir, sessionId: 'task-1', candidate: c.candidate_id };
}

/** A devops question answered with a fact the wiki entry lacks, then a pivot so the intent closes: no agent, so a proposal. */
async function observerWiki(dir: string): Promise<{ observer: ObserverConfig; bundled: string; torn: string }> {
  const env = { FLOW_PROJECT_DIR: dir, FLOW_WIKI_DIR: join(dir, 'wiki'), CLAUDE_CONFIG_DIR: join(tempDir('maestro-wire-claude-'), 'claude') };
  const observer = resolveObserverConfig(env, dir);
  writeEntry(
    observer.wikiRoot,
    'contexts/devops/C001-nginx-websocket.md',
    { id: '"C001"', slug: '"nginx-websocket"', request: '"Configure the nginx reverse proxy for websockets"', version: '1', tags: ['proj:app', 'devops'], extraction_confidence: '0.9', status: '"draft"' },
    '# nginx websockets\n\n## 摘要\n\nUpgrade headers.\n\n## 解决方案\n\nAdd proxy_set_header Upgrade and Connection to the location block.\n',
  );
  const transcripts = tempDir('maestro-wire-jsonl-');
  for (const id of ['s-nginx', 's-torn']) {
    const jsonl = join(transcripts, `${id}.jsonl`);
    const b = new TranscriptBuilder(Date.parse('2026-11-20T10:00:00.000Z'));
    b.user('Configure the nginx reverse proxy for websockets').turn({ tools: [{ name: 'Edit', input: { file_path: 'deploy/nginx.conf' } }], answer: 'Set a longer proxy_read_timeout for idle websockets.' });
    b.user('Write the release notes for 2.3').turn({ tools: [{ name: 'Write', input: { file_path: 'CHANGELOG.md' } }], answer: 'Written.' });
    b.writeTo(jsonl);
    const now = b.clock + 60_000;
    const s = new ObserverSession({ sessionId: id, jsonlPath: jsonl, wikiRoot: observer.wikiRoot, workspaceRoot: observer.workspaceRoot, projectSlug: 'app', now: () => now });
    s.readOnce();
    await s.step();
  }
  writeFileSync(join(observer.wikiRoot, 'sessions', 's-torn', 'bundle.json'), '{ torn');
  return { observer, bundled: 's-nginx', torn: 's-torn' };
}

export async function knowledgeProject(): Promise<KnowledgeProject> {
  const repo = knowledgeRepo();
  return { ...repo, ...(await observerWiki(repo.dir)) };
}
