/**
 * `maestro task logs`: the transcript of one run (the latest, or the one named with --run, or the latest of a kind
 * with --kind), or with --follow the live SSE stream of the task's current run. It says which run it shows and names
 * the task's other runs: at exec_review the latest is the review run, and the execute run's output is one option away.
 * A dropped stream is reopened with Last-Event-ID so nothing is missed or printed twice. Following goes on into the
 * next version when a rejection supersedes the task, and ends when the chain's newest version is finished (done,
 * cancelled) or needs attention; a task that reaches a gate is said once to wait there for a person (gateLine). A
 * run's end is said as its daemon recorded it (runOutcome.ts), not as its worker's result item has it. What the
 * stream's replay left out (one replay.truncated event, however many runs it spans) gets one line naming the runs and
 * the `task logs --run` that shows each. What an agent wrote is shown without its colours, and every other control
 * sequence as text (visibleWithoutColours): a clipboard write, a cursor move or a concealed word in a log is not run.
 * Its lines after the first are indented under the entry (or, following, under the phase) they belong to, so that none
 * starts where Maestro's own lines do ("Other runs of …", "══ … is done ══"). Our own lines, which name task ids the
 * daemon answered, go through printText: no control character in them reaches the terminal.
 */
import { MaestroError } from '../../core/errors.js';
import { GATE_STATUSES, TERMINAL_STATUSES } from '../../core/status.js';
import type { ApiClient, SseEvent } from '../../api/client.js';
import type { RunList, TaskDetail } from '../../api/wire/responses.js';
import { hangingIndent, oneLine, visibleWithoutColours } from '../../lib/visible.js';
import { printText } from '../output.js';
import { claimLine, claimQuiet } from './claimLine.js';
import { finishedRunLine, resultOf } from './runOutcome.js';
import { gateSteps } from './common.js';

interface TranscriptEntry {
  at?: number;
  stage?: string;
  role?: string;
  text?: string;
}

type RunRef = { id: string; kind: string; status: string };

/** Which run `task logs` shows: `run` names one of the task's runs, `kind` asks for the latest of that kind. */
export interface RunChoice {
  run?: string;
  kind?: string;
}

const named = (runs: readonly RunRef[]) => runs.map((r) => `${r.kind} ${r.id} (${r.status})`).join(', ');

/** The run to show: the one named, the latest of the kind asked for, else the latest (null: the task has none). */
export function pickRun(taskId: string, runs: readonly RunRef[], choice: RunChoice): RunRef | null {
  const theirs = runs.length ? `its runs: ${named(runs)}` : 'it has no runs yet';
  if (choice.run) {
    const run = runs.find((r) => r.id === choice.run);
    if (!run) throw new MaestroError('UNKNOWN_RUN', `Run ${choice.run} is not one of ${taskId}'s runs; ${theirs}.`, { details: { runId: choice.run, taskId } });
    return run;
  }
  if (choice.kind) {
    const run = runs.filter((r) => r.kind === choice.kind).at(-1);
    if (!run) throw new MaestroError('UNKNOWN_RUN', `${taskId} has no ${choice.kind} run; ${theirs}.`, { details: { kind: choice.kind, taskId } });
    return run;
  }
  return runs.at(-1) ?? null;
}

/** Runs a task may have that `task logs` lists (the runs route's largest page); a task retried for weeks has a few dozen. */
const RUNS_LISTED = 5000;

/**
 * Prints one run's transcript (pickRun), between a line naming the run and one naming the task's other runs
 * and how to ask for them. The transcript is asked for by run id: a run that starts in between does not change
 * what is shown under the line that names it.
 */
