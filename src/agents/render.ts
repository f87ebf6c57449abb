/** How agents are asked to shape plans and verdicts; the scripted agent renders them the same way. */

export interface PlanSubtaskOut {
  title: string;
  complexity: string;
  priority: string | number;
  deps: number[];
  ownedFiles: string[];
  expectedOutput: string;
}

export function renderPlan(plan: { plan: string; subtasks: PlanSubtaskOut[] }): string {
  const rows = plan.subtasks.map((s, i) =>
    `| ${i} | ${s.title.replace(/\|/g, '\\|')} | ${s.complexity} | ${typeof s.priority === 'number' ? `P${s.priority}` : s.priority} | ${s.deps.join(', ')} | ${s.ownedFiles.join(', ')} |`,
  );
  return [
    plan.plan,
    '',
    '| # | title | complexity | priority | deps | ownedFiles |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    '```json',
    JSON.stringify(plan, null, 2),
    '```',
  ].join('\n');
}

export function renderVerdict(verdict: { verdict: string; findings: unknown[] }): string {
  return ['```json', JSON.stringify(verdict, null, 2), '```'].join('\n');
}
