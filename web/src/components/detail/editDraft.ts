/**
 * The task edit form's values, and what of them to send. Text is kept as typed (owned files one path a line, a
 * type or scope '' for none); `changedFields` compares with the task as it was when the form opened and answers
 * only the fields that differ, so an edit never puts back a field someone else changed meanwhile, and a form
 * saved unchanged sends nothing.
 */
import type { Task, TaskEdit } from '../../api/types.js';

export interface Draft {
  title: string;
  priority: Task['priority'];
  complexity: Task['complexity'];
  deps: string[];
  /** One repository path a line. */
  ownedFiles: string;
  taskType: NonNullable<Task['taskType']> | '';
  scope: NonNullable<Task['scope']> | '';
  expectedOutput: string;
  spec: string;
}

export function draftOf(task: Task): Draft {
  return {
    title: task.title,
    priority: task.priority,
    complexity: task.complexity,
    deps: [...task.deps],
    ownedFiles: task.ownedFiles.join('\n'),
    taskType: task.taskType ?? '',
    scope: task.scope ?? '',
    expectedOutput: task.expectedOutput ?? '',
    spec: task.spec ?? '',
  };
}

const lines = (text: string): string[] => text.split('\n').map((l) => l.trim()).filter(Boolean);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
/** A text field left empty clears it (null), as the API stores "not given". */
const orNull = (text: string): string | null => (text === '' ? null : text);

type Editable = Required<Omit<TaskEdit, 'plan'>>;

/** A draft as the API takes it: paths one a line, a title trimmed (the daemon trims it), empty text and no choice null. */
function asSent(draft: Draft): Editable {
  return {
    title: draft.title.trim(),
    priority: draft.priority,
    complexity: draft.complexity,
    deps: draft.deps,
    ownedFiles: lines(draft.ownedFiles),
    taskType: draft.taskType || null,
    scope: draft.scope || null,
    expectedOutput: orNull(draft.expectedOutput),
    spec: orNull(draft.spec),
  };
}

/** The PATCH body: each field whose value, as sent, differs from `before`'s read the same way. */
export function changedFields(before: Task, draft: Draft): TaskEdit {
  const was = asSent(draftOf(before));
  return Object.fromEntries(Object.entries(asSent(draft)).filter(([key, value]) => !same(value, was[key as keyof Editable]))) as TaskEdit;
}

/** Each field an edit may change, with the label the detail shows it by (its Fields, its spec's heading). */
export const FIELD_LABEL: Record<keyof Editable, string> = {
  title: 'field.title',
  priority: 'field.priority',
  complexity: 'field.complexity',
  deps: 'field.deps',
  ownedFiles: 'field.ownedFiles',
  taskType: 'field.type',
  scope: 'field.scope',
  expectedOutput: 'field.expected',
  spec: 'detail.spec',
};