export async function printTranscript(client: ApiClient, id: string, json: boolean, choice: RunChoice = {}): Promise<void> {
  const runs: RunRef[] = (await client.get<RunList>('/api/runs', { taskId: id, limit: RUNS_LISTED })).runs.map((r) => ({ id: r.id, kind: r.kind, status: r.status }));
  // No run, or no such task: the transcript route tells them apart (UNKNOWN_TASK), the runs route does not.
  if (!runs.length) await transcriptOf(client, id, null);
  const run = pickRun(id, runs, choice);
  const entries = run ? await transcriptOf(client, id, run.id) : [];
  if (json) {
    process.stdout.write(`${JSON.stringify({ taskId: id, runId: run?.id ?? null, entries, runs }, null, 2)}\n`);
    return;
  }
  if (!run) {
    printText(`No transcript yet for ${id}.\n`);
    return;
  }
  const latest = runs.length > 1 && run === runs.at(-1) ? ` (the latest of ${runs.length} runs)` : '';
  printText(`Run ${run.id} of ${id}: ${run.kind}, ${run.status}${latest}.\n`);
  if (!entries.length) printText('No transcript yet for this run.\n');
  for (const e of entries) printText(`[${oneLine(e.stage ?? '?')}] ${oneLine(e.role ?? '?')}: ${hangingIndent(visibleWithoutColours(e.text ?? ''), AGENT_INDENT)}\n`);
  const others = runs.filter((r) => r !== run);
  // --kind for a kind other than this run's: the latest of its own kind may be this very run.
  const otherKind = others.filter((r) => r.kind !== run.kind).at(-1)?.kind;
  if (others.length) printText(`Other runs of ${id}: ${named(others)}. Show one with: maestro task logs ${id} --run <runId>${otherKind ? ` (or --kind ${otherKind})` : ''}.\n`);
}

async function transcriptOf(client: ApiClient, id: string, runId: string | null): Promise<TranscriptEntry[]> {
  const res = await client.raw('GET', `/api/tasks/${encodeURIComponent(id)}/transcript${runId ? `?runId=${encodeURIComponent(runId)}` : ''}`);
  const text = await res.text();
  const entries: TranscriptEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line) as TranscriptEntry);
    } catch {
      // a torn last line while the run writes: skip it
    }
  }
  return entries;
}

/** Statuses after which no more output comes without a person acting (cancelled and needs_attention wait for a retry). */
const FOLLOW_ENDS: readonly string[] = [...TERMINAL_STATUSES, 'cancelled', 'needs_attention'];

function finished(status: string): boolean {
  return FOLLOW_ENDS.includes(status);
}

/**
 * The line said once when the followed task reaches a gate: no more output comes until a person decides, and
 * following goes on through the decision (a merge then ends it, a reject follows the next version). Without it the
 * stream just went quiet after the run's last line, the command still open, and nothing said what it waited for.
 */
export function gateLine(taskId: string, gate: string): string {
  return `\n══ ${taskId} waits at ${gate} for you: ${gateSteps(taskId, gate)}; still following ══\n`;
}

/** Where an agent's lines start, in a transcript entry after its first and in the live stream: past Maestro's own. */
const AGENT_INDENT = '  ';

/**
 * Maestro's own line for a stream item other than the agent's text, or '' (a question and an error may span lines).
 * `taskId`: the task followed, for the command that shows what a replay left out.
 */
function ownLine(taskId: string, event: string | undefined, data: Record<string, unknown>): string {
  const field = (key: string, fallback = '') => oneLine(String(data[key] ?? fallback));
  switch (event) {
    case 'phase':
      return `\n── ${field('stage')}: ${field('state')} ──\n`;
    case 'clarify':
      return `\n? ${hangingIndent(String(data.question ?? ''), '  ')}\n  (answer with: maestro task reply <id> "<answer>")\n`;
    case 'error':
      return `\n! ${field('code', 'error')}: ${hangingIndent(String(data.message ?? ''), '  ')}\n`;
    // 'result': only that the worker finished. How the run ended is the daemon's to say (its stored outcome):
    // followTask prints that once the stream has stopped there (finishedRunLine).
    case 'replay.truncated':
      // The daemon replays at most 1 MiB of a task's outboxes (a follow started late, a reconnect far behind).
      return leftOutLine(taskId, data);
    default:
      return '';
  }
}

