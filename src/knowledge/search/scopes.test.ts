import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
    // A broken declaration reads no linked workspace, and no longer takes the project's own knowledge with it:
    // spec health says what is wrong.
    const file = join(main.root.workflowDir, 'workspaces.json');
    for (const [text, said] of [
      ['{"workspaces": [{"name": "Bad Name", "path": "x"}]}', `${file}: workspaces[0] needs a "name" of letters, digits, ".", "_" and "-"; it is not read.`],
      ['null', `${file} must be a JSON object like {"workspaces":[{"name":"api","path":"../api"}]}, got null. Its linked workspaces are not read; the project's own knowledge is.`],
      ['[]', `${file} must be a JSON object like {"workspaces":[{"name":"api","path":"../api"}]}, got a list. Its linked workspaces are not read; the project's own knowledge is.`],
      ['7', `${file} must be a JSON object like {"workspaces":[{"name":"api","path":"../api"}]}, got number. Its linked workspaces are not read; the project's own knowledge is.`],
      ['{"workspaces": ', `${file} is not valid JSON (it ends early, at line 1, column 16). Its linked workspaces are not read; the project's own knowledge is.`],
    ] as const) {
      writeFileSync(file, text);
      const broken = openKnowledge({ cwd: main.dir, includeGlobal: false, env: { ...process.env, MAESTRO_UID: 'ana' } });
      try {
        expect(broken.search('kestrel', { limit: 10 }).results.map((r) => r.id).sort(), text).toEqual(['spec:personal:ana:learnings-001', 'spec:project:learnings-001', 'spec:team:learnings-001']);
        const health = broken.health();
        expect(health.ok, text).toBe(false);
        expect(health.findings.filter((f) => f.file === file), text).toEqual([{ file, line: 1, severity: 'error', code: 'linked-workspaces', message: said }]);
      } finally {
        broken.close();
      }
    }
  });

  it("keeps what maestro search reads from a linked workspace outside the project out of the project's index file, which the repository's agents read: that index lives under $MAESTRO_HOME", () => {
    const main = tempRoot();
    const other = tempRoot();
    mkdirSync(join(other.root.workflowDir, 'specs'), { recursive: true });
    writeFileSync(join(other.root.workflowDir, 'specs', 'learnings.md'), entry('Vault hunter2-OUTSIDE'));
    appendSpecEntry(main.root, { category: 'learning', title: 'Project kestrel', content: 'kestrel', keywords: ['scope'] });
    const declaration = join(main.root.workflowDir, 'config.json');
    writeFileSync(declaration, JSON.stringify({ workspaces: { linked: [{ name: 'api', path: other.dir, share: ['spec'] }] } }));
    const home = join(main.dir, 'home');
    const env = { ...process.env, MAESTRO_HOME: home, MAESTRO_UID: 'ana' };
    const projectIndex = join(main.root.workflowDir, '.maestro-index.db');
    let location = '';
    for (const round of [1, 2]) {
      const k = openKnowledge({ cwd: main.dir, includeGlobal: false, env });
      try {
        expect(k.search('kestrel', { limit: 10 }).results.map((r) => r.id).sort(), `round ${round}`).toEqual(['spec:project:learnings-001', 'ws:api:spec:learnings-001']);
        expect(dirname(dirname(k.indexLocation))).toBe(join(home, 'indexes'));
        if (round === 2) expect(k.indexLocation, 'the same file again').toBe(location);
        location = k.indexLocation;
      } finally {
        k.close();
      }
      expect(existsSync(projectIndex), `round ${round}`).toBe(false);
    }
    expect(statSync(dirname(location)).mode & 0o777, 'the owner\'s alone').toBe(0o700);
    // A workspace inside the project: the index stays in .workflow/, as the daemon's does.
    mkdirSync(join(main.dir, 'packages', 'api', '.workflow', 'specs'), { recursive: true });
    writeFileSync(declaration, JSON.stringify({ workspaces: { linked: [{ name: 'api', path: 'packages/api', share: ['spec'] }] } }));
    const inside = openKnowledge({ cwd: main.dir, includeGlobal: false, env });
    try {
      expect(inside.indexLocation).toBe(projectIndex);
      expect(inside.search('kestrel', { limit: 10 }).results.map((r) => r.id)).toEqual(['spec:project:learnings-001']);
    } finally {
      inside.close();
    }
  });
});
