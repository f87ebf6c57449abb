/**
 * The offline demo: with no project registered, `maestro serve` creates a
 * small generated git repository under $MAESTRO_HOME/demo, a project on it
 * driven by the scripted agent, and one parent task. Its gates approve
 * themselves after a few seconds and its question answers itself, unless a
 * person acts first, so it also runs to done unattended.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Project, Task } from '../core/types.js';
import { git } from '../git/git.js';
import type { Store } from '../store/store.js';
import { DEMO_SCENARIO } from './scenario.js';

const SECOND = 1000;

export interface DemoOptions {
  /** How long a gate or a question waits for a person before the demo answers it. */
  autoApproveAfterMs?: number;
  autoReplyAfterMs?: number;
}

export const DEMO_PROJECT_NAME = 'demo';
export const DEMO_TASK_TITLE = 'Build a greeting command';

async function makeDemoRepo(dir: string): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'README.md'), '# greeter\n\nA tiny demo project for Maestro.\n');
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'greeter', version: '0.0.0', type: 'module', private: true }, null, 2)}\n`);
  writeFileSync(join(dir, 'src', '.gitkeep'), '');
  await git(dir, ['init', '-q', '-b', 'main']);
  await git(dir, ['add', '-A']);
  await git(dir, ['commit', '-q', '-m', 'Start the greeter']);
}

export async function createDemo(store: Store, home: string, options: DemoOptions = {}, name = DEMO_PROJECT_NAME): Promise<{ project: Project; task: Task }> {
  const root = join(home, 'demo');
  const repo = join(root, 'greeter');
  mkdirSync(root, { recursive: true });
  await makeDemoRepo(repo);
  const script = join(root, 'scenario.yaml');
  writeFileSync(script, DEMO_SCENARIO);
  const callLog = join(root, 'calls.ndjson');
  if (existsSync(callLog)) rmSync(callLog);
  const project = await store.projects.create({
    name,
    repoPath: repo,
    config: {
      provider: { kind: 'scripted', script, callLog },
      autoApproveAfterMs: options.autoApproveAfterMs ?? 3 * SECOND,
      autoReplyAfterMs: options.autoReplyAfterMs ?? 5 * SECOND,
      autoReply: 'Hello, {name}! Welcome to Maestro.',
      demo: true,
    },
  });
  const task = await store.tasks.create({
    projectId: project.id,
    title: DEMO_TASK_TITLE,
    complexity: 'medium',
    priority: 0,
    taskType: 'feature',
    scope: 'module',
    expectedOutput: '`node src/cli.js Ada` greets Ada, documented and tested',
  });
  return { project, task };
}
