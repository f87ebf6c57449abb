/**
 * Reading a planner's answer: the markdown subtask table (for the human) and
 * the JSON block (for the machine, authoritative). Checked: titles present and
 * distinct, enums, deps are indices in range and not the subtask itself, no
 * cycles, and the table (when present) lists the same titles in the same order.
 * Every problem is reported, so one retry can fix them all. A plan of more subtasks than the project's
 * limits.maxSubtasks is refused before anything else is read of it: it is the one problem to fix.
 */
import { z } from 'zod';
import { findCycle } from '../../core/dag.js';
import { MAX_PLAN_CHARS, taskFields } from '../../core/schemas.js';
import { COMPLEXITIES, type Complexity, type Priority } from '../../core/types.js';
import { fencedBlocks } from './fencedBlocks.js';
import { problemList } from './answerProblems.js';

export interface PlannedSubtask {
  title: string;
  complexity: Complexity;
  priority: Priority;
  /** Indices into the subtasks array; the daemon maps them to ids after creating all subtasks. */
  deps: number[];
  ownedFiles: string[];
  expectedOutput: string;
}

export interface PlanResult {
  plan: string;
  subtasks: PlannedSubtask[];
  /** The planner's whole answer, table included, for plan_review. */
  markdown: string;
}

const planSchema = z.object({
  plan: z.string().min(1, 'plan must say what the overall approach is').max(1_000_000),
  subtasks: z.array(z.object({
    // Held to what a person may set on a task: a subtask the task rules refuse could only fail at the plan's approval.
    title: taskFields.title,
    complexity: z.enum(COMPLEXITIES),
    priority: z.union([z.enum(['P0', 'P1', 'P2']), z.literal(0), z.literal(1), z.literal(2)]).default('P1'),
    deps: z.array(z.number().int()).default([]),
    ownedFiles: taskFields.ownedFiles.default([]),
    expectedOutput: z.string().max(10_000).default(''),
  })).min(1, 'a plan needs at least one subtask'),
});

export class PlanParseError extends Error {}

function tableTitles(text: string): string[] | null {
  const rows = text.split('\n').filter((l) => /^\s*\|.*\|\s*$/.test(l));
  if (rows.length < 2) return null;
  const cells = (row: string) => row.trim().slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
  const header = cells(rows[0]!).map((h) => h.toLowerCase());
  const titleCol = header.findIndex((h) => h === 'title' || h === 'subtask' || h === 'task');
  if (titleCol < 0) return null;
  return rows.slice(1).filter((r) => !/^\s*\|[\s:|-]+\|\s*$/.test(r)).map((r) => cells(r)[titleCol] ?? '');
}

/** The refusal of a plan of too many subtasks, before each of them is checked (3,000 would each be). */
function tooManySubtasks(raw: unknown, maxSubtasks: number): string | null {
  const subtasks = (raw as { subtasks?: unknown } | null)?.subtasks;
  if (!Array.isArray(subtasks) || subtasks.length <= maxSubtasks) return null;
  const n = (x: number) => x.toLocaleString('en-US');
  return `the plan has ${n(subtasks.length)} subtasks, more than the limit of ${n(maxSubtasks)} (limits.maxSubtasks in .maestro/config.json): group the work into at most ${n(maxSubtasks)} larger subtasks`;
}

export function parsePlanOutput(text: string, maxSubtasks: number): PlanResult {
  // The whole answer is the plan the gate shows and the task keeps: held to the length a person's plan is.
  if (text.length > MAX_PLAN_CHARS) {
    throw new PlanParseError(`the answer is ${text.length.toLocaleString('en-US')} characters, more than a plan holds (${MAX_PLAN_CHARS.toLocaleString('en-US')}): answer with a short plan, the subtask table and the json block`);
  }
  const blocks = fencedBlocks(text).map((m) => m[1]!);
  if (!blocks.length) throw new PlanParseError('no ```json block found; end the answer with a ```json block holding {"plan", "subtasks"}');
  let raw: unknown;
  const last = blocks[blocks.length - 1]!;
  try {
    raw = JSON.parse(last);
  } catch (err) {
    throw new PlanParseError(`the json block is not valid JSON: ${(err as Error).message}`);
  }
  const tooMany = tooManySubtasks(raw, maxSubtasks);
  if (tooMany) throw new PlanParseError(tooMany);
  const parsed = planSchema.safeParse(raw);
  if (!parsed.success) {
    throw new PlanParseError(problemList(parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)));
  }
  const problems: string[] = [];
  const subtasks: PlannedSubtask[] = parsed.data.subtasks.map((s, i) => {
    for (const d of s.deps) {
      if (d < 0 || d >= parsed.data.subtasks.length) problems.push(`subtasks.${i}.deps: ${d} is not the index of a subtask (0..${parsed.data.subtasks.length - 1})`);
      else if (d === i) problems.push(`subtasks.${i}.deps: a subtask cannot depend on itself`);
    }
    const priority = (typeof s.priority === 'number' ? s.priority : Number(s.priority.slice(1))) as Priority;
    return { title: s.title.trim(), complexity: s.complexity, priority, deps: [...new Set(s.deps)], ownedFiles: s.ownedFiles, expectedOutput: s.expectedOutput };
  });
  const seen = new Map<string, number>();
  subtasks.forEach((s, i) => {
    const key = s.title.toLowerCase();
    if (seen.has(key)) problems.push(`subtasks.${i}.title: "${s.title}" repeats subtask ${seen.get(key)}`);
    seen.set(key, i);
  });
  if (!problems.length) {
    const cycle = findCycle(subtasks.map((s, i) => ({ id: String(i), deps: s.deps.map(String) })));
    if (cycle) problems.push(`deps form a cycle: ${cycle.join(' -> ')}`);
  }
  const titles = tableTitles(text.replace(/```[\s\S]*?```/g, ''));
  if (titles && (titles.length !== subtasks.length || titles.some((t, i) => t !== subtasks[i]!.title))) {
    problems.push(`the markdown table lists ${titles.length} subtask(s) (${titles.join(', ')}) but the json block has ${subtasks.length} (${subtasks.map((s) => s.title).join(', ')}); they must agree`);
  }
  if (problems.length) throw new PlanParseError(problemList(problems));
  return { plan: parsed.data.plan, subtasks, markdown: text };
}
