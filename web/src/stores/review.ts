/**
 * The reviewer's line comments, per task id, until they are sent with a
 * reject. Kept in a store (not in the diff viewer) because the gate's buttons
 * and the keyboard shortcuts send them, and the diff viewer is a lazy chunk.
 * Likewise the commit of the diff shown for a task's own version: an approval
 * names it (the daemon refuses it with STALE_REVIEW when another commit waits
 * at the gate now), and such a refusal has the diff viewer fetch it again.
 */
import { create } from 'zustand';
import type { LineComment } from '../api/types.js';

interface ReviewState {
  comments: Record<string, LineComment[]>;
  /** The `head` of the diff shown for each task's own version: the commit the person is looking at. */
  shown: Record<string, string>;
  /** What that diff changes (its branch and totals), named where an approval would merge it. */
  changes: Record<string, ShownChange>;
  /** Bumped to have a task's diff fetched again. */
  reloads: Record<string, number>;
  add(taskId: string, comment: LineComment): void;
  remove(taskId: string, index: number): void;
  clear(taskId: string): void;
  setShown(taskId: string, commit: string, change?: ShownChange): void;
  reload(taskId: string): void;
}

/** The branch and totals of the diff shown (DiffResponse's). */
export interface ShownChange {
  branch: string;
  files: number;
  additions: number;
  deletions: number;
}

const NONE: LineComment[] = [];

export const useReview = create<ReviewState>((set, get) => ({
  comments: {},
  shown: {},
  changes: {},
  reloads: {},
  add(taskId, comment) {
    set({ comments: { ...get().comments, [taskId]: [...(get().comments[taskId] ?? []), comment] } });
  },
  remove(taskId, index) {
    set({ comments: { ...get().comments, [taskId]: (get().comments[taskId] ?? []).filter((_, i) => i !== index) } });
  },
  clear(taskId) {
    const { [taskId]: _gone, ...rest } = get().comments;
    set({ comments: rest });
  },
  setShown(taskId, commit, change) {
    if (get().shown[taskId] !== commit) set({ shown: { ...get().shown, [taskId]: commit } });
    if (change) set({ changes: { ...get().changes, [taskId]: change } });
    else if (get().changes[taskId]) {
      const { [taskId]: _gone, ...rest } = get().changes;
      set({ changes: rest });
    }
  },
  reload(taskId) {
    set({ reloads: { ...get().reloads, [taskId]: (get().reloads[taskId] ?? 0) + 1 } });
  },
}));

/** The comments on one task (a stable empty list when there are none, so selectors do not loop). */
export function useComments(taskId: string): LineComment[] {
  return useReview((s) => s.comments[taskId] ?? NONE);
}
