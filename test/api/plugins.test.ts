/** The daemon serves the knowledge search and the observer's sessions next to the orchestrator API. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';

describe('knowledge and observer routes in the daemon', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop();
    d = null;
    removeTempDirs();
  });

  it('searches a project workflow root warm, and lists observer sessions', async () => {
    const repo = makeRepo();
    mkdirSync(join(repo, '.workflow', 'specs'), { recursive: true });
    writeFileSync(
      join(repo, '.workflow', 'specs', 'coding-conventions.md'),
      '---\ntitle: Coding conventions\ncategory: coding\n---\n\n<spec-entry category="coding" keywords="errors,catalogue" date="2026-11-01">\n### Errors come from one catalogue\nEvery user-visible error has a stable code from the catalogue.\n</spec-entry>\n',
    );
    d = await startTestDaemon({}, { noOrchestrator: true });
    await d.store.projects.create({ name: 'p', repoPath: repo });
    const res = await d.fetch(`/api/knowledge/search?q=catalogue%20errors&root=${encodeURIComponent(join(repo, '.workflow'))}`);
    const body = (await res.json()) as { results?: { name: string; id: string }[] };
    expect(res.status).toBe(200);
    expect(body.results?.[0]).toMatchObject({ name: 'Errors come from one catalogue', id: 'spec:project:coding-conventions-001' });
    const sessions = await d.fetch(`/api/observer/sessions`);
    expect(sessions.status).toBe(200);
    expect(Array.isArray(((await sessions.json()) as { sessions: unknown[] }).sessions)).toBe(true);
  });
});
