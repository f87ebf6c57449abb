/**
 * Setting up an agent from the CLI (issue 15, item 4): `project add --provider`,
 * `project config get|set|unset` checked against the runner's provider schema,
 * and a daemon that runs tasks refusing a task its project could not run.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Project } from '../../src/core/types.js';
import { hasClaudeCredentials } from '../../src/daemon/jobs.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { cliFor, gitRepo } from './helpers.js';
import { budget } from '../helpers/budget.js';

afterEach(() => removeTempDirs());

describe('maestro project add --provider / project config', () => {
  it('sets and checks the provider, and task creation is refused until the project has a usable one', async () => {
    const d = await startTestDaemon({ tickMs: 60_000 });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const repo = gitRepo();

      const missing = await cli(['project', 'add', repo, '--provider', 'command', ...url]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('--provider command needs --command');
      expect(await d.store.projects.list()).toEqual([]);

      const other = gitRepo();
      const withCommand = await cliJson<{ project: Project }>(['project', 'add', other, '--name', 'cmd', '--provider', 'command', '--command', 'node "/opt/my agent.mjs" --model {model} {prompt}', ...url]);
      expect(withCommand.body.project.config.provider).toEqual({ kind: 'command', command: ['node', '/opt/my agent.mjs', '--model', '{model}', '{prompt}'], promptVia: 'arg' });

      // The prompt inside a shell's script would run as commands (a quote in a task title broke it, a $(…) ran):
      // refused where it is saved, nothing registered, with the form that passes it as data.
      const inScript = await cli(['project', 'add', gitRepo(), '--name', 'shelled', '--provider', 'command', '--command', `sh -c 'my-agent --fast {prompt}'`, ...url]);
      expect(inScript.code).toBe(2);
      expect(inScript.stderr).toContain(`provider.command.2: {prompt} is inside the script "my-agent --fast {prompt}" that sh runs as code`);
      expect(inScript.stderr).toContain(`["sh","-c","my-agent \\"$1\\"","sh","{prompt}"]`);
      expect((await d.store.projects.list()).map((p) => p.name)).toEqual(['cmd']);
      const asData = await cliJson<{ project: Project }>(['project', 'add', gitRepo(), '--name', 'shelled', '--provider', 'command', '--command', `sh -c 'my-agent --fast "$1"' sh {prompt}`, ...url]);
      expect(asData.body.project.config.provider).toEqual({ kind: 'command', command: ['sh', '-c', 'my-agent --fast "$1"', 'sh', '{prompt}'], promptVia: 'arg' });
      const setInScript = await cli(['project', 'config', 'set', 'provider.kind', 'command', 'provider.command', '["env","A=1","bash","-lc","agent {prompt}"]', '--project', 'shelled', ...url]);
      expect(setInScript.code).toBe(2);
      expect(setInScript.stderr).toContain('provider.command.4: {prompt} is inside the script "agent {prompt}" that bash runs as code');
      expect((await d.store.projects.get('shelled')).config.provider).toEqual(asData.body.project.config.provider);

      expect((await cli(['project', 'add', repo, '--name', 'bare', ...url])).code).toBe(0);
      const project = ['--project', 'bare'];
      if (!hasClaudeCredentials(process.env)) {
        const refused = await cli(['task', 'create', 'Add greeting', ...project, ...url]);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('Project bare cannot run tasks: it has no agent provider, and the default one (claude) has no credentials here');
        expect(refused.stderr).not.toContain('..');
        expect(refused.stderr).toContain("maestro project config set provider.kind command provider.command '[\"/path/to/agent\",\"{prompt}\"]' --project bare");
        // Archived, it takes no task whatever its provider: that is what is said.
        expect((await cli(['project', 'archive', 'bare', ...url])).code).toBe(0);
        const archived = await cli(['task', 'create', 'Add greeting', ...project, ...url]);
        expect(archived.code).toBe(1);
        expect(archived.stderr).toContain('Project bare is archived: no task can be created in it.');
        expect(archived.stderr).not.toContain('agent provider');
        expect((await cli(['project', 'restore', 'bare', ...url])).code).toBe(0);
      }

      const incomplete = await cli(['project', 'config', 'set', 'provider.kind', 'command', ...project, ...url]);
      expect(incomplete.code).toBe(2);
      expect(incomplete.stderr).toContain('Invalid provider: provider.command: the agent\'s argv as a list, such as ["my-agent","{prompt}"] (it is never run through a shell). Nothing was saved.');
      // Setting the kind starts the provider afresh, so its keys one command at a time never get there: said.
      expect(incomplete.stderr).toContain(`Set a provider's kind and its keys in one command, e.g. maestro project config set provider.kind command provider.command 'my-agent {prompt}'.`);
      const noKind = await cli(['project', 'config', 'set', 'provider.command', '["my-agent","{prompt}"]', ...project, ...url]);
      expect(noKind.code).toBe(2);
      expect(noKind.stderr).toContain('Invalid provider: provider.kind: not set: one of scripted, command, claude, codex, gemini, cursor, opencode. Nothing was saved. Set a provider');
      const badKind = await cli(['project', 'config', 'set', 'provider.kind', 'claude-code', ...project, ...url]);
      expect(badKind.stderr).toContain('provider.kind: "claude-code" is not a provider kind: one of scripted, command');
      // A command that is not a list or a text: the form it takes is shown.
      const aNumber = await cli(['project', 'config', 'set', 'provider.kind', 'command', 'provider.command', '42', ...project, ...url]);
      expect(aNumber.stderr).toContain('provider.command: the agent\'s argv as a list, such as ["my-agent","{prompt}"]');
      const unknownKey = await cli(['project', 'config', 'set', 'provider.kind', 'scripted', 'provider.scirpt', '/x.yaml', ...project, ...url]);
      expect(unknownKey.code).toBe(2);
      expect(unknownKey.stderr).toContain('provider.script: a scripted provider needs the path of its YAML or JSON script (docs/scripted-agent.md)');
      // The misspelt key with the one it is nearest to (a provider's keys depend on its kind: no list of them).
      expect(unknownKey.stderr).toContain('provider: Unrecognized key: "scirpt" (did you mean script?)');
      expect((await d.store.projects.get('bare')).config).toEqual({});

      // Saved, and said at once: no task can run with it (the agent may be installed next).
      const noAgent = await cli(['project', 'config', 'set', 'provider.kind', 'command', 'provider.command', '["/nonexistent/agent","{prompt}"]', ...project, ...url]);
      expect(noAgent.code).toBe(0);
      expect(noAgent.stdout).toContain('Saved provider.kind, provider.command for project bare.\nProject bare cannot run tasks: its command agent /nonexistent/agent does not exist or is not executable.');
      // Given as one text, as `project add --command` takes it: split into its argv, the prompt in {prompt}'s place.
      const asText = await cli(['project', 'config', 'set', 'provider.kind', 'command', 'provider.command', '/nonexistent/agent --fast "{prompt}"', ...project, ...url]);
      expect(asText.code).toBe(0);
      expect((await d.store.projects.get('bare')).config.provider).toEqual({ kind: 'command', command: ['/nonexistent/agent', '--fast', '{prompt}'], promptVia: 'arg' });
      const notThere = await cli(['task', 'create', 'Add greeting', ...project, ...url]);
      expect(notThere.code).toBe(1);
      expect(notThere.stderr).toContain('its command agent /nonexistent/agent does not exist or is not executable');

      // A script named through the API is a file in the project's repository (src/daemon/scriptedPaths.ts).
      const script = join(repo, 'agent.yaml');
      // A script that does not read as one is said when a task is made, with its line, not by the first run.
      writeFileSync(script, 'steps:\n  - match: { role: any }\n    actions:\n      - sing: true\n');
      const savedBad = await cli(['project', 'config', 'set', 'provider.kind', 'scripted', 'provider.script', script, ...project, ...url]);
      expect(savedBad.code).toBe(0);
      expect(savedBad.stdout).toContain(`Project bare cannot run tasks: its agent script is invalid: ${script}:4`);
      const badScript = await cli(['task', 'create', 'Add greeting', ...project, ...url]);
      expect(badScript.code).toBe(1);
      expect(badScript.stderr).toContain(`${script}:4`);
      writeFileSync(script, 'steps:\n  - match: { role: any }\n    actions:\n      - hang: true\n');
      const set = await cli(['project', 'config', 'set', 'provider.kind', 'scripted', 'provider.script', script, 'keepBranches', 'true', ...project, ...url]);
      expect(set.code).toBe(0);
      expect(set.stdout).toBe('Saved provider.kind, provider.script, keepBranches for project bare.\n');
      expect((await d.store.projects.get('bare')).config).toEqual({ provider: { kind: 'scripted', script }, keepBranches: true });
      expect((await cli(['project', 'config', 'get', 'provider.kind', ...project, ...url])).stdout).toBe('scripted\n');
      const all = await cliJson<{ config: Record<string, unknown> }>(['project', 'config', 'get', ...project, ...url]);
      expect(all.body.config).toEqual({ provider: { kind: 'scripted', script }, keepBranches: true });

      const created = await cliJson<{ task: { id: string; status: string } }>(['task', 'create', 'Add greeting', ...project, ...url]);
      expect(created.code).toBe(0);
      expect(created.body.task.status).toBe('ready');
      await d.store.tasks.transition(created.body.task.id, 'cancelled');

      expect((await cli(['project', 'config', 'unset', 'keepBranches', ...project, ...url])).code).toBe(0);
      expect((await d.store.projects.get('bare')).config).toEqual({ provider: { kind: 'scripted', script } });
      const none = await cli(['project', 'config', 'get', 'nothing.here', ...project, ...url]);
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('Project bare has no setting nothing.here');
    } finally {
      await d.stop({ graceMs: 1000 });
    }
  }, budget(300_000));

  it('says what switching auto-approval on, longer or off means for the tasks at a gate, and refuses a wait that is no whole number of milliseconds', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli } = cliFor(d.config.home);
      const args = ['--project', 'repo', '--url', d.url];
      const project = await d.store.projects.create({ name: 'repo', repoPath: gitRepo() });
      const { id } = await d.store.tasks.create({ projectId: project.id, title: 'Waits for a person' });
      for (const to of ['queued', 'executing', 'exec_review'] as const) await d.store.tasks.transition(id, to);

      const on = await cli(['project', 'config', 'set', 'autoApproveAfterMs', '0', ...args]);
      expect(on.code, on.stderr).toBe(0);
      expect(on.stdout).toBe('Saved autoApproveAfterMs for project repo: tasks reaching a gate from now on are approved after 0 ms without a person; the 1 already waiting still waits for you.\n');
      const longer = await cli(['project', 'config', 'set', 'autoApproveAfterMs', '60000', ...args]);
      expect(longer.stdout).toBe('Saved autoApproveAfterMs for project repo: tasks at a gate are approved after 60000 ms (60 s) without a person (it was 0 ms); 1 waiting since before it was switched on still waits for you.\n');
      const off = await cli(['project', 'config', 'unset', 'autoApproveAfterMs', ...args]);
      expect(off.stdout).toBe('Removed autoApproveAfterMs from project repo: every gate waits for a person again (1 waiting now).\n');
      // Another setting says nothing of it.
      expect((await cli(['project', 'config', 'set', 'keepBranches', 'true', ...args])).stdout).toBe('Saved keepBranches for project repo.\n');

      const events = async () => (await d.store.events.list({ projectId: project.id, limit: 1000 })).events.length;
      const before = { config: (await d.store.projects.get('repo')).config, events: await events() };
      // As typed, and named as typed (1e400, no JSON number, is sent as the text it is).
      for (const [bad, named] of [['-5', '-5'], ['1.5', '1.5'], ['"5s"', '"5s"'], ['5s', '"5s"'], ['1e400', '"1e400"']]) {
        const refused = await cli(['project', 'config', 'set', 'autoApproveAfterMs', bad!, ...args]);
        expect(refused.code, bad).toBe(2);
        expect(refused.stderr).toContain(`config.autoApproveAfterMs: ${named} is not a whole number of milliseconds, 0 or more. Nothing was saved.`);
      }
      expect({ config: (await d.store.projects.get('repo')).config, events: await events() }).toEqual(before);
      expect((await d.store.tasks.get(id)).status).toBe('exec_review');
    } finally {
      await d.stop({ graceMs: 1000 });
    }
  });

  it('refuses a task for a project whose .maestro/config.json every run would refuse, naming the file and what is wrong', async () => {
    const d = await startTestDaemon({ tickMs: 60_000 });
    try {
      const { cli } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const script = join(d.config.home, 'agent.yaml');
      writeFileSync(script, 'steps: []\n');
      const provider = { kind: 'scripted', script };
      const repo = gitRepo({ 'README.md': '# demo\n', '.maestro/config.json': '{"limits": {"maxDiffLines": "lots"}}\n' });
      await d.store.projects.create({ name: 'broken', repoPath: repo, config: { provider } });
      const refused = await cli(['task', 'create', 'Add greeting', '--project', 'broken', ...url]);
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toContain(`Project broken cannot run tasks: ${join(repo, '.maestro', 'config.json')}: limits.maxDiffLines:`);
      expect(refused.stderr).toContain('Fix it on main and commit it; no task was created. [CONFIG_INVALID]');
      expect(await d.store.tasks.list({})).toEqual([]);
      // Fixed on main: the task is taken.
      writeFileSync(join(repo, '.maestro', 'config.json'), '{"limits": {"maxDiffLines": 3000}}\n');
      expect((await cli(['task', 'create', 'Add greeting', '--project', 'broken', ...url])).code).toBe(0);
      // Broken again: a retry is refused as a new task is, rather than sent to a run that fails on the file.
      const [task] = await d.store.tasks.list({});
      expect((await cli(['task', 'cancel', task!.id, ...url])).code).toBe(0);
      writeFileSync(join(repo, '.maestro', 'config.json'), '{"limits": {"maxDiffLines": "lots"}}\n');
      const retry = await cli(['task', 'retry', task!.id, ...url]);
      expect(retry.code, retry.stderr).toBe(1);
      expect(retry.stderr).toContain(`Project broken cannot run tasks: ${join(repo, '.maestro', 'config.json')}: limits.maxDiffLines:`);
      expect(retry.stderr).toContain('Fix it on main and commit it; nothing was retried. [CONFIG_INVALID]');
      expect((await d.store.tasks.get(task!.id)).status).toBe('cancelled');
      // A file that is not JSON: its message ends a sentence once.
      writeFileSync(join(repo, '.maestro', 'config.json'), '{"limits":');
      const notJson = await cli(['task', 'create', 'Add greeting', '--project', 'broken', ...url]);
      expect(notJson.stderr).toContain(`Project broken cannot run tasks: ${join(repo, '.maestro', 'config.json')} is not valid JSON (it ends early, at line 1, column 11). Fix it on main`);
    } finally {
      await d.stop({ graceMs: 2000 });
    }
  });
});
