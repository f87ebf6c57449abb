/** `maestro status`: is a daemon up, and how do its projects stand. */
import type { Command } from 'commander';
import { MaestroError } from '../../core/errors.js';
import { EXIT_ERROR, action, printJson } from '../output.js';
import { clientFor, gateSteps, print, withApi, type ClientFlags } from './common.js';
import { formatCounts } from './project.js';
import type { HealthResponse, ProjectDetail, ProjectList, TaskBoardList } from '../../api/wire/responses.js';
import type { TaskStatus } from '../../core/status.js';
import type { TaskSummary } from '../../core/taskSummary.js';
import { oneLine } from '../../lib/visible.js';
import type { CliContext } from '../context.js';

/** What waits for a person: a gate, a question, or work stopped until someone decides. */
const WAITING: readonly TaskStatus[] = ['plan_review', 'spec_review', 'exec_review', 'awaiting_input', 'needs_attention'];
/** How many of them `status` lists (the rest are counted, with the command that lists them all). */
const WAITING_SHOWN = 20;

export function register(program: Command, ctx: CliContext): void {
  withApi(program.command('status').description('Say whether the daemon runs, list projects with their task counts and the tasks that wait for you, with what to run next (exit 1 when no daemon answers).')).action(
    action(async (opts: ClientFlags) => {
      const client = clientFor(opts, ctx.env);
      const down = await client.probe();
      if (down) {
        // Something else on that address (another server, a proxy's page) is said with what it answered, as every
        // other command says it: "No daemon answers" sent a person to start one on a port that was taken. So is a
        // daemon whose health check itself failed (its database gone): it answers, and starting another will not help.
        const code = down instanceof MaestroError ? down.code : null;
        const foreign = code === 'NOT_A_DAEMON' ? down.message : null;
        const failing = !foreign && code !== 'DAEMON_UNREACHABLE' ? `The daemon at ${client.baseUrl} answers, but its health check failed: ${down.message}` : null;
        if (opts.json) printJson({ daemon: { url: client.baseUrl, running: false, ...(foreign ? { notADaemon: foreign } : {}), ...(failing ? { healthFailed: down.message } : {}) }, projects: [] });
        else print(foreign ?? failing ?? `No daemon answers at ${client.baseUrl}. Start one with \`maestro serve\`.`);
        process.exitCode = EXIT_ERROR;
        return;
      }
      const { conditions } = await client.get<HealthResponse>('/api/health');
      const { projects } = await client.get<ProjectList>('/api/projects');
      const rows = [];
      for (const p of projects) {
        const { tasksByStatus } = await client.get<ProjectDetail>(`/api/projects/${encodeURIComponent(p.id)}`);
        rows.push({ id: p.id, name: p.name, repoPath: p.repoPath, tasksByStatus });
      }
      const waiting = await client.get<TaskBoardList>(`/api/tasks?view=board&status=${WAITING.join(',')}&limit=${WAITING_SHOWN}`);
      const waitingCount = rows.reduce((n, r) => n + WAITING.reduce((m, s) => m + (r.tasksByStatus[s] ?? 0), 0), 0);
      if (opts.json) return printJson({ daemon: { url: client.baseUrl, running: true, conditions }, projects: rows, waitingForYou: waiting.tasks });
      print(`Daemon running at ${client.baseUrl}`);
      // What holds its work back (a full disk, a remote it cannot reach) is said here too, not only by doctor.
      for (const c of conditions) print(`  ${c.code}: ${c.message}`);
      if (!rows.length) print('No projects yet. Add one with `maestro project add <path>`.');
      for (const r of rows) print(`  ${r.name} (${r.id}): ${formatCounts(r.tasksByStatus)}`);
      if (waiting.tasks.length) print(waitingLines(waiting.tasks, waitingCount).join('\n'));
    }),
  );
}

/** The tasks that wait for a person, each with what to run next; the count beyond those shown, with how to list them. */
export function waitingLines(tasks: TaskSummary[], total: number): string[] {
  const lines = [`Waiting for you (${Math.max(total, tasks.length)}):`];
  for (const t of tasks) lines.push(`  ${t.id}  ${t.status}  ${oneLine(t.title)}: ${nextStep(t)}`);
  const more = total - tasks.length;
  if (more > 0) lines.push(`  and ${more} more: maestro task list --status ${WAITING.join(',')}`);
  return lines;
}

function nextStep(t: TaskSummary): string {
  if (t.status === 'awaiting_input') return `maestro task show ${t.id} (its question), then maestro task reply ${t.id} <answer>`;
  if (t.status === 'needs_attention') return `maestro task show ${t.id} (why it stopped, and the ways out)`;
  return gateSteps(t.id, t.status);
}
