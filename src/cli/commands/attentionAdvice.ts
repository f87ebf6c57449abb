/**
 * What `task show` says of a task in needs_attention that no more particular advice covers (a refused diff, a
 * merge conflict, a merge that names its own retry): how to see why, and the ways out as commands. `maestro
 * status` sends a person here for "why it stopped, and the ways out"; an agent's failure (AGENT_FAILED, a check
 * that kept failing, an unusable plan) printed the error alone, and the board's Retry button had no CLI word.
 */
import type { Task } from '../../core/types.js';

export function attentionAdvice(task: Task, hasRuns: boolean): string | null {
  if (task.status !== 'needs_attention') return null;
  // The parked merge's error already ends with its own `maestro task retry` (mergeCoordinator): said once.
  if (task.lastRunError?.includes('maestro task retry')) return null;
  const logs = hasRuns ? `\`maestro task logs ${task.id}\` shows its last run's output. ` : '';
  return (
    `It stopped and waits for you. ${logs}Put right what stopped it (the task: \`maestro task edit ${task.id}\`; the project's ` +
    `agent: \`maestro project config set\`; its checks: \`.maestro/config.json\`, committed), then \`maestro task retry ${task.id}\` ` +
    `tries it again, or \`maestro task cancel ${task.id}\` drops it.`
  );
}
