/**
 * `maestro task …`: create, list, show, edit (taskEdit.ts), approve / reject a gate, reply,
 * inject, cancel, retry, logs. Each is one API call (logs --follow is the SSE
 * stream); `--json` prints the API's answer, whose fields are stable.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { MaestroError } from '../../core/errors.js';
import { ownCar, reviewedHead } from '../../core/reviewed.js';
import { GATE_STATUSES, LAST_ERROR_STATUSES, TASK_STATUSES } from '../../core/status.js';
import { COMPLEXITIES, GATES, RUN_KINDS, TASK_SCOPES, TASK_TYPES, type Task, type TaskStatus } from '../../core/types.js';
import { action, printJson } from '../output.js';
import { clientFor, pickProject, list, parsePriority, print, withApi, type ClientFlags } from './common.js';
import { baseMovedLine } from './baseMovedLine.js';
import { mergeCheckLine, mergeTurnLine } from './mergeCheckLine.js';
import { attentionAdvice } from './attentionAdvice.js';
import { claimLine } from './claimLine.js';
import { diffGateAdvice } from './diffGateAdvice.js';
import { mergeConflictAdvice } from './mergeConflictAdvice.js';
import { newestDepsNote, registerEdit } from './taskEdit.js';
import { registerTaskList } from './taskList.js';
import { knowledgeElsewhereLines, stagedKnowledge, stagedKnowledgeLine } from './taskKnowledge.js';
import { SHOWN_ITEMS, shortList } from './shortList.js';
import { ownedFilesGiven, ownedFilesOptions } from './ownedFiles.js';
import { followTask, printTranscript, type RunChoice } from './taskLogs.js';
import { hangingIndent, oneLine, visible } from '../../lib/visible.js';
import { nearestKey } from '../../lib/unknownKeys.js';
import { actOnNewest, describeEvidence, fetchEvidence, newestVersion, parseComment, registerDiff } from './taskReview.js';
import type { CancelResponse, RejectResponse, RunMessageResponse, TaskDetail, TaskResponse } from '../../api/wire/responses.js';
import type { CliContext } from '../context.js';

function parseStatuses(value: string): string[] {
  const statuses = list(value);
  const bad = statuses.filter((s) => !(TASK_STATUSES as readonly string[]).includes(s));
  // A misspelt one with the status it is nearest to (`doen`: did you mean done?), as a misspelt option is.
  const meant = bad.flatMap((b) => nearestKey(b, TASK_STATUSES) ?? []);
  const hint = meant.length ? ` (did you mean ${meant.join(', ')}?)` : '';
  if (bad.length) throw new InvalidArgumentError(`unknown status ${bad.join(', ')}${hint}; statuses are ${TASK_STATUSES.join(', ')}.`);
  return statuses;
}

interface CreateFlags extends ClientFlags {
  project?: string;
  priority?: number;
  complexity?: string;
  deps?: string;
  ownedFiles?: string[];
  ownedFile?: string[];
  type?: string;
  scope?: string;
  expected?: string;
  spec?: string;
  parent?: string;
}

/** Where the later lines of a field's text start: past the fields' own two. */
const MORE = ' '.repeat(4);

