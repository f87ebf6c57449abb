/**
 * A scripted agent's files named through the API (src/daemon/scriptedPaths.ts): its script is a file in the
 * project's repository, links followed, and its call log, which the worker writes outside the agent sandbox, is
 * not an API setting. Through the real daemon (app.inject); a refusal names the field and saves nothing.
 */
import { existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';

describe("a scripted agent's paths through the API", () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
  });
  afterAll(async () => {
    await d.stop();
    removeTempDirs();
  });

  const call = async (method: 'POST' | 'PATCH', url: string, payload: unknown) => {
    const res = await d.app.inject({ method, url, payload: payload as object });
    return { status: res.statusCode, body: JSON.parse(res.body) };
  };
  const scripted = (provider: Record<string, unknown>) => ({ config: { provider: { kind: 'scripted', ...provider } } });

  it('refuses a script outside the repository (the token, a relative path, a link leading out), naming the field; nothing is saved', async () => {
    const repo = makeRepo();
    const elsewhere = join(tempDir('maestro-elsewhere-'), 's.yaml');
    writeFileSync(elsewhere, 'steps:\n  - actions: [{ text: ok }]\n');
    const registered = await call('POST', '/api/projects', { name: 'outside', repoPath: repo, ...scripted({ script: elsewhere }) });
    expect(registered.status).toBe(400);
    expect(registered.body.error).toMatchObject({ code: 'BAD_INPUT', message: `Invalid project settings: config.provider.script: ${elsewhere} is not in the project's repository ${repo}; give the absolute path of a script file in it (links are followed). Nothing was saved.` });
    expect(await d.store.projects.list()).toEqual([]);

    const script = join(repo, 'agent.yaml');
    const created = await call('POST', '/api/projects', { name: 'inside', repoPath: repo, ...scripted({ script }) });
    expect(created.status).toBe(201);
    const id = created.body.project.id as string;
    symlinkSync(elsewhere, join(repo, 'link.yaml'));
    for (const bad of [join(d.config.home, 'token'), 'agent.yaml', join(repo, 'link.yaml'), join(repo, '..', 'agent.yaml')]) {
      const res = await call('PATCH', `/api/projects/${id}`, scripted({ script: bad }));
      expect(res.status, bad).toBe(400);
      expect(res.body.error.message, bad).toContain(`config.provider.script: ${bad} is not in the project's repository`);
    }
    expect((await d.store.projects.get(id)).config).toEqual(scripted({ script }).config);
  });

  it('refuses a call log, in the home or in the repository, naming the field and writing nothing; settings stored by the daemon are kept when sent back', async () => {
    const repo = makeRepo();
    const script = join(repo, 'agent.yaml');
    const id = (await call('POST', '/api/projects', { name: 'logged', repoPath: repo, ...scripted({ script }) })).body.project.id as string;
    for (const callLog of [join(d.config.home, 'injected', 'calls.ndjson'), join(repo, 'calls.ndjson')]) {
      const res = await call('PATCH', `/api/projects/${id}`, scripted({ script, callLog }));
      expect(res.status, callLog).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'BAD_INPUT', message: 'Invalid project settings: config.provider.callLog: the call log is written outside the agent sandbox, so it is not set through the API; leave it out (each run then counts its own calls: docs/scripted-agent.md). Nothing was saved.' });
    }
    const registered = await call('POST', '/api/projects', { name: 'logged-too', repoPath: makeRepo(), ...scripted({ script: join(repo, 'x.yaml'), callLog: join(repo, 'calls.ndjson') }) });
    expect(registered.status).toBe(400);
    expect(registered.body.error.message).toContain('config.provider.script: ');
    expect(registered.body.error.message).toContain('config.provider.callLog: ');
    expect(existsSync(join(d.config.home, 'injected'))).toBe(false);
    expect((await d.store.projects.get(id)).config).toEqual(scripted({ script }).config);

    // The demo's way: its script and call log beside its repository, stored by the daemon; the board sends them back.
    const demoRepo = makeRepo();
    const demo = { kind: 'scripted', script: `${demoRepo}.scenario.yaml`, callLog: `${demoRepo}.calls.ndjson` };
    const stored = await d.store.projects.create({ name: 'demo-like', repoPath: demoRepo, config: { provider: demo } });
    const kept = await call('PATCH', `/api/projects/${stored.id}`, { config: { provider: demo, keepBranches: true } });
    expect(kept.status).toBe(200);
    expect((await d.store.projects.get(stored.id)).config).toEqual({ provider: demo, keepBranches: true });
    const moved = await call('PATCH', `/api/projects/${stored.id}`, { config: { provider: { ...demo, callLog: `${demoRepo}.other.ndjson` } } });
    expect(moved.status).toBe(400);
    expect(moved.body.error.message).toContain('config.provider.callLog: ');
  });
});
