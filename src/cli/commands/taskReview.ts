/**
 * The reviewer's evidence in the terminal: `maestro task diff` (coloured on a
 * terminal, plain when piped), and the checks, findings and version chain
 * `task show` prints. Commands that act on a task accept any version's id and
 * act on the chain's newest version.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { integerOption } from '../input.js';
import type { ChecksResponse, DiffFile, DiffResponse, FindingsResponse, TaskDetail, VersionRef } from '../../api/wire/responses.js';
import type { ApiClient } from '../../api/client.js';
import type { Task } from '../../core/types.js';
import { action, printJson } from '../output.js';
import { hangingIndent, oneLine, visible } from '../../lib/visible.js';
import { clientFor, withApi, type ClientFlags } from './common.js';
import type { CliContext } from '../context.js';

const ESC = '\u001b[';
type Paint = (code: string, text: string) => string;

/** Colour only for a terminal that wants it (NO_COLOR off), or when FORCE_COLOR asks. */
export function painter(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv): Paint {
  const force = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0';
  const on = force || (Boolean(stream.isTTY) && env.NO_COLOR === undefined && env.TERM !== 'dumb');
  return on ? (code, text) => `${ESC}${code}m${text}${ESC}0m` : (_code, text) => text;
}

const LETTER: Record<DiffFile['status'], string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', type_changed: 'T' };

/** A file's name as shown, on one line: its control characters and line breaks as `\u{…}` (oneLine). */
function fileName(f: DiffFile): string {
  return oneLine(f.oldPath && f.oldPath !== f.path ? `${f.oldPath} → ${f.path}` : f.path);
}

const PLAIN = '100644';
const SYMLINK = '120000';

/**
 * What a file's mode says that its line counts do not: a symlink (its target is its one line), one that points
 * outside the repository (the API judges it from the link's folder, never following it), a mode that changed
 * (`mode 100644 → 100755`: a script made executable is all such a change is), or a new or deleted file's mode
 * other than a plain file's (executable, gitlink).
 */
function modeNotes(f: DiffFile): string[] {
  const notes = linkNotes(f);
  const only = f.newMode ?? f.oldMode;
  if (f.oldMode && f.newMode && f.oldMode !== f.newMode) notes.push(`mode ${f.oldMode} → ${f.newMode}`);
  else if (only && only !== PLAIN && only !== SYMLINK) notes.push(`mode ${only}`);
  return notes;
}

/** A symlink, and whether it points outside the repository: said in --stat and in the unified diff's file header alike. */
function linkNotes(f: DiffFile): string[] {
  if (f.link) return ['symlink', ...(f.link.outside ? ['points outside the repository'] : [])];
  return f.status === 'deleted' && f.oldMode === SYMLINK ? ['symlink'] : [];
}

function statLine(f: DiffFile, paint: Paint): string {
  const notes = modeNotes(f);
  const counts = f.binary ? 'binary' : `${paint('32', `+${f.additions}`)} ${paint('31', `-${f.deletions}`)}`;
  // A link's one line is its target, shown instead (a file that became a link keeps its counts: its lines went);
  // a change that is all mode has no lines to count.
  const onlyTarget = f.link && (f.oldMode === null || f.oldMode === SYMLINK);
  const shown = onlyTarget || (!f.binary && notes.length && f.additions + f.deletions === 0) ? '' : `  ${counts}`;
  const target = f.link ? ` -> ${oneLine(f.link.target)}` : '';
  return `${LETTER[f.status]}  ${fileName(f)}${target}${shown}${f.collapsed ? '  (collapsed)' : ''}${notes.length ? `  (${notes.join(', ')})` : ''}`;
}

export function renderStat(diff: DiffResponse, paint: Paint): string {
  const rows = [...commitLines(diff, paint)];
  rows.push(...diff.files.map((f) => statLine(f, paint)));
  const t = diff.totals;
  rows.push(`${t.files} file${t.files === 1 ? '' : 's'} changed, ${t.additions} insertion${t.additions === 1 ? '' : 's'}(+), ${t.deletions} deletion${t.deletions === 1 ? '' : 's'}(-)`);
  return `${rows.join('\n')}\n`;
}

/** git's mode lines for a file whose mode is worth saying: new or deleted with a mode other than a plain file's, or changed. */
function modeLines(f: DiffFile): string[] {
  if (f.status === 'added') return f.newMode && f.newMode !== '100644' ? [`new file mode ${f.newMode}`] : [];
  if (f.status === 'deleted') return f.oldMode && f.oldMode !== '100644' ? [`deleted file mode ${f.oldMode}`] : [];
  return f.oldMode && f.newMode && f.oldMode !== f.newMode ? [`old mode ${f.oldMode}`, `new mode ${f.newMode}`] : [];
}

