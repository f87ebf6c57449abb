import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempRoot } from '../../../test/helpers/knowledge.js';
import { openKnowledge } from '../knowledge.js';
import { appendSpecEntry } from '../format/specWriter.js';

const entry = (title: string) => `<spec-entry category="learning" keywords="scope" date="2026-01-01" title="${title}">\nscope word kestrel\n</spec-entry>\n`;

describe('scopes and linked workspaces', () => {
  it('gives every scope its id prefix and filters by workspace before the cut', async () => {
    const main = tempRoot();
    const other = tempRoot();
    appendSpecEntry(main.root, { category: 'learning', title: 'Project kestrel', content: 'kestrel', keywords: ['scope'] });
    appendSpecEntry(main.root, { category: 'learning', title: 'Team kestrel', content: 'kestrel', keywords: ['scope'], scope: 'team' });
    mkdirSync(join(main.root.workflowDir, 'collab', 'specs', 'ana'), { recursive: true });
    writeFileSync(join(main.root.workflowDir, 'collab', 'specs', 'ana', 'learnings.md'), entry('Personal kestrel'));
    mkdirSync(join(other.root.workflowDir, 'specs'), { recursive: true });
    writeFileSync(join(other.root.workflowDir, 'specs', 'learnings.md'), entry('Linked kestrel'));
    writeFileSync(join(main.root.workflowDir, 'workspaces.json'), JSON.stringify({ workspaces: [{ name: 'api', path: other.dir }] }));
    // A root given explicitly (the daemon's, an agent's, --workflow-root) reads a workspace outside it only where
    // its owner allows (the daemon: registered projects); the CLI in the project's folder reads what the file names.
    const confined = openKnowledge({ workflowRoot: main.dir, env: { ...process.env, MAESTRO_UID: 'ana' } });
    try {
      expect(confined.search('kestrel', { limit: 10 }).results.map((r) => r.id)).not.toContain('ws:api:spec:learnings-001');
    } finally {
      confined.close();
    }
    const k = openKnowledge({ cwd: main.dir, includeGlobal: false, env: { ...process.env, MAESTRO_UID: 'ana' } });
    try {
      const all = k.search('kestrel', { limit: 10 });
      expect(all.results.map((r) => r.id).sort()).toEqual(['spec:personal:ana:learnings-001', 'spec:project:learnings-001', 'spec:team:learnings-001', 'ws:api:spec:learnings-001']);
      expect(k.search('kestrel', { workspace: 'api' }).results.map((r) => r.id)).toEqual(['ws:api:spec:learnings-001']);
      expect(k.search('kestrel', { workspace: 'local', limit: 10 }).count).toBe(3);
      expect(await k.load('ws:api:spec:learnings-001')).toMatchObject({ title: 'Linked kestrel' });
    } finally {
      k.close();
    }
    writeFileSync(join(main.root.workflowDir, 'workspaces.json'), '{"workspaces": [{"name": "Bad Name", "path": "x"}]}');
    expect(() => openKnowledge({ env: process.env, workflowRoot: main.dir })).toThrow(/workspaces\[0\] needs a kebab-case "name"/);
    // Valid JSON that is no object: said naming the file, not a TypeError.
    const file = join(main.root.workflowDir, 'workspaces.json');
    for (const [text, got] of [['null', 'null'], ['[]', 'a list'], ['7', 'number']] as const) {
      writeFileSync(file, text);
      expect(() => openKnowledge({ env: process.env, workflowRoot: main.dir })).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID', message: `${file} must be a JSON object like {"workspaces":[{"name":"api","path":"../api"}]}, got ${got}.` }),
      );
    }
  });
});
