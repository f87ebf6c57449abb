/**
 * A plan as the planner writes it: prose, a markdown table, and a fenced JSON
 * block with the subtasks. Before approval there are no child tasks yet, so
 * the proposed subtasks come from that block. Anything unparseable is left as
 * prose: the plan is shown, never lost.
 */
export interface ProposedSubtask {
  title: string;
  complexity?: string;
  priority?: string | number;
  deps: number[];
  ownedFiles: string[];
  expectedOutput?: string;
}

export function splitPlan(plan: string): { prose: string; subtasks: ProposedSubtask[] | null } {
  const fence = /```json\s*\n([\s\S]*?)\n```/g;
  let last: RegExpExecArray | null = null;
  for (let m = fence.exec(plan); m; m = fence.exec(plan)) last = m;
  if (!last) return { prose: plan, subtasks: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(last[1]!);
  } catch {
    return { prose: plan, subtasks: null };
  }
  const raw = (parsed as { subtasks?: unknown })?.subtasks;
  if (!Array.isArray(raw)) return { prose: plan, subtasks: null };
  const subtasks = raw
    .filter((s): s is Record<string, unknown> => !!s && typeof s === 'object' && typeof (s as { title?: unknown }).title === 'string')
    .map((s) => ({
      title: String(s.title),
      complexity: typeof s.complexity === 'string' ? s.complexity : undefined,
      priority: typeof s.priority === 'string' || typeof s.priority === 'number' ? s.priority : undefined,
      deps: Array.isArray(s.deps) ? s.deps.filter((d): d is number => typeof d === 'number') : [],
      ownedFiles: Array.isArray(s.ownedFiles) ? s.ownedFiles.map(String) : [],
      expectedOutput: typeof s.expectedOutput === 'string' ? s.expectedOutput : undefined,
    }));
  // The prose is what precedes the table (or the JSON block when there is no table).
  let prose = plan.slice(0, last.index);
  const table = prose.search(/^\|.*\|\s*$/m);
  if (table >= 0) prose = prose.slice(0, table);
  return { prose: prose.trim(), subtasks };
}

/**
 * The subtasks as the daemon parsed and checked them (task.result of a plan
 * run: src/daemon/outcomes.ts), or null. Preferred over re-reading the text:
 * a plan hook may have rewritten the markdown, the parsed list is what approval creates.
 */
export function parsedSubtasks(result: Record<string, unknown> | null): ProposedSubtask[] | null {
  if (!result || result.kind !== 'plan' || !Array.isArray(result.subtasks)) return null;
  return (result.subtasks as Record<string, unknown>[]).map((s) => ({
    title: String(s.title ?? ''),
    complexity: typeof s.complexity === 'string' ? s.complexity : undefined,
    priority: typeof s.priority === 'number' ? `P${s.priority}` : typeof s.priority === 'string' ? s.priority : undefined,
    deps: Array.isArray(s.deps) ? s.deps.filter((d): d is number => typeof d === 'number') : [],
    ownedFiles: Array.isArray(s.ownedFiles) ? s.ownedFiles.map(String) : [],
    expectedOutput: typeof s.expectedOutput === 'string' ? s.expectedOutput : undefined,
  }));
}
