/**
 * A decomposed task on the board: its subtasks sit in whatever lane their status puts them, so each card carries
 * the relation instead. A subtask names its parent ("subtask of …", a button that opens it); a parent counts its
 * subtasks done ("2 of 3 subtasks done").
 *
 * Counted as the daemon finishes parents (src/daemon/parentTasks.ts): a superseded subtask was replaced by its next
 * version (same parent), which counts instead; a cancelled one counts and is not done, as it keeps the parent from
 * being done.
 */
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import type { TaskSummary } from '../api/types.js';
import { visible } from './hiddenChars.js';

export interface SubtaskCount {
  done: number;
  total: number;
}

export function subtaskCounts(tasks: readonly TaskSummary[]): Map<string, SubtaskCount> {
  const counts = new Map<string, SubtaskCount>();
  for (const task of tasks) {
    if (!task.parentId || task.status === 'superseded') continue;
    const c = counts.get(task.parentId) ?? { done: 0, total: 0 };
    c.total++;
    if (task.status === 'done') c.done++;
    counts.set(task.parentId, c);
  }
  return counts;
}

/** What a card says of its family: strings, so a memoised card re-renders only when its own line changes. */
export interface FamilyLines {
  /** "subtask of <parent title>", for a subtask. */
  parent?: string;
  /** "2 of 3 subtasks done", for a parent. */
  progress?: string;
}

/**
 * Every card's family lines, translated once per change of the tasks or the language (not per card). The parent's
 * title is shown with its hidden characters spelled out (hiddenChars.ts): inside a translated sentence a
 * bidirectional override would reorder the words around it. A parent not on the board (not loaded) is named by id.
 */
export function useFamilyLines(tasks: readonly TaskSummary[]): Map<string, FamilyLines> {
  const { t, i18n } = useTranslation();
  return useMemo(() => {
    const byId = new Map(tasks.map((task) => [task.id, task]));
    const counts = subtaskCounts(tasks);
    const lines = new Map<string, FamilyLines>();
    for (const task of tasks) {
      const count = counts.get(task.id);
      const parentId = task.parentId;
      if (!parentId && !count) continue;
      lines.set(task.id, {
        parent: parentId ? t('board.subtaskOf', { title: visible(byId.get(parentId)?.title ?? `#${parentId}`) }) : undefined,
        progress: count ? t('board.subtasksDone', { done: count.done, count: count.total }) : undefined,
      });
    }
    return lines;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [tasks, t, i18n.language]);
}