/**
 * The one line for what a replay left out: the runs (`runs`, oldest first; a daemon before it named one run per
 * event, in `runId`) and the command that shows each in full.
 */
function leftOutLine(taskId: string, data: Record<string, unknown>): string {
  const ids = Array.isArray(data.runs) ? data.runs.map((r) => (r as { runId?: unknown }).runId) : [data.runId];
  const runs = ids.map((id) => oneLine(String(id ?? '')));
  const show = `maestro task logs ${oneLine(taskId)} --run`;
  if (runs.length === 1) return `\n… earlier output of run ${runs[0]} left out here, too long to replay; \`${show} ${runs[0]}\` has it all\n`;
  const commands = [`\`${show} ${runs[0]}\``, ...runs.slice(1).map((r) => `\`--run ${r}\``)];
  return `\n… earlier output of ${runs.length} runs (${runs.join(', ')}) left out here, too long to replay; ${commands.slice(0, -1).join(', ')} and ${commands.at(-1)} have it all\n`;
}

/**
 * The text to print for each item of the live stream: Maestro's own lines as ownLine says them, and the agent's
 * tokens each line indented by AGENT_INDENT. A token is cut anywhere (mid-line, mid-word), so whether the next one
 * starts a line is carried from one to the next.
 */
export function streamRenderer(taskId: string): (e: SseEvent) => string {
  let atLineStart = true;
  const agentText = (text: string) => {
    let out = '';
    for (const [i, part] of text.split('\n').entries()) {
      if (i > 0) {
        out += '\n';
        atLineStart = true;
      }
      if (!part) continue;
      out += `${atLineStart ? AGENT_INDENT : ''}${part}`;
      atLineStart = false;
    }
    return out;
  };
  return (e) => {
    let data: Record<string, unknown> = {};
    try {
      data = JSON.parse(e.data) as Record<string, unknown>;
    } catch {
      return '';
    }
    if (e.event === 'token') return agentText(visibleWithoutColours(String(data.text ?? '')));
    const own = ownLine(taskId, e.event, data);
    if (own) atLineStart = true;
    return own;
  };
}

const RETRY_MS = [250, 500, 1000, 2000, 5000];
/** How long the daemon may stay away before following gives up. */
const GIVE_UP_MS = 60_000;
/** How often the task's status is looked at while its stream is open (a gate decision sends no stream item). */
const WATCH_MS = 1500;

type Detail = TaskDetail;

/** The version after `id` in its chain, if a rejection made one. */
function nextVersion(d: Detail): { id: string; version: number } | null {
  const chain = d.versions ?? [];
  const i = chain.findIndex((v) => v.id === d.task.id);
  return i >= 0 && i + 1 < chain.length ? chain[i + 1]! : null;
}

/**
 * Follows a task's chain of versions: the live stream of the current
 * version's runs; when a rejection supersedes it, the next version's. Ends
 * when the chain's newest version is finished or needs a person.
 */
