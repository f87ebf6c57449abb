import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openKnowledge } from '../src/knowledge/knowledge.js';
import { loadDocs } from './cranfield.js';
const docs = loadDocs();
const dir = mkdtempSync(join(tmpdir(), 'cran-'));
mkdirSync(join(dir, '.workflow', 'knowhow'), { recursive: true });
for (const d of docs) writeFileSync(join(dir, '.workflow', 'knowhow', `DOC-19680101-cran-${d.id}.md`), `---\ntitle: ${JSON.stringify(d.title || `document ${d.id}`)}\ntype: document\n---\n\n${d.text}\n`);
const k = openKnowledge({ workflowRoot: dir, wikiRoot: null });
for (const q of process.argv.slice(2)) { const r = await k.searchHybrid(q, { limit: 5, readOnlyProbe: true }); console.log(q, '→', r.count, r.results.map((x) => `${x.name.slice(0,40)}:${x.score}`).join(' | ')); }
k.close(); rmSync(dir, { recursive: true, force: true });
