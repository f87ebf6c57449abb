/**
 * Run ledgers as a graph source: every `consumed` input of a run's
 * `knowledge-delta.json` (FORMATS §4.1) becomes a `consumed-by` edge from the
 * knowledge entry to the task (session) and run that used it. Ledgers hold no
 * entries of their own; a broken ledger is a finding, not an error.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { GraphEdge, KnowledgeSource, SourceFile } from '../format/entry.js';
import type { WorkflowRoot } from '../format/root.js';
import { jsonSyntaxWhere } from '../../lib/jsonError.js';

export function ledgerSource(root: WorkflowRoot): KnowledgeSource {
  const sessions = join(root.workflowDir, 'sessions');
  return {
    name: 'ledger',
    listFiles() {
      if (!existsSync(sessions)) return [];
      const out: SourceFile[] = [];
      for (const s of readdirSync(sessions, { withFileTypes: true })) {
        if (!s.isDirectory()) continue;
        const runs = join(sessions, s.name, 'runs');
        const candidates = [join(sessions, s.name, 'knowledge-delta.json')];
        if (existsSync(runs)) for (const r of readdirSync(runs, { withFileTypes: true })) if (r.isDirectory() || r.isSymbolicLink()) candidates.push(join(runs, r.name, 'knowledge-delta.json'));
        for (const p of candidates) {
          try {
            const st = statSync(p);
            out.push({ path: p, mtimeMs: st.mtimeMs, size: st.size });
          } catch {
            // no ledger for this run
          }
        }
      }
      return out;
    },
    readFile(path) {
      const finding = (message: string) => ({ entries: [], findings: [{ file: path, line: 1, severity: 'warning' as const, code: 'invalid-knowledge-ledger', message }] });
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (err) {
        return finding(`cannot be read: ${(err as Error).message}`);
      }
      let doc: { session_id?: string; run_id?: string; inputs?: Array<{ knowledge_id?: string; signal?: string }> };
      try {
        doc = JSON.parse(text) as typeof doc;
      } catch {
        // The place only: JSON.parse's message quotes the start of the file (a run folder may be a link; its ledger too).
        return finding(`not valid JSON (${jsonSyntaxWhere(text)})`);
      }
      try {
        const edges: GraphEdge[] = [];
        for (const input of doc.inputs ?? []) {
          if (input.signal !== 'consumed' || !input.knowledge_id) continue;
          if (doc.session_id) edges.push({ src: input.knowledge_id, rel: 'consumed-by', dst: `task:${doc.session_id}` });
          if (doc.run_id) edges.push({ src: input.knowledge_id, rel: 'consumed-by', dst: `run:${doc.run_id}` });
        }
        return { entries: [], findings: [], edges };
      } catch (err) {
        return finding(`not a knowledge ledger: ${(err as Error).message}`);
      }
    },
  };
}
