/**
 * A project's settings are replaced whole (PATCH /api/projects/:id), from settings a client read: the board's box,
 * the CLI's `project config set` (read, change a key, send it all). A change made from settings that have
 * changed since undid the other client's change without a word. Now the client sends what it read (`basedOn`),
 * and a change made from settings changed since is a 409 SETTINGS_CHANGED that saves nothing. Real daemon, the
 * CLI's own read and save (src/cli/commands/projectConfig.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { pickProject } from '../../src/cli/commands/common.js';
import { saveConfig, setKey } from '../../src/cli/commands/projectConfig.js';
import { removeTempDirs } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';

describe("two clients changing a project's settings", () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 0 });
    d = null;
    removeTempDirs();
  });

  it("a change made from settings changed since is refused, naming the keys, and the other client's change is kept", async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const provider = { kind: 'command', command: ['node', 'agent.mjs', '{prompt}'], env: { AGENT_KEY: 'sekrit-value' } };
    const { id } = await d.store.projects.create({ name: 'shop', repoPath: makeRepo(), config: { provider } });
    const client = new ApiClient({ url: d.url, token: d.token }, {});
    // Both clients read the settings (the provider's env value masked, as GET answers it).
    const board = await pickProject(client, 'shop');
    const cli = await pickProject(client, 'shop');
    await saveConfig(client, cli, setKey(cli.config, 'keepBranches', true));
    await expect(saveConfig(client, board, setKey(board.config, 'autoApproveAfterMs', 5000))).rejects.toMatchObject({
      code: 'SETTINGS_CHANGED',
      message: 'The settings of project shop changed since this change was made from them (keepBranches): nothing was saved, so that change is kept. Read them again (maestro project config get --project shop, or reload the board) and make yours on what is stored now.',
    });
    expect((await d.store.projects.get(id)).config).toEqual({ provider, keepBranches: true });
    // Read again, the change goes through, on top of the other one; the masked key keeps its value.
    const again = await pickProject(client, 'shop');
    await saveConfig(client, again, setKey(again.config, 'autoApproveAfterMs', 5000));
    expect((await d.store.projects.get(id)).config).toEqual({ provider, keepBranches: true, autoApproveAfterMs: 5000 });
    // The refused change is no event: one project.config event per saved change.
    const { events } = await d.store.events.list({ projectId: id, type: 'project.config', limit: 100 });
    expect(events.map((e) => (e.payload as { changed: string[] }).changed)).toEqual([['keepBranches'], ['autoApproveAfterMs']]);
  });

  it('a client that sends no basedOn replaces the settings as before', async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const { id } = await d.store.projects.create({ name: 'shop', repoPath: makeRepo(), config: { keepBranches: true } });
    const res = await daemonRequest(d, 'PATCH', `/api/projects/${id}`, { config: { autoApproveAfterMs: 0 }, who: 'me' });
    expect(res.status).toBe(200);
    expect((await d.store.projects.get(id)).config).toEqual({ autoApproveAfterMs: 0 });
  });
});