export async function followTask(client: ApiClient, id: string, json: boolean, notStarted: (d: Detail) => string | null = () => null): Promise<void> {
  const detail = (taskId: string) => client.get<Detail>(`/api/tasks/${encodeURIComponent(taskId)}`);
  let d = await detail(id);
  for (let next = nextVersion(d); d.task.status === 'superseded' && next; next = nextVersion(d)) {
    if (!json) printText(`══ ${d.task.id} (version ${d.task.version}) was rejected: following version ${next.version} (${next.id}) ══\n`);
    d = await detail(next.id);
  }
  if (finished(d.task.status)) {
    await printTranscript(client, d.task.id, json);
    return;
  }
  // A task that has not started prints nothing until it does, maybe never (a dependency that needs a person): why, first.
  const why = json ? null : notStarted(d);
  if (why) printText(`══ ${d.task.id} has not started. ${why} Still following. ══\n`);
  const stopped = new AbortController();
  const stop = () => stopped.abort();
  process.once('SIGINT', stop);
  let current = d.task.id;
  const announce = (v: { id: string; version: number }) => {
    if (json) process.stdout.write(`${JSON.stringify({ event: 'version', data: { taskId: v.id, version: v.version, previous: current } })}\n`);
    else printText(`\n══ rejected: following version ${v.version} (${v.id}) ══\n`);
  };
  let ended: Detail['task'] | null = null;
  // The task and gate last announced (gateLine), and the claim of a daemon gone quiet (sayQuietClaim): each said once.
  let announcedGate: string | null = null;
  let announcedClaim: string | null = null;
  try {
    // One renderer for the version followed: a dropped stream reopened goes on where its text was, mid-line or not.
    const state: StreamState = { lastEventId: null, failures: 0, downSince: null, render: streamRenderer(current), ended: null };
    while (!stopped.signal.aborted) {
      // Back to the status as soon as it is news: superseded, finished, at a gate or held by a quiet daemon, not yet announced.
      const news = (d: Detail) => d.task.status === 'superseded' || finished(d.task.status) || (GATE_STATUSES.includes(d.task.status) && `${current} ${d.task.status}` !== announcedGate) || (!json && quietClaim(d) !== announcedClaim);
      const outcome = await streamOnce(client, current, json, stopped.signal, state, news);
      if (stopped.signal.aborted) break;
      if (state.ended) await sayRecordedOutcome(client, current, state, json, stopped.signal);
      if (outcome === 'dropped') await waitAfterDrop(client, current, state);
      let now: Detail;
      try {
        now = await detail(current);
      } catch (err) {
        if (!(err instanceof MaestroError && err.code === 'DAEMON_UNREACHABLE')) throw err;
        continue;
      }
      const next = nextVersion(now);
      if (now.task.status === 'superseded' && next) {
        announce(next);
        current = next.id;
        state.lastEventId = null;
        state.render = streamRenderer(current); // the announcement ended a line
        continue;
      }
      if (finished(now.task.status)) {
        ended = now.task;
        break;
      }
      const atGate = GATE_STATUSES.includes(now.task.status) ? `${current} ${now.task.status}` : null;
      // A gate reached after a run's end, or a drop, is said once the stream has been read again: a run that ran
      // meanwhile (a fast review) prints first, then the watcher (`news`) brings the gate back here.
      if (atGate && atGate !== announcedGate && outcome !== 'status') continue;
      if (atGate && atGate !== announcedGate && !json) {
        printText(gateLine(current, now.task.status));
        state.render = streamRenderer(current); // the line ended a line
      }
      announcedGate = atGate;
      announcedClaim = sayQuietClaim(now, announcedClaim, json, () => (state.render = streamRenderer(current)));
    }
  } finally {
    process.off('SIGINT', stop);
  }
  sayWhyEnded(ended, json);
}

/** The stream ended or dropped: waits a little, longer each time, before the next try; gives up once the daemon stayed away GIVE_UP_MS. */
async function waitAfterDrop(client: ApiClient, current: string, state: StreamState): Promise<void> {
  state.downSince ??= Date.now();
  if (Date.now() - state.downSince > GIVE_UP_MS) throw new MaestroError('DAEMON_UNREACHABLE', `Lost the stream of ${current} and the daemon at ${client.baseUrl} did not come back within ${GIVE_UP_MS / 1000} s.`);
  await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(state.failures++, RETRY_MS.length - 1)]));
}

/** Why following ended (a cancel, a task that needs a person, done), not only that the output stopped. */
function sayWhyEnded(ended: Detail['task'] | null, json: boolean): void {
  if (!json) process.stdout.write('\n');
  if (!ended) return;
  if (json) process.stdout.write(`${JSON.stringify({ event: 'end', data: { taskId: ended.id, status: ended.status, reason: ended.lastRunError } })}\n`);
  else printText(`══ ${ended.id} is ${ended.status}${ended.lastRunError && ended.status !== 'done' ? `: ${hangingIndent(ended.lastRunError, '   ')}` : ''} ══\n`);
}