export function describeTask(task: Task, runs: { id: string; kind: string; status: string }[], children: Task[]): string {
  const lines = [
    `${task.title}`,
    `  id: ${task.id}   status: ${task.status}   priority: P${task.priority}   complexity: ${task.complexity}   version: ${task.version}`,
  ];
  if (task.taskType || task.scope) lines.push(`  type: ${task.taskType ?? '-'}   scope: ${task.scope ?? '-'}`);
  if (task.deps.length) lines.push(`  depends on: ${task.deps.join(', ')}`);
  if (task.ownedFiles.length) lines.push(`  owned files: ${task.ownedFiles.map(oneLine).join(', ')}`);
  // Text of any length, from a person or an agent: its later lines stay under its label (hangingIndent).
  if (task.expectedOutput) lines.push(`  expected: ${hangingIndent(task.expectedOutput, MORE)}`);
  // What the agent was asked for beyond the title: a person deciding at a gate reads it beside the change.
  if (task.spec) lines.push('  spec:', ...task.spec.split('\n').map((l) => `    ${l}`));
  // As on the board: the last error while it explains the wait, not once the task got past it (a gate, done).
  if (task.lastRunError && LAST_ERROR_STATUSES.includes(task.status)) lines.push(`  last error: ${hangingIndent(task.lastRunError, MORE)}`);
  if (task.feedback) lines.push(`  feedback: ${hangingIndent(task.feedback, MORE)}`);
  // What `task diff` shows and `task approve --commit` names: not the branch tip, which may have moved since.
  // Checked together with other changes, the chain's tip is theirs too: its own merge commit there (as the diff).
  const head = reviewedHead(task);
  const reviewed = head ? (ownCar(task)?.sha ?? head) : null;
  if (reviewed) lines.push(`  reviewed commit: ${reviewed}${task.status === 'exec_review' ? ` (maestro task diff ${task.id} shows it; approve --commit ${reviewed} approves only it)` : ''}`);
  for (const a of task.approvals) {
    // Approved, yet waiting at that gate again: a conflict run's resolution came after the approval, and waits for one of its own.
    const earlier = a.decision === 'approve' && a.gate === task.status ? ` (of an earlier change: the task waits at ${a.gate} again)` : '';
    // A conflict run's resolution is approved at exec_review again, often with the same words: say which was which.
    const what = a.conflictResolution ? ' of the conflict resolution' : '';
    lines.push(`  ${a.gate}: ${a.decision}${what} by ${a.who}${earlier}${a.reason ? ` — ${hangingIndent(a.reason, MORE)}` : ''}`);
  }
  if (runs.length) lines.push(`  runs: ${runs.map((r) => `${r.kind} ${r.status} (${r.id})`).join(', ')}`);
  if (children.length) lines.push(`  subtasks${children.length > SHOWN_ITEMS ? ` (${children.length.toLocaleString('en-US')})` : ''}: ${shortList(children.map((c) => `${c.id} ${c.status}`))}`);
  if (task.plan) lines.push('  plan:', ...task.plan.split('\n').map((l) => `    ${l}`));
  return lines.join('\n');
}

/** What a person at the task's gate can run (approve, or reject with a reason, which makes a new version); null off a gate. */
export function gateNext(task: Task): string | null {
  if (!GATE_STATUSES.includes(task.status)) return null;
  const reject = `maestro task reject ${task.id} --reason "…" sends it back as a new version`;
  if (task.status === 'exec_review') return `It waits for you at exec_review: maestro task diff ${task.id} shows the change, maestro task approve ${task.id} merges it, ${reject}.`;
  const what = task.status === 'spec_review' ? 'plan and spec' : 'plan';
  return `It waits for you at ${task.status}: maestro task approve ${task.id} accepts the ${what} above, ${reject} to plan again.`;
}

export function register(program: Command, ctx: CliContext): void {
  const task = program.command('task').description('Create tasks, watch them and act at their gates (needs the daemon).');
  taskCreate(task, ctx);
  registerTaskList(task, ctx, parseStatuses);
  taskShow(task, ctx);
  registerEdit(task, ctx);
  registerDiff(task, ctx);
  taskApprove(task, ctx);
  taskReject(task, ctx);
  taskMessages(task, ctx);
  taskCancel(task, ctx);
  taskRetry(task, ctx);
  taskLogs(task, ctx);
}

/** The --gate option of approve and reject (a fresh Option each: commander options are not shared). */
function gate(): Option {
  return new Option('--gate <gate>', 'the gate (default: the one the task waits at)').choices(GATES);
}