/**
 * The commit shown, whole: from exec_review on the reviewed one (what `task approve --commit` names), and the
 * branch's tip when it moved since.
 */
function commitLines(diff: DiffResponse, paint: Paint): string[] {
  const lines = [`commit ${diff.head}`];
  if (diff.branchMoved) lines.push(paint('31', `The branch moved: ${oneLine(diff.branchMoved.message)}.`));
  return lines;
}

export function renderDiff(diff: DiffResponse, paint: Paint): string {
  const out = [paint('1', `${oneLine(diff.branch)}  v${diff.version}  ${diff.base.slice(0, 10)}..${diff.head.slice(0, 10)}  ${diff.totals.files} file${diff.totals.files === 1 ? '' : 's'}, +${diff.totals.additions} -${diff.totals.deletions}`), ...commitLines(diff, paint)];
  for (const f of diff.files) {
    // A link's target and where it points, in the header: its one `+` line below does not say it leads out.
    const about = [f.status, ...(f.binary ? ['binary'] : []), ...linkNotes(f)].join(', ');
    out.push('', paint('1', `${LETTER[f.status]} ${fileName(f)}${f.link ? ` -> ${oneLine(f.link.target)}` : ''}  (${about})`));
    if (f.binary) {
      out.push(paint('2', '  binary file: no lines to show'));
      continue;
    }
    if (f.collapsed) {
      out.push(paint('2', `  large change collapsed (+${f.additions} -${f.deletions}); see it with --file ${oneLine(f.path)}`));
      continue;
    }
    // As git says them: a change of mode (executable, symlink) may be all there is, and a missing final newline is a change.
    out.push(...modeLines(f).map((line) => paint('1', line)));
    if (f.hunks.length) out.push(paint('1', `--- ${f.status === 'added' ? '/dev/null' : `a/${oneLine(f.oldPath ?? f.path)}`}`), paint('1', `+++ ${f.status === 'deleted' ? '/dev/null' : `b/${oneLine(f.path)}`}`));
    for (const h of f.hunks) {
      // Its text after @@ is a line of the file (the function it is in): shown as the lines are.
      out.push(paint('36', visible(h.header)));
      // What the agent wrote, shown, never run by the terminal: an escape sequence in a line could erase the
      // lines above it (or a carriage return overwrite its start), and the person would approve what they did not see.
      for (const l of h.lines) {
        // A carriage return ending the line (CRLF) as the board draws it: ␍.
        const text = visible(l.text.replace(/\r$/, '\u240d'));
        if (l.kind === 'add') out.push(paint('32', `+${text}`));
        else if (l.kind === 'del') out.push(paint('31', `-${text}`));
        else out.push(` ${text}`);
        if (l.noNewline) out.push(paint('2', '\\ No newline at end of file'));
      }
    }
  }
  return `${out.join('\n')}\n`;
}

