/**
 * The offline demo: with no project registered, `maestro serve` creates a
 * small generated git repository under $MAESTRO_HOME/demo, a project on it
 * driven by the scripted agent, and one parent task. Its gates approve
 * themselves after a few seconds and its question answers itself, unless a
 * person acts first, so it also runs to done unattended.
 *
 * Nothing is deleted to make the demo. It goes to the first of
 * `demo/greeter`, `demo/greeter-2`, … that does not exist or is an empty
 * folder, with its scenario and call log beside it under the same name. An
 * earlier demo (even one that looks untouched) is left as it is: a person may
 * have worked in it, and telling "untouched" apart safely would mean reading
 * its whole history, when a fresh folder costs nothing.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
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

/** The first free place for a demo repository under `root`: missing, or an empty folder. */
export function freeDemoSlot(root: string): string {
  for (let n = 1; ; n++) {
    const name = n === 1 ? 'greeter' : `greeter-${n}`;
    const dir = join(root, name);
    const taken = [dir, `${dir}.scenario.yaml`, `${dir}.calls.ndjson`].some((p) => existsSync(p) && !(p === dir && readdirSync(dir).length === 0));
    if (!taken) return dir;
  }
}

async function makeDemoRepo(dir: string): Promise<void> {
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
  mkdirSync(root, { recursive: true });
  const repo = freeDemoSlot(root);
  await makeDemoRepo(repo);
  const script = `${repo}.scenario.yaml`;
  writeFileSync(script, DEMO_SCENARIO);
  const callLog = `${repo}.calls.ndjson`;
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