/** `task create`: a task in a project. */
function taskCreate(task: Command, ctx: CliContext): void {
  const [ownedList, ownedPath] = ownedFilesOptions(false);
  withApi(
    task
      .command('create <title>')
      .description('Create a task in a project.')
      .option('--project <idOrName>', 'the project (id or name; default: the one holding this folder, or the only one)')
      .option('--priority <n>', '0, 1 or 2 (P0 most urgent; default 1)', parsePriority)
      .addOption(new Option('--complexity <level>', 'how hard (picks the model tier; default medium)').choices(COMPLEXITIES))
      .option('--deps <ids>', 'comma-separated ids of tasks this one waits for')
      .addOption(ownedList)
      .addOption(ownedPath)
      .addOption(new Option('--type <type>', 'task type').choices(TASK_TYPES))
      .addOption(new Option('--scope <scope>', 'how far the change reaches').choices(TASK_SCOPES))
      .option('--expected <text>', 'what a finished task delivers')
      // The only moment a person can give it surely: a ready task is claimed within a tick, and `task edit` waits for its run to end.
      .option('--spec <text>', 'what the task must build, as its agents read it (under the title in every prompt)')
      .option('--parent <id>', 'the parent task'),
  ).action(
    action(async (title: string, opts: CreateFlags) => {
      const ownedFiles = ownedFilesGiven(opts);
      const client = clientFor(opts, ctx.env);
      const project = await pickProject(client, opts.project);
      const body = {
        projectId: project.id,
        title,
        ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
        ...(opts.complexity ? { complexity: opts.complexity } : {}),
        ...(opts.deps ? { deps: list(opts.deps) } : {}),
        ...(ownedFiles ? { ownedFiles } : {}),
        ...(opts.type ? { taskType: opts.type } : {}),
        ...(opts.scope ? { scope: opts.scope } : {}),
        ...(opts.expected ? { expectedOutput: opts.expected } : {}),
        ...(opts.spec ? { spec: opts.spec } : {}),
        ...(opts.parent ? { parentId: opts.parent } : {}),
      };
      const { task: t } = await client.post<TaskResponse>('/api/tasks', body);
      if (opts.json) printJson({ task: t });
      else {
        print(`Created task ${t.id} (${t.status}) in ${project.name}: ${t.title}${opts.deps ? newestDepsNote(list(opts.deps), t.deps) : ''}`);
        // A dependency that cannot finish as it stands (cancelled, needing attention) holds the new task from the start: said now, with the ways out.
        const stuckOn = t.deps.length ? (await client.get<TaskDetail>(`/api/tasks/${encodeURIComponent(t.id)}`)).stuckOn : undefined;
        if (stuckOn?.length) print(stuckLine(t, stuckOn));
      }
    }),
  );
}

