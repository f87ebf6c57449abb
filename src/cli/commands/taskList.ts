/**
 * `maestro task list`: one page of tasks (500 by default, the API's), or every page with --all. The API
 * answers with the page, how many tasks match in all (`total`) and where the next page starts
 * (`nextOffset`); the table says on stderr when there are more, so a person is never shown 500 rows as if
 * they were all, and --json carries the two fields so a script can page too.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Task } from '../../core/types.js';
import type { TaskList } from '../../api/wire/responses.js';
import type { ApiClient } from '../../api/client.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../output.js';
import { clientFor, findProject, print, table, taskRow, withApi, type ClientFlags } from './common.js';

/** The API's page limits (taskListQuery in src/api/routes/schemas.ts). */
export const PAGE_MAX = 5000;
const OFFSET_MAX = 10_000_000;

/** A whole number from `min` to `max`, as typed: "-1", "1.5", "1e3" and "10abc" are refused (commander names the flag). */
export function parseWhole(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) throw new InvalidArgumentError(`a whole number from ${min} to ${max.toLocaleString('en-US')} is expected.`);
    return Number(value);
  };
}

/** What stderr says after a page with more after it; null when nothing was left out. */
export function moreNote(shown: number, offset: number, page: Pick<TaskList, 'total' | 'nextOffset'>): string | null {
  if (page.nextOffset === null) return null;
  const n = (x: number) => x.toLocaleString('en-US');
  const which = offset ? `${n(offset + 1)}–${n(offset + shown)}` : n(shown);
  const of = page.total === null ? 'more matched' : `of ${n(page.total)}`;
  return `${which} ${of} shown; --offset ${page.nextOffset} for the next page, --limit N (up to ${n(PAGE_MAX)}), --all, or --status / --project to narrow.`;
}

interface ListFlags extends ClientFlags {
  project?: string;
  status?: string[];
  limit?: number;
  offset?: number;
  all?: boolean;
}

/** Every page from `offset` on, PAGE_MAX at a time. */
async function allPages(client: ApiClient, query: Record<string, string | number | undefined>): Promise<{ tasks: Task[]; total: number | null }> {
  const tasks: Task[] = [];
  let offset: number | null = 0;
  let total: number | null = null;
  while (offset !== null) {
    const page: TaskList = await client.get<TaskList>('/api/tasks', { ...query, limit: PAGE_MAX, offset });
    tasks.push(...page.tasks);
    total = page.total;
    offset = page.nextOffset;
  }
  return { tasks, total };
}

export function registerTaskList(task: Command, ctx: CliContext, parseStatuses: (value: string) => string[]): void {
  withApi(
    task
      .command('list')
      .description('List tasks, 500 at a time (stderr says when there are more).')
      .option('--project <idOrName>', 'only this project')
      .option('--status <statuses>', 'comma-separated statuses', parseStatuses)
      .option('--limit <n>', `how many to show (1 to ${PAGE_MAX}; default 500)`, parseWhole(1, PAGE_MAX))
      .option('--offset <n>', 'how many to skip first, in creation order (default 0)', parseWhole(0, OFFSET_MAX))
      .addOption(new Option('--all', 'every task, however many (read a page at a time)').conflicts(['limit', 'offset'])),
  ).action(
    action(async (opts: ListFlags) => {
      const client = clientFor(opts, ctx.env);
      const projectId = opts.project ? (await findProject(client, opts.project)).project.id : undefined;
      const query = { projectId, status: opts.status?.join(',') };
      const offset = opts.offset ?? 0;
      const page: TaskList = opts.all ? { ...(await allPages(client, query)), nextOffset: null } : await client.get<TaskList>('/api/tasks', { ...query, limit: opts.limit, offset: opts.offset });
      if (opts.json) return printJson({ tasks: page.tasks, total: page.total, nextOffset: page.nextOffset });
      const { tasks } = page;
      if (!tasks.length) print(offset ? `No tasks from ${offset + 1} on.` : 'No tasks.');
      else print(table([['ID', 'STATUS', 'PRI', 'COMPLEXITY', 'TITLE'], ...tasks.map(taskRow)]));
      const note = moreNote(tasks.length, offset, page);
      if (note) process.stderr.write(`${note}\n`);
    }),
  );
}