/** The claim of a daemon that holds the task and has stopped or gone quiet (claimQuiet), as a key; else null. */
function quietClaim(d: Detail): string | null {
  return d.claimedElsewhere && claimQuiet(d.claimedElsewhere) ? `${d.task.id} ${d.claimedElsewhere.daemon} ${d.task.attempt}` : null;
}

/**
 * Says, once per claim, that the daemon running the task has stopped or gone quiet, and when another takes it over:
 * its run's stream just stops. `lineEnded` is told when a line was printed. Returns the claim to remember.
 */
function sayQuietClaim(d: Detail, said: string | null, json: boolean, lineEnded: () => void): string | null {
  const quiet = quietClaim(d);
  if (quiet && quiet !== said && !json) {
    printText(`\n══ ${claimLine(d.claimedElsewhere!, d.task.status)} Still following. ══\n`);
    lineEnded();
  }
  return quiet;
}

/** Where following a version stands: the last item printed, the reconnections tried, and how its text is printed. */
interface StreamState {
  lastEventId: string | null;
  failures: number;
  downSince: number | null;
  render: (e: SseEvent) => string;
  /** The run whose result item ended the stream, until the line for how it was recorded is said. */
  ended: { runId: string; kind: string } | null;
}

/** Says how the daemon recorded the run whose result item ended the stream (runOutcome.ts), then forgets it. */
async function sayRecordedOutcome(client: ApiClient, taskId: string, state: StreamState, json: boolean, stop: AbortSignal): Promise<void> {
  const ended = state.ended!;
  state.ended = null;
  const { line, run } = await finishedRunLine(client, ended, stop);
  if (json) process.stdout.write(`${JSON.stringify({ event: 'outcome', data: { runId: ended.runId, status: run?.status ?? null, error: run?.error ?? null } })}\n`);
  else printText(line);
  state.render = streamRenderer(taskId); // the line ended a line
}

/**
 * One connection to the task's stream, until a run ends (`run-ended`), the
 * watcher sees news of the task (`status`: superseded, finished, at a gate), or the stream drops.
 * At the end of a run the stream is closed on purpose to look at the task's
 * status, then reopened from Last-Event-ID if the task goes on.
 */
async function streamOnce(
  client: ApiClient,
  taskId: string,
  json: boolean,
  stopped: AbortSignal,
  state: StreamState,
  news: (detail: Detail) => boolean,
): Promise<'run-ended' | 'status' | 'dropped'> {
  const connection = new AbortController();
  const onStop = () => connection.abort();
  stopped.addEventListener('abort', onStop);
  let outcome: 'run-ended' | 'status' | 'dropped' = 'dropped';
  const watcher = setInterval(() => {
    client.get<Detail>(`/api/tasks/${encodeURIComponent(taskId)}`).then((d) => {
      if (news(d)) {
        outcome = 'status';
        connection.abort();
      }
    }, () => undefined); // an unreachable daemon shows as a dropped stream
  }, WATCH_MS);
  try {
    await client.readSse(`/api/tasks/${encodeURIComponent(taskId)}/stream`, {
      lastEventId: state.lastEventId,
      signal: connection.signal,
      onOpen: () => {
        state.failures = 0;
        state.downSince = null;
      },
      onEvent: (e) => {
        if (e.id) state.lastEventId = e.id;
        if (json) process.stdout.write(`${JSON.stringify({ id: e.id, event: e.event, data: JSON.parse(e.data) })}\n`);
        else printText(state.render(e));
        if (e.event === 'result') state.ended = resultOf(e);
        if (e.event === 'result' || e.event === 'error') {
          outcome = 'run-ended';
          connection.abort();
        }
      },
    });
  } catch (err) {
    // An API error other than "not reachable" (unknown task, bad token) will not heal by retrying.
    if (!connection.signal.aborted && !(err instanceof MaestroError && err.code === 'DAEMON_UNREACHABLE')) throw err;
  } finally {
    clearInterval(watcher);
    stopped.removeEventListener('abort', onStop);
  }
  return outcome;
}