/** `task show`: one task with its runs, versions, checks and findings. */
function taskShow(task: Command, ctx: CliContext): void {
  withApi(task.command('show <id>').description('Show a task with its approvals, runs, subtasks, version chain, check results and review findings.')).action(
    action(async (id: string, opts: ClientFlags) => {
      const client = clientFor(opts, ctx.env);
      const answer = await client.get<TaskDetail>(`/api/tasks/${encodeURIComponent(id)}`);
      const evidence = await fetchEvidence(client, answer.task.id);
      // A session that does not read (its project folder gone, a corrupt file) is said, and the rest is shown.
      const knowledge = answer.task.status === 'exec_review' ? await stagedKnowledge(client, answer.task, ctx.env).catch((err: Error) => (process.stderr.write(visible(`maestro: what this task's runs staged for the knowledge review is not known: ${err.message}\n`)), null)) : null;
      if (opts.json) return printJson({ ...answer, checks: evidence.checks?.checks ?? [], verdicts: evidence.findings?.verdicts ?? [], findings: evidence.findings?.findings ?? [], ...(answer.task.status === 'exec_review' ? { knowledge } : {}) });
      const more = describeEvidence(answer.versions ?? [], answer.task.id, evidence.checks, evidence.findings);
      // The question first: it is what the task waits on.
      const asked = answer.question ? `The agent asks:\n  ${hangingIndent(answer.question.text, '  ')}\nAnswer with: maestro task reply ${answer.task.id} "<your answer>"\n\n` : '';
      const blocked = answer.mergeBlocked ? `An approval will not merge yet: ${oneLine(answer.mergeBlocked)}.\n\n` : '';
      // Beside the gate, as on the board: whether the merge lands on a base the checks never saw.
      const moved = answer.baseMoved ? `\n\n${baseMovedLine(answer.baseMoved)}` : '';
      const steering = answer.task.status === 'exec_review' && answer.steeringFiles?.length
        ? `This change edits files that steer later runs: ${answer.steeringFiles.map(oneLine).join(', ')} (hooks and checks run as code; specs and knowhow go into every later agent's prompt, without the knowledge review).\n\n`
        : '';
      const elsewhere = answer.task.status === 'exec_review' && answer.runsElsewhere?.length
        ? `This change edits files that run code outside Maestro once merged: ${answer.runsElsewhere.map(oneLine).join(', ')} (CI runs its workflows on the next push; git hooks, dev containers, editor settings and tasks, and direnv or mise on entering the folder run on the machines of whoever checks it out; package scripts run on install and test).\n\n`
        : '';
      const stuck = answer.stuckOn?.length ? `${stuckLine(answer.task, answer.stuckOn)}\n\n` : '';
      const waits = answer.waitingOn?.length ? `${waitLine(answer.waitingOn)}\n\n` : '';
      const slot = answer.waitingForSlot ? `${slotLine(answer.waitingForSlot)}\n\n` : '';
      const runSlot = answer.waitingForRun ? `${runSlotLine(answer.waitingForRun, answer.task.status)}\n\n` : '';
      const checking = answer.mergeCheck ? `${mergeCheckLine(answer.mergeCheck, answer.baseBranch)}\n\n` : '';
      const turn = answer.mergeTurn ? `${mergeTurnLine(answer.mergeTurn)}\n\n` : '';
      const held = answer.heldBack?.length ? `${answer.heldBack.map((c) => `This daemon holds it back: ${oneLine(c.message)}`).join('\n')}\n\n` : '';
      const elsewhereClaim = answer.claimedElsewhere ? `${claimLine(answer.claimedElsewhere, answer.task.status)}\n\n` : '';
      const refused = answer.diffGate ? `${diffGateAdvice(answer.task, answer.diffGate)}\n\n` : '';
      const conflict = answer.mergeConflict ? `${mergeConflictAdvice(answer.task, answer.mergeConflict)}\n\n` : '';
      // Any other stop: how to see why, and the ways out (said last, as a gate's commands are).
      const attention = refused || conflict ? null : attentionAdvice(answer.task, answer.runs.length > 0);
      // Last, after the plan or the change's checks and findings it is decided on: what to run at the gate.
      const gate = gateNext(answer.task);
      const staged = knowledge ? `\n\n${stagedKnowledgeLine(knowledge)}` : '';
      const notHere = answer.task.status === 'exec_review' ? knowledgeElsewhereLines(answer.task, answer.knowledgeElsewhere).map((l) => `\n\n${l}`).join('') : '';
      print(asked + blocked + steering + elsewhere + stuck + waits + slot + runSlot + checking + turn + held + elsewhereClaim + refused + conflict + describeTask(answer.task, answer.runs, answer.children) + (more ? `\n${more}` : '') + staged + notHere + moved + (gate ? `\n\n${gate}` : '') + (attention ? `\n\n${attention}` : ''));
    }),
  );
}

/**
 * Why a ready task does not start, and the two ways out as commands: retry the dependency, or edit the task's
 * dependencies to the others (`--no-deps` when none is left: an empty `--deps ''` is refused as an empty value).
 */
