/**
 * suggest_task_metadata: taskType, scope, ownedFiles and expectedOutput for a
 * task title in a repository.
 *
 * The offline path is a deterministic heuristic: keywords in the title pick
 * the type; `git ls-files` matched against the title's words picks the files;
 * the scope follows from how many directories those files span. When an agent
 * provider is given, it is asked first (read-only, in the repository) and its
 * answer is checked; an answer that does not hold up falls back to the
 * heuristic, saying why.
 */
import { dirname } from 'node:path';
import { z } from 'zod';
import type { AgentProvider } from '../agents/types.js';
import { READ_ONLY_TOOLS } from '../agents/types.js';
import { MaestroError } from '../core/errors.js';
import { trackedFiles } from '../git/git.js';
import { TASK_SCOPES, TASK_TYPES, type TaskScope, type TaskType } from '../core/types.js';

export interface TaskMetadata {
  taskType: TaskType;
  scope: TaskScope | null;
  ownedFiles: string[];
  expectedOutput: string;
  /** Which path answered. */
  source: 'heuristic' | 'agent';
  /** Why the agent's answer was not used, when it was asked. */
  note?: string;
}

/** Keywords per type, checked in this order; the first type with a hit wins, else feature. */
const TYPE_KEYWORDS: [TaskType, RegExp][] = [
  ['bugfix', /\b(fix(es|ed)?|bug|crash(es)?|broken|regression|error|fails?|failing|wrong|leak|hang)\b/i],
  ['docs', /\b(docs?|document(s|ed|ing)?|documentation|readme|guide|tutorial|comments?|changelog|typo)\b/i],
  ['refactor', /\b(refactor|rename|extract|simplify|restructure|clean ?up|split|reorgani[sz]e|deduplicate|move)\b/i],
  ['chore', /\b(bump|upgrade|update deps|dependenc(y|ies)|ci|lint|format|release|chore|config(uration)?|version)\b/i],
];

const STOPWORDS = new Set(['the', 'and', 'for', 'with', 'from', 'into', 'when', 'that', 'this', 'add', 'fix', 'make', 'use', 'new', 'all', 'not', 'should', 'can', 'page', 'support', 'implement', 'create', 'update', 'remove', 'allow', 'let', 'bug', 'test', 'tests']);

export function inferTaskType(title: string): TaskType {
  for (const [type, re] of TYPE_KEYWORDS) if (re.test(title)) return type;
  return 'feature';
}

function titleWords(title: string): string[] {
  const words = title
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !STOPWORDS.has(w));
  return [...new Set(words)];
}

/** Path tokens: folder names and the file name, split on punctuation and camelCase. */
function pathTokens(path: string): { all: Set<string>; base: Set<string> } {
  const split = (s: string) =>
    s
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter(Boolean);
  const parts = path.split('/');
  const baseName = parts[parts.length - 1]!.replace(/\.[^.]+$/, '');
  return { all: new Set(parts.flatMap(split)), base: new Set(split(baseName)) };
}

function matches(word: string, token: string): boolean {
  if (word === token) return true;
  // "login" ~ "logins", "payment" ~ "payments": a shared stem of at least 4 letters.
  const short = word.length < token.length ? word : token;
  const long = word.length < token.length ? token : word;
  return short.length >= 4 && long.startsWith(short) && long.length - short.length <= 3;
}

const MAX_FILES = 10;

/** Files whose path shares words with the title, best first (a hit in the file name counts double). */
export function matchFiles(title: string, files: string[]): string[] {
  const words = titleWords(title);
  if (!words.length) return [];
  const scored: { path: string; score: number }[] = [];
  for (const path of files) {
    const { all, base } = pathTokens(path);
    let score = 0;
    for (const w of words) {
      if ([...base].some((t) => matches(w, t))) score += 2;
      else if ([...all].some((t) => matches(w, t))) score += 1;
    }
    if (score > 0) scored.push({ path, score });
  }
  scored.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
  const best = scored[0]?.score ?? 0;
  // Keep the strong matches: a file that matches one word weakly when others match many is noise.
  return scored.filter((s) => s.score * 2 >= best).slice(0, MAX_FILES).map((s) => s.path);
}