function fmtMs(ms: number | null): string {
  if (ms === null) return '';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Where the second and later lines of a finding start: two past the finding's own four, so they read as part of it. */
const FINDING_MORE = ' '.repeat(6);

const CHECK_MARK: Record<string, string> = { passed: '✓', failed: '✗', running: '…', pending: '·', skipped: '-' };

export function describeEvidence(versions: VersionRef[], currentId: string, checks: ChecksResponse | null, review: FindingsResponse | null): string {
  const lines: string[] = [];
  if (versions.length > 1) {
    lines.push('  versions:');
    for (const v of versions) lines.push(`    v${v.version} ${v.id} ${v.status}${v.id === currentId ? '  ← this one' : ''}`);
  }
  if (checks?.checks.length) {
    lines.push('  checks:');
    for (const c of checks.checks) {
      const exit = c.exitCode !== null && c.status === 'failed' ? ` exit ${c.exitCode}` : '';
      lines.push(`    ${CHECK_MARK[c.status] ?? '?'} ${oneLine(c.name)} ${c.status}${exit}${c.durationMs !== null ? ` ${fmtMs(c.durationMs)}` : ''}  $ ${oneLine(c.command)}`);
      if (c.status === 'failed' && c.outputTail) lines.push(...c.outputTail.trimEnd().split('\n').slice(-10).map((l) => `        ${l}`));
    }
  }
  if (review?.verdicts.length) {
    // The newest round first (what the gate decides on), then the earlier ones (what the agent was asked to fix).
    const rounds = [...new Set(review.verdicts.map((v) => v.round))].sort((a, b) => b - a);
    for (const round of rounds) {
      lines.push(round === rounds[0] ? `  review ${round} (the latest):` : `  review ${round} (earlier):`);
      for (const v of review.verdicts.filter((x) => x.round === round)) lines.push(`    ${oneLine(v.reviewer)}: ${v.verdict}${v.summary ? ` — ${v.summary.split('\n')[0]}` : ''}`);
      // A reviewer's words: a finding of several lines keeps them, each under the finding's first.
      for (const f of review.findings.filter((x) => x.round === round)) lines.push(`    [${oneLine(f.severity)}, ${oneLine(f.reviewer)}] ${f.file ? `${oneLine(f.file)}${f.line ? `:${f.line}` : ''}: ` : ''}${hangingIndent(f.message, FINDING_MORE)}`);
    }
  }
  return lines.join('\n');
}

/**
 * The chain's newest version when `id` names an older one (a rejection superseded it). `task` is the task read
 * when it is that version, so a command that needs it reads it once; null when a newer version is (the chain
 * names only its id and status).
 */
export async function newestVersion(client: ApiClient, id: string): Promise<{ id: string; status: string; from: string | null; mergeBlocked: string | null; task: Task | null }> {
  const { task, versions, mergeBlocked } = await client.get<TaskDetail>(`/api/tasks/${encodeURIComponent(id)}`);
  const newest = versions?.[versions.length - 1];
  if (!newest || newest.id === task.id || task.status !== 'superseded') return { id: task.id, status: task.status, from: null, mergeBlocked, task };
  return { id: newest.id, status: newest.status, from: task.id, mergeBlocked: null, task: null };
}

/** Says on stderr which version an old id was taken to mean (stdout stays the command's answer). */
async function newestSaid(client: ApiClient, id: string): ReturnType<typeof newestVersion> {
  const newest = await newestVersion(client, id);
  if (newest.from) process.stderr.write(`maestro: ${newest.from} was superseded; acting on its newest version ${newest.id}.\n`);
  return newest;
}

/** The id of the version a command acts on: the newest, said on stderr when it is not the one named. */
export async function actOnNewest(client: ApiClient, id: string): Promise<string> {
  return (await newestSaid(client, id)).id;
}

/** As actOnNewest, with that version's task as it stands: from the same read when the id named it, else read once more. */
export async function newestTask(client: ApiClient, id: string): Promise<Task> {
  const newest = await newestSaid(client, id);
  return newest.task ?? (await client.get<TaskDetail>(`/api/tasks/${encodeURIComponent(newest.id)}`)).task;
}

const parseVersion = integerOption('a version is a positive whole number', 1);

/** `file:line:text`; the file may itself contain no ':' (paths with ':' are rare, and ambiguous here). */
export function parseComment(value: string, previous: Array<{ file: string; line: number; text: string }> = []): Array<{ file: string; line: number; text: string }> {
  const m = /^([^:]+):(\d+):([\s\S]+)$/.exec(value);
  if (!m || Number(m[2]) < 1) throw new InvalidArgumentError(`"${value}" is not file:line:text (e.g. src/app.ts:12:check for null here).`);
  return [...previous, { file: m[1]!, line: Number(m[2]), text: m[3]!.trim() }];
}

export function registerDiff(task: Command, ctx: CliContext): void {
  withApi(
    task
      .command('diff <id>')
      .description("Show a task version's change against its merge base (coloured on a terminal).")
      .option('--stat', 'only the files with their status and line counts')
      .option('--version <n>', 'another version of the same task', parseVersion)
      .option('--file <path>', 'only this file, shown whole even when large'),
  ).action(
    action(async (id: string, opts: ClientFlags & { stat?: boolean; version?: number; file?: string }) => {
      const diff = await clientFor(opts, ctx.env).get<DiffResponse>(`/api/tasks/${encodeURIComponent(id)}/diff`, { version: opts.version, file: opts.file });
      if (opts.json) return printJson(diff);
      const paint = painter(process.stdout, ctx.env);
      process.stdout.write(opts.stat ? renderStat(diff, paint) : renderDiff(diff, paint));
    }),
  );
}

/** checks and findings for `task show`; a daemon without the routes (older) shows none. */
export async function fetchEvidence(client: ApiClient, id: string): Promise<{ checks: ChecksResponse | null; findings: FindingsResponse | null }> {
  const tryGet = async <T>(path: string): Promise<T | null> => {
    try {
      return await client.get<T>(path);
    } catch {
      return null;
    }
  };
  const [checks, findings] = await Promise.all([tryGet<ChecksResponse>(`/api/tasks/${encodeURIComponent(id)}/checks`), tryGet<FindingsResponse>(`/api/tasks/${encodeURIComponent(id)}/findings`)]);
  return { checks, findings };
}

