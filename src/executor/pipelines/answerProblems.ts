/**
 * The problems of an agent's answer, as the one sentence the retry prompt quotes and the run keeps. The first
 * few are what the agent needs to fix the rest; all of them were text without end: a plan of 1 MB whose one
 * subtask listed `deps: [9, 9, …]` gave 490,000 problems, a 28 MB message sent back as the retry's prompt and
 * written three times into the run's outbox.
 */
export const PROBLEMS_SHOWN = 10;

export function problemList(problems: string[]): string {
  const more = problems.length - PROBLEMS_SHOWN;
  return problems.slice(0, PROBLEMS_SHOWN).join('; ') + (more > 0 ? `; and ${more.toLocaleString('en-US')} more problem${more === 1 ? '' : 's'} like these` : '');
}
