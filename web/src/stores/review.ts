/**
 * The reviewer's line comments, per task id, until they are sent with a
 * reject. Kept in a store (not in the diff viewer) because the gate's buttons
 * and the keyboard shortcuts send them, and the diff viewer is a lazy chunk.
 */
import { create } from 'zustand';
import type { LineComment } from '../api/types.js';

interface ReviewState {
  comments: Record<string, LineComment[]>;
  add(taskId: string, comment: LineComment): void;
  remove(taskId: string, index: number): void;
  clear(taskId: string): void;
}

const NONE: LineComment[] = [];

export const useReview = create<ReviewState>((set, get) => ({
  comments: {},
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
}));

/** The comments on one task (a stable empty list when there are none, so selectors do not loop). */
export function useComments(taskId: string): LineComment[] {
  return useReview((s) => s.comments[taskId] ?? NONE);
}