export function stuckLine(task: Task, stuckOn: ReadonlyArray<{ id: string; title: string; status: string }>): string {
  const named = (ds: typeof stuckOn) => ds.map((d) => `${d.id} "${oneLine(d.title)}" (${d.status})`).join(', ');
  // A superseded version is replaced, not retried: the same deps given again are stored as the newest versions.
  const replaced = stuckOn.filter((d) => d.status === 'superseded');
  const repoint = replaced.length ? `It depends on an older version of ${replaced.length === 1 ? 'a task' : 'tasks'}: ${named(replaced)}. Point it at the newest (maestro task edit ${task.id} --deps ${task.deps.join(',')}).` : '';
  const waiting = stuckOn.filter((d) => d.status !== 'superseded');
  if (!waiting.length) return `It cannot start. ${repoint}`;
  const stuck = new Set(stuckOn.map((d) => d.id));
  const rest = task.deps.filter((d) => !stuck.has(d));
  const retry = waiting.length === 1 ? `maestro task retry ${waiting[0]!.id}` : 'maestro task retry <id>';
  const drop = `maestro task edit ${task.id} ${rest.length ? `--deps ${rest.join(',')}` : '--no-deps'}`;
  return `It cannot start: it depends on ${named(waiting)}. Retry that (${retry}) or drop it from its deps (${drop}).${repoint ? ` ${repoint}` : ''}`;
}

/**
 * What a ready task waits for among its dependencies still on their way; one at a gate or asking a question waits
 * for a person, and the line says how to answer it.
 */
export function waitLine(waitingOn: ReadonlyArray<{ id: string; title: string; status: string }>): string {
  const person = (d: { id: string; status: string }) =>
    GATE_STATUSES.includes(d.status as TaskStatus) ? `: it waits for your approval, maestro task approve ${d.id}` : d.status === 'awaiting_input' ? `: it asks you a question, maestro task show ${d.id}` : '';
  return `It starts when its dependencies are done: ${waitingOn.map((d) => `${d.id} "${oneLine(d.title)}" (${d.status}${person(d)})`).join(', ')}.`;
}

/** Why a ready task has not started, as `task show` says it (or null): a dependency stuck or on its way, or no place. */
function notStartedLine(d: TaskDetail): string | null {
  if (d.stuckOn?.length) return stuckLine(d.task, d.stuckOn);
  if (d.waitingOn?.length) return waitLine(d.waitingOn);
  return d.waitingForSlot ? slotLine(d.waitingForSlot) : null;
}

/** Why a ready task whose dependencies are done does not start: its project's places on the daemon are taken. */
export function slotLine(wait: { limit: number; held: ReadonlyArray<{ id: string; title: string; status: string }> }): string {
  const asking = wait.held.filter((t) => t.status === 'awaiting_input');
  const answer = asking.length ? ` ${asking.length === 1 ? 'One waits' : `${asking.length} wait`} for your answer and ${asking.length === 1 ? 'keeps its place' : 'keep their places'} until you reply (maestro task show <id> shows the question).` : '';
  return `It waits for a place: the daemon takes at most ${wait.limit} tasks of this project at a time (maxConcurrentRunsPerProject), and these hold them: ${wait.held.map((t) => `${t.id} "${oneLine(t.title)}" (${t.status})`).join(', ')}.${answer}`;
}

/** Why a claimed task stands with no run: the daemon holding it has every run slot taken (maxConcurrentRuns). */
export function runSlotLine(wait: { daemon: string; limit: number; running: ReadonlyArray<{ taskId: string; kind: string }> }, status: TaskStatus): string {
  const runs = wait.running.map((r) => `${r.kind} of ${r.taskId}`).join(', ');
  return `It waits for a run slot on daemon ${oneLine(wait.daemon)}: it runs at most ${wait.limit} at a time (maxConcurrentRuns), and has ${runs} going. Its ${status === 'reviewing' ? 'review' : 'next stage'} starts there when one of them ends.`;
}

/**
 * `task approve`: passes the gate the task waits at. Unlike the other commands it acts on the very version
 * named: an approval says "I have seen this change", so an id a rejection superseded is refused with the
 * newest version's id, never taken to mean a change the person has not looked at. `--commit` ties it to the
 * commit looked at (`task diff` prints it): the daemon refuses it (STALE_REVIEW) when another waits at the gate
 * now. Without it, whatever is reviewed then is approved, as before: the CLI keeps no memory of what it showed.
 */
