/**
 * The scripted agent's script (docs/scripted-agent.md): YAML or JSON, validated
 * here with the file, line and field of the first problems in the error.
 */
import { readRegularFile } from '../lib/regularFile.js';
import { z } from 'zod';
import { COMPLEXITIES } from '../core/types.js';
import { MaestroError } from '../core/errors.js';
import { yaml, yamlErrorWhere } from '../lib/yaml.js';

const ROLE_MATCH = ['plan', 'execute', 'review', 'review:code', 'review:security', 'conflict', 'reflect', 'summarize', 'curate', 'any'] as const;

const pathField = z.string().min(1).refine((p) => !p.startsWith('/') && !p.split(/[\\/]/).includes('..'), 'must be a relative path inside the worktree');

const subtaskSchema = z.object({
  title: z.string().min(1),
  complexity: z.enum(COMPLEXITIES).default('medium'),
  priority: z.union([z.enum(['P0', 'P1', 'P2']), z.literal(0), z.literal(1), z.literal(2)]).default('P1'),
  deps: z.array(z.number().int()).default([]),
  ownedFiles: z.array(z.string()).default([]),
  expectedOutput: z.string().default(''),
}).strict();

const findingSchema = z.object({
  severity: z.enum(['low', 'medium', 'high', 'critical']).default('medium'),
  file: z.string().optional(),
  line: z.number().int().optional(),
  message: z.string().min(1),
}).strict();

/**
 * The longest `wait` a script may ask for: 10 minutes. The scripted agent stands in for a model in tests and
 * the demo, where waits are tens to thousands of ms (for parallelism and timeouts); an hour's wait is a typo
 * that would hold a run, a worker and its lease without a word. `hang: true` is the agent that never answers.
 */
export const MAX_SCRIPT_WAIT_MS = 10 * 60 * 1000;

const actionSchema = z.union([
  z.object({ text: z.string() }).strict(),
  z.object({ write: z.object({ path: pathField, content: z.string() }).strict() }).strict(),
  z.object({ append: z.object({ path: pathField, content: z.string() }).strict() }).strict(),
  z.object({ edit: z.object({ path: pathField, find: z.string().min(1), replace: z.string() }).strict() }).strict(),
  z.object({ delete: pathField }).strict(),
  z.object({ ask: z.string().min(1) }).strict(),
  z.object({ plan: z.object({ plan: z.string(), subtasks: z.array(subtaskSchema) }).strict() }).strict(),
  z.object({ verdict: z.object({ verdict: z.enum(['approve', 'reject']), findings: z.array(findingSchema).default([]) }).strict() }).strict(),
  z.object({ answer: z.string() }).strict(),
  z.object({ wait: z.number().int().nonnegative().max(MAX_SCRIPT_WAIT_MS, `must be at most ${MAX_SCRIPT_WAIT_MS} ms (10 minutes); for an agent that never answers, use hang: true`) }).strict(),
  z.object({ hang: z.literal(true) }).strict(),
  z.object({ fail: z.string().min(1) }).strict(),
]);
export type ScriptAction = z.infer<typeof actionSchema>;

const REGEX_PATTERN = /^\/(.*)\/([a-z]*)$/s;

/** A match pattern written `/regex/flags` as its RegExp, or null for a substring; throws SyntaxError when it does not compile. */
export function matchRegex(pattern: string): RegExp | null {
  const rx = REGEX_PATTERN.exec(pattern);
  return rx ? new RegExp(rx[1]!, rx[2]) : null;
}

/** Compiled when the script is loaded, so a bad regex is refused with its file, line and step, not at the first call. */
const patternField = z.string().superRefine((pattern, ctx) => {
  try {
    matchRegex(pattern);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(pattern)} is not a valid regular expression (${(err as Error).message})` });
  }
});

const stepSchema = z.object({
  match: z.object({
    role: z.enum(ROLE_MATCH).default('any'),
    /** Substring of the task title, or /regex/flags. */
    title: patternField.optional(),
    /** Substring of the prompt, or /regex/flags (e.g. to answer a feedback round differently). */
    prompt: patternField.optional(),
  }).strict().default({ role: 'any' }),
  /** How many calls this step answers before it stops matching; unlimited when absent. */
  times: z.number().int().positive().optional(),
  /** The first N calls this step matches fail (before any action runs). */
  failTimes: z.number().int().nonnegative().default(0),
  failMessage: z.string().default('scripted failure'),
  /** Reported usage per call. */
  usage: z.object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative(), costUsd: z.number().nonnegative() }).strict().optional(),
  actions: z.array(actionSchema).default([]),
}).strict();
export type ScriptStep = z.infer<typeof stepSchema>;

export const scriptSchema = z.object({ steps: z.array(stepSchema).min(1) }).strict();
export type Script = z.infer<typeof scriptSchema>;

export function parseScript(text: string, file: string): Script {
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  // The place only: the package's message quotes a token of the text, and a script may be a link to another file.
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const pos = lineCounter.linePos(e.pos[0]);
    throw new MaestroError('SCRIPT_INVALID', `${file} is not valid YAML (${yamlErrorWhere(e, lineCounter)}).`, { details: { file, line: pos.line } });
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (err) {
    // The yaml package refuses an alias bomb here (ReferenceError "Excessive alias count…"), with no position.
    throw new MaestroError('SCRIPT_INVALID', `${file} cannot be parsed: ${yamlErrorWhere(err)}`, { details: { file } });
  }
  const parsed = scriptSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.slice(0, 3).map((issue) => {
    let line = 1;
    // Walk up the path until a node with a position exists (a missing key has none).
    for (let n = issue.path.length; n >= 0; n--) {
      const node = doc.getIn(issue.path.slice(0, n) as Array<string | number>, true) as { range?: [number, number, number] } | undefined;
      if (node && typeof node === 'object' && node.range) {
        line = lineCounter.linePos(node.range[0]).line;
        break;
      }
    }
    return `${file}:${line}: ${issue.path.join('.') || '(root)'}: ${issue.message}`;
  });
  throw new MaestroError('SCRIPT_INVALID', `invalid agent script: ${problems.join('; ')}`, { details: { file, problems } });
}

/** Scripts parsed in this process, by file and text: read-only to their users. */
const parsed = new Map<string, { text: string; script: Script }>();
const PARSED_KEPT = 16;

/**
 * The script in `file`, read each time and parsed again only when its text changed. A warm worker runs many runs
 * of one script, and parsing its YAML was the scripted agent's largest cost (bench:daemon: 0.7 of a worker's
 * 3.4 CPU s over 8 demo scenarios), a cost no real model's runs have, counted in every CPU-per-task figure.
 */
export function loadScript(file: string): Script {
  let text: string;
  try {
    text = readRegularFile(file);
  } catch (err) {
    throw new MaestroError('SCRIPT_INVALID', `cannot read agent script ${file}: ${(err as Error).message}`, { cause: err });
  }
  const known = parsed.get(file);
  if (known?.text === text) return known.script;
  const script = parseScript(text, file);
  parsed.delete(file);
  if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value!);
  parsed.set(file, { text, script });
  return script;
}
