/**
 * `maestro task edit <id>`: changes the fields a person sets on a task (PATCH /api/tasks/:id), with the
 * options `task create` names them by. The daemon does every check (a run in flight, a finished task, a
 * cycle or a self-dependency) and its refusal is printed as any other; nothing is changed then. The plan is
 * not offered here: once proposed it changes only by a rejection with a reason (store/ops/editTask.ts).
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { COMPLEXITIES, TASK_SCOPES, TASK_TYPES, type Task } from '../../core/types.js';
import type { TaskResponse } from '../../api/wire/responses.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../output.js';
import { clientFor, list, parsePriority, print, withApi, type ClientFlags } from './common.js';
import { ownedFilesGiven, ownedFilesOptions } from './ownedFiles.js';
import { newestTask } from './taskReview.js';

interface EditFlags extends ClientFlags {
  title?: string;
  /** The text given, or false for --no-spec (commander's negated option): the same for each `string | false`. */
  spec?: string | false;
  priority?: number;
  complexity?: string;
  /** The ids given, or false for --no-deps. */
  deps?: string | false;
  /** The paths of --owned-files, or false for --no-owned-files; --owned-file's (ownedFiles.ts). */
  ownedFiles?: string[] | false;
  ownedFile?: string[];
  type?: string | false;
  scope?: string | false;
  expected?: string | false;
}

/** Each field an edit may change, as `task show` labels it and as it is printed. */
const FIELDS: Array<{ key: keyof Task; label: string; show: (t: Task) => string }> = [
  { key: 'title', label: 'title', show: (t) => t.title },
  { key: 'priority', label: 'priority', show: (t) => `P${t.priority}` },
  { key: 'complexity', label: 'complexity', show: (t) => t.complexity },
  { key: 'deps', label: 'depends on', show: (t) => t.deps.join(', ') || 'nothing' },
  { key: 'ownedFiles', label: 'owned files', show: (t) => t.ownedFiles.join(', ') || 'none' },
  { key: 'taskType', label: 'type', show: (t) => t.taskType ?? '-' },
  { key: 'scope', label: 'scope', show: (t) => t.scope ?? '-' },
  { key: 'expectedOutput', label: 'expected', show: (t) => t.expectedOutput ?? '-' },
  // A spec may run to pages: its size says it changed without flooding the terminal.
  { key: 'spec', label: 'spec', show: (t) => (t.spec === null ? '-' : `${t.spec.length} characters`) },
];

/** A --no- option clears its field: an empty list, or null for a field a task may be without. */
const orNull = (value: string | false): string | null => (value === false ? null : value);

/** The PATCH body the options ask for: only the fields given; a list option given empty is refused by then. */
function editBody(opts: EditFlags): Record<string, unknown> {
  const owned = ownedFilesGiven(opts);
  const body: Record<string, unknown> = {
    ...(opts.title !== undefined ? { title: opts.title } : {}),
    ...(opts.spec !== undefined ? { spec: orNull(opts.spec) } : {}),
    ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
    ...(opts.complexity ? { complexity: opts.complexity } : {}),
    ...(opts.deps !== undefined ? { deps: opts.deps === false ? [] : list(opts.deps) } : {}),
    ...(owned ? { ownedFiles: owned } : {}),
    ...(opts.type !== undefined ? { taskType: orNull(opts.type) } : {}),
    ...(opts.scope !== undefined ? { scope: orNull(opts.scope) } : {}),
    ...(opts.expected !== undefined ? { expectedOutput: orNull(opts.expected) } : {}),
  };
  if (!Object.keys(body).length) throw new InvalidArgumentError('Nothing to change: give at least one option (see maestro task edit --help).');
  return body;
}

/** "  title: Old → New" for each field that differs, in the order `task show` prints them. */
export function changedLines(before: Task, after: Task): string[] {
  return FIELDS.filter((f) => JSON.stringify(before[f.key]) !== JSON.stringify(after[f.key])).map((f) => `  ${f.label}: ${f.show(before)} → ${f.show(after)}`);
}

/**
 * The daemon takes a dependency named by a superseded version to mean that task's newest version (a task
 * waiting for the old one would never start): said, so the id stored is not a surprise in `task show`.
 */
export function newestDepsNote(given: readonly string[], stored: readonly string[]): string {
  const replaced = given.filter((id) => !stored.includes(id));
  return replaced.length ? `\n${replaced.join(', ')} ${replaced.length === 1 ? 'is an older version' : 'are older versions'}: it depends on the newest (${stored.join(', ')}).` : '';
}

export function registerEdit(task: Command, ctx: CliContext): void {
  const [ownedList, ownedPath] = ownedFilesOptions(true);
  withApi(
    task
      .command('edit <id>')
      .description("Change a task's title, spec, priority, complexity, dependencies, owned files, type, scope or expected output (not while a run is in flight; not once it is done).")
      .option('--title <text>', 'the new title')
      .option('--spec <text>', 'what the task must build, as its agents read it')
      .option('--no-spec', 'no spec')
      .option('--priority <n>', '0, 1 or 2 (P0 most urgent)', parsePriority)
      .addOption(new Option('--complexity <level>', 'how hard (picks the model tier)').choices(COMPLEXITIES))
      .option('--deps <ids>', 'comma-separated ids of tasks this one waits for (replaces its dependencies)')
      .option('--no-deps', 'wait for no task (drops every dependency)')
      .addOption(ownedList)
      .addOption(ownedPath)
      .option('--no-owned-files', 'no owned files')
      .addOption(new Option('--type <type>', 'task type').choices(TASK_TYPES))
      .option('--no-type', 'no task type')
      .addOption(new Option('--scope <scope>', 'how far the change reaches').choices(TASK_SCOPES))
      .option('--no-scope', 'no scope')
      .option('--expected <text>', 'what a finished task delivers')
      .option('--no-expected', 'no expected output'),
  ).action(
    action(async (id: string, opts: EditFlags) => {
      const body = editBody(opts);
      const client = clientFor(opts, ctx.env);
      // The read that finds the version to edit is the task as it stood: the PATCH answers it as it stands now.
      const before = await newestTask(client, id);
      const { task: after } = await client.request<TaskResponse>('PATCH', `/api/tasks/${encodeURIComponent(before.id)}`, { body });
      if (opts.json) return printJson({ task: after });
      const lines = changedLines(before, after);
      const note = Array.isArray(body.deps) ? newestDepsNote(body.deps as string[], after.deps) : '';
      print(lines.length ? `Edited ${after.id} (${after.status}):\n${lines.join('\n')}${note}` : `Nothing changed: ${after.id} already had those values.`);
    }),
  );
}