function taskApprove(task: Command, ctx: CliContext): void {
  withApi(
    task
      .command('approve <id>')
      .description('Approve the gate the task waits at (the version named, never a newer one).')
      .addOption(gate())
      .option('--reason <text>', 'why (kept with the approval)')
      .option('--commit <sha>', 'at exec_review: the commit you looked at (the full sha task diff prints); refused if another commit waits at the gate now'),
  ).action(
    action(async (id: string, opts: ClientFlags & { gate?: string; reason?: string; commit?: string }) => {
      const client = clientFor(opts, ctx.env);
      const { id: target, status, from, mergeBlocked } = await newestVersion(client, id);
      if (from) {
        const next = (GATE_STATUSES as readonly string[]).includes(status)
          ? // At exec_review a change to look at; at a plan or spec gate its plan (task diff has no branch to show yet: NO_DIFF).
            `look at the new version (${status === 'exec_review' ? `maestro task diff ${target}` : `its plan: maestro task show ${target}`}), then approve it by its id`
          : `the new version is ${status}, at no gate either`;
        throw new MaestroError('WRONG_GATE', `${from} was superseded by ${target} (a rejection made a new version), so it is at no gate. Nothing was approved: ${next}.`);
      }
      const body = { ...(opts.gate ? { gate: opts.gate } : {}), ...(opts.reason ? { reason: opts.reason } : {}), ...(opts.commit !== undefined ? { commit: opts.commit } : {}) };
      const { task: t } = await client.post<TaskResponse>(`/api/tasks/${encodeURIComponent(target)}/approve`, body);
      if (opts.json) printJson({ task: t });
      else {
        print(`Approved ${t.approvals.at(-1)?.gate ?? opts.gate ?? 'the gate'} of ${t.id}${opts.commit ? ` at commit ${opts.commit.slice(0, 12)}` : ''}; it is now ${t.status}.`);
        // What `task show` said before the approval, said again now: the merge it starts will stop on it.
        if (mergeBlocked && t.status === 'merging') process.stderr.write(`maestro: the merge will stop: ${oneLine(mergeBlocked)}. Then \`maestro task retry ${t.id}\` merges it.\n`);
      }
    }),
  );
}

/** `task reject`: fails the gate; the API makes the next version. */
function taskReject(task: Command, ctx: CliContext): void {
  withApi(
    task
      .command('reject <id>')
      .description('Reject the gate; a new task version carries your reason and line comments.')
      .addOption(gate())
      .requiredOption('--reason <text>', 'what to change')
      .option('--comment <file:line:text>', "a remark on one line of the change, its number in the changed file (task diff's hunk header @@ -a +N counts from N; repeatable)", parseComment),
  ).action(
    action(async (id: string, opts: ClientFlags & { gate?: string; reason: string; comment?: Array<{ file: string; line: number; text: string }> }) => {
      const client = clientFor(opts, ctx.env);
      const target = await actOnNewest(client, id);
      const body = { ...(opts.gate ? { gate: opts.gate } : {}), reason: opts.reason, ...(opts.comment?.length ? { comments: opts.comment } : {}) };
      const answer = await client.post<RejectResponse>(`/api/tasks/${encodeURIComponent(target)}/reject`, body);
      if (opts.json) printJson(answer);
      else print(`Rejected ${answer.task.approvals.at(-1)?.gate ?? opts.gate ?? 'the gate'} of ${answer.task.id}; version ${answer.next.version} is ${answer.next.id} (${answer.next.status}).`);
    }),
  );
}

/** `task reply` and `task inject`: a message to the running agent. */
function taskMessages(task: Command, ctx: CliContext): void {
  for (const [name, what] of [
    ['reply', "Answer the agent's clarifying question (the task must be awaiting_input)."],
    ['inject', "Add an instruction to the running agent's next turn."],
  ] as const) {
    withApi(task.command(`${name} <id> <text>`).description(what)).action(
      action(async (id: string, text: string, opts: ClientFlags) => {
        const client = clientFor(opts, ctx.env);
        const answer = await client.post<RunMessageResponse>(`/api/tasks/${encodeURIComponent(await actOnNewest(client, id))}/${name}`, { message: text });
        if (opts.json) printJson(answer);
        else print(name === 'reply' ? `Replied to ${id} (run ${answer.runId}).` : `Queued the instruction for ${id} (run ${answer.runId}).`);
      }),
    );
  }
}