/** file: one file; module: one folder; service: one top-level folder; cross-service: several. */
export function inferScope(files: string[]): TaskScope | null {
  if (!files.length) return null;
  if (files.length === 1) return 'file';
  const dirs = new Set(files.map((f) => dirname(f)));
  if (dirs.size === 1) return 'module';
  const tops = new Set(files.map((f) => (f.includes('/') ? f.split('/')[0] : '.')));
  return tops.size === 1 ? 'service' : 'cross-service';
}

export function expectedOutputFor(type: TaskType, title: string): string {
  switch (type) {
    case 'bugfix':
      return `Fixed: ${title}. A regression test fails before the fix and passes after it; all checks pass.`;
    case 'docs':
      return `Documentation updated: ${title}. Examples in it are correct for the current code.`;
    case 'refactor':
      return `Restructured with the same behaviour: ${title}. Existing tests pass unchanged.`;
    case 'chore':
      return `Done: ${title}. The build and all checks pass.`;
    case 'feature':
      return `Implemented: ${title}, with tests that cover it; all checks pass.`;
    default: {
      const never: never = type;
      return never;
    }
  }
}

export function heuristicMetadata(title: string, files: string[]): TaskMetadata {
  const taskType = inferTaskType(title);
  const ownedFiles = matchFiles(title, files);
  return { taskType, scope: inferScope(ownedFiles), ownedFiles, expectedOutput: expectedOutputFor(taskType, title), source: 'heuristic' };
}

const agentAnswer = z
  .object({
    taskType: z.enum(TASK_TYPES),
    scope: z.enum(TASK_SCOPES),
    ownedFiles: z.array(z.string()).max(50),
    expectedOutput: z.string().trim().min(1).max(2000),
  })
  .strict();

function agentPrompt(title: string, files: string[]): string {
  const listing = files.slice(0, 400).join('\n');
  return [
    'Suggest metadata for a coding task in this repository. Do not change any file.',
    `Task title: ${title}`,
    `taskType is one of ${TASK_TYPES.join(', ')}; scope is one of ${TASK_SCOPES.join(', ')} (file: one file; module: one folder; service: one top-level folder; cross-service: several).`,
    'ownedFiles are the repository paths the task will most likely change (existing files from the list below).',
    'expectedOutput says in one or two sentences what a finished task delivers.',
    'Answer with one JSON object and nothing else: {"taskType": …, "scope": …, "ownedFiles": […], "expectedOutput": …}',
    `Files (git ls-files${files.length > 400 ? `, first 400 of ${files.length}` : ''}):`,
    listing,
  ].join('\n');
}

/** Reads the agent's JSON; every owned file must exist in the repository. */
function readAgentAnswer(text: string, files: Set<string>): Omit<TaskMetadata, 'source'> {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) throw new Error('the answer holds no JSON object');
  const parsed = agentAnswer.safeParse(JSON.parse(text.slice(start, end + 1)));
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '));
  const unknown = parsed.data.ownedFiles.filter((f) => !files.has(f));
  if (unknown.length) throw new Error(`ownedFiles not in the repository: ${unknown.join(', ')}`);
  return parsed.data;
}

export interface SuggestOptions {
  title: string;
  repoPath: string;
  provider?: AgentProvider | null;
  model?: string;
  timeoutMs?: number;
}

export async function suggestTaskMetadata(options: SuggestOptions): Promise<TaskMetadata> {
  const title = options.title.trim();
  if (!title) throw new MaestroError('BAD_INPUT', 'title must not be empty.');
  // Through the project's git runner (an allowlisted environment, never the caller's secrets); NOT_A_REPOSITORY for anything else.
  const files = await trackedFiles(options.repoPath);
  const fallback = heuristicMetadata(title, files);
  if (!options.provider) return fallback;
  const signal = AbortSignal.timeout(options.timeoutMs ?? 120_000);
  try {
    const result = await options.provider.run({
      role: 'plan',
      taskTitle: title,
      prompt: agentPrompt(title, files),
      cwd: options.repoPath,
      model: options.model ?? 'haiku',
      allowedTools: READ_ONLY_TOOLS,
      permissionMode: 'plan',
      onToken: () => {},
      signal,
      askUser: async () => 'No one can answer here; decide from the repository.',
    });
    return { ...readAgentAnswer(result.text, new Set(files)), source: 'agent' };
  } catch (err) {
    return { ...fallback, note: `the agent's suggestion was not used (${(err as Error).message}); this is the heuristic's` };
  }
}
