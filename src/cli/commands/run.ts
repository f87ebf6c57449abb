/** `maestro run list|show`: the agent runs behind tasks (needs the daemon). */
import type { Command } from 'commander';
import type { Run } from '../../core/types.js';
import { action, printJson } from '../output.js';
import { clientFor, print, table, withApi, type ClientFlags } from './common.js';
import { addRunLifecycleCommands } from './knowledgeRuns.js';
import type { CliContext } from '../context.js';
import { hangingIndent, oneLine } from '../../lib/visible.js';

function duration(r: Run): string {
  if (!r.endedAt) return 'running';
  return `${((r.endedAt - r.startedAt) / 1000).toFixed(1)} s`;
}

export function register(program: Command, ctx: CliContext): void {
  const run = program.command('run').description('Agent runs (list|show need the daemon) and knowledge runs (create|complete|check|seal).');
  addRunLifecycleCommands(run, ctx);

  withApi(run.command('list').description('List runs, oldest first.').option('--task <id>', 'only the runs of this task')).action(
    action(async (opts: ClientFlags & { task?: string }) => {
      const client = clientFor(opts, ctx.env);
      // The filter alone answers "no runs" for a mistyped id: ask for the task first, so that says "no task".
      if (opts.task) await client.get(`/api/tasks/${encodeURIComponent(opts.task)}`);
      const { runs } = await client.get<{ runs: Run[] }>('/api/runs', { taskId: opts.task });
      if (opts.json) return printJson({ runs });
      if (!runs.length) return print('No runs.');
      print(table([['ID', 'TASK', 'KIND', 'STATUS', 'MODEL', 'TIME'], ...runs.map((r) => [r.id, r.taskId, r.kind, r.status, r.model ?? '-', duration(r)])]));
    }),
  );

  withApi(run.command('show <id>').description('Show a run: status, the daemon that ran it, model, tokens, cost, trace id, error.')).action(
    action(async (id: string, opts: ClientFlags) => {
      const { run: r } = await clientFor(opts, ctx.env).get<{ run: Run }>(`/api/runs/${encodeURIComponent(id)}`);
      if (opts.json) return printJson({ run: r });
      const lines = [
        `run ${r.id} (${r.kind}) of task ${r.taskId}: ${r.status}`,
        // Which daemon ran it (its name on a shared database, runs.owner): the one whose terminal and log tell more.
        ...(r.owner ? [`  daemon: ${oneLine(r.owner)}`] : []),
        `  model: ${r.model ?? '-'}   attempt: ${r.attempt}   time: ${duration(r)}`,
        `  tokens: ${r.inputTokens} in, ${r.outputTokens} out   cost: $${r.costUsd.toFixed(4)}`,
        `  trace: ${r.traceId}`,
      ];
      // An agent's or a tool's words, over lines maybe: they stay under the label.
      if (r.error) lines.push(`  error: ${hangingIndent(r.error, '    ')}`);
      print(lines.join('\n'));
    }),
  );
}