/** `task cancel`. */
function taskCancel(task: Command, ctx: CliContext): void {
  withApi(task.command('cancel <id>').description('Cancel a task and its unfinished subtasks; their running workers are stopped.').option('--reason <text>', 'why')).action(
    action(async (id: string, opts: ClientFlags & { reason?: string }) => {
      const client = clientFor(opts, ctx.env);
      const answer = await client.post<CancelResponse>(`/api/tasks/${encodeURIComponent(await actOnNewest(client, id))}/cancel`, opts.reason ? { reason: opts.reason } : {});
      if (opts.json) printJson(answer);
      else print(cancelledLine(answer));
    }),
  );
}

/** "Cancelled t_1." or "Cancelled t_1 and its 2 unfinished subtasks (t_2 First, t_3 Second)." */
export function cancelledLine({ task: t, subtasksCancelled: subs }: CancelResponse): string {
  if (!subs.length) return `Cancelled ${t.id}.`;
  const which = shortList(subs.map((s) => `${s.id} ${s.title}`));
  return `Cancelled ${t.id} and its ${subs.length === 1 ? 'unfinished subtask' : `${subs.length.toLocaleString('en-US')} unfinished subtasks`} (${which}).`;
}

/**
 * `task retry`. `--commit`: a merge conflict the person resolved by hand on the task's branch, merged as that commit;
 * `--fresh`: the task run again from the current main, as its next version (store/ops/conflictRetry.ts).
 */
function taskRetry(task: Command, ctx: CliContext): void {
  withApi(
    task
      .command('retry <id>')
      .description('Retry a task that needs attention or was cancelled.')
      .option('--fresh', 'run it again from the current main: a new version on a new branch (its plan kept), this one superseded')
      .option('--commit <sha>', 'a merge conflict you resolved by hand on its branch: merge that commit (the full sha), with no conflict run'),
  ).action(
    action(async (id: string, opts: ClientFlags & { fresh?: boolean; commit?: string }) => {
      const client = clientFor(opts, ctx.env);
      const body = { ...(opts.fresh ? { fresh: true } : {}), ...(opts.commit !== undefined ? { commit: opts.commit } : {}) };
      const { task: t } = await client.post<TaskResponse>(`/api/tasks/${encodeURIComponent(await actOnNewest(client, id))}/retry`, body);
      if (opts.json) printJson({ task: t });
      else if (opts.fresh) print(`Running ${id} again from the current main: version ${t.version} is ${t.id} (${t.status}).`);
      else print(`Retrying ${t.id}; it is now ${t.status}${t.status === 'waiting_children' ? ' (its cancelled subtasks are ready again)' : ''}${opts.commit ? ` (merging ${opts.commit.slice(0, 12)})` : ''}.`);
    }),
  );
}

/**
 * `task logs`: a run's transcript (the latest, --run one of the task's runs, or --kind the latest of a kind: at
 * exec_review the latest is the review run, and `--kind execute` is the change's own output without copying an
 * id), or the live stream with --follow, which follows whatever run is current and so takes neither.
 */
function taskLogs(task: Command, ctx: CliContext): void {
  withApi(
    task
      .command('logs <id>')
      .description("Print the transcript of one of the task's runs (the latest unless --run or --kind says which), naming its other runs; --follow streams the live run, into the next version after a reject.")
      .option('--run <runId>', 'the run to show (task show lists them)')
      .addOption(new Option('--kind <kind>', 'the latest run of this kind').choices(RUN_KINDS).conflicts('run'))
      .addOption(new Option('-f, --follow', 'stream tokens and phases as they come, until the task (or its newest version) finishes').conflicts(['run', 'kind'])),
  ).action(
    action(async (id: string, opts: ClientFlags & RunChoice & { follow?: boolean }) => {
      const client = clientFor(opts, ctx.env);
      if (opts.follow) await followTask(client, id, Boolean(opts.json), notStartedLine);
      else await printTranscript(client, id, Boolean(opts.json), { run: opts.run, kind: opts.kind });
    }),
  );
}
