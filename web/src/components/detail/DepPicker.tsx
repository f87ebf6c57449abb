/**
 * The box a dependency is added from: the person types part of a title, or pastes an id, and picks among the
 * project's tasks that match. A <select> of every task was unusable past a few dozen; this lists at most
 * SHOWN_AT_MOST matches and says how many more there are.
 *
 * It is the ARIA combobox with a listbox popup and manual selection (WAI-ARIA APG, "list autocomplete"):
 * the keyboard stays in the box, ArrowDown/ArrowUp move the active option (aria-activedescendant), Enter adds
 * it, Escape clears the box and closes the list; with nothing typed and the list closed, Escape goes on to the
 * form, which it closes. Typing activates no option, so Enter never adds a task the person did not move to,
 * except when one task alone matches (a pasted id). Enter with something typed never submits the form.
 *
 * A task that waits for this one (waitingOn) would close a dependency cycle, which the daemon refuses on save
 * (DEPENDENCY_CYCLE). It is listed, after the others, disabled with the reason (aria-disabled), not left out: a
 * person who typed its title should learn why it cannot be picked rather than think the box missed it. The arrow
 * keys pass over it, and neither Enter nor a click adds it.
 */
import { useEffect, useId, useMemo, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { TaskSummary } from '../../api/types.js';
import { visible } from '../hiddenChars.js';
import styles from './Detail.module.css';

/** Twenty rows fit the panel without scrolling far; past them a person types a few more letters. */
export const SHOWN_AT_MOST = 20;

/** Ids are `t_` and 16 hex digits (store/rows.ts newId); the first 8 tell a project's tasks apart. */
export const shortId = (id: string) => id.slice(0, 10);

/**
 * The tasks that wait for `taskId`, directly or through others, as far as the board knows: given to it as a
 * dependency, any of them closes a cycle. One walk back along the deps from `taskId`, each task and each dep
 * looked at once (linear in the project's tasks and their deps). Its own deps, saved or added in the form, change
 * nothing: the cycle a new dep X closes is X → … → `taskId` → X, and the path from X ends where it first reaches
 * `taskId`, before any of its deps. So B, which waits for A the form has just added, may be added too (the task
 * then waits for both); A itself, had it waited for the task, was not offered. A dep on a task the board has not
 * loaded ends its path: what waits through that task only the daemon sees, and it refuses the save.
 */
export function waitingOn(tasks: Iterable<TaskSummary>, taskId: string): Set<string> {
  const dependents = new Map<string, string[]>();
  for (const o of tasks) {
    for (const d of o.deps) {
      const list = dependents.get(d);
      if (list) list.push(o.id);
      else dependents.set(d, [o.id]);
    }
  }
  const waiting = new Set<string>();
  const todo = [taskId];
  for (let id = todo.pop(); id !== undefined; id = todo.pop()) {
    for (const w of dependents.get(id) ?? []) {
      if (w === taskId || waiting.has(w)) continue;
      waiting.add(w);
      todo.push(w);
    }
  }
  return waiting;
}

/**
 * The tasks `taskId` may be given as a dependency that match `query`, the first SHOWN_AT_MOST of them, and how
 * many more match. Not itself, not one it has already, not a superseded version (the newest is offered), not a
 * cancelled task (the daemon refuses it: the task would wait for good). A task matches on its title, as typed
 * or as the board draws it (visible), in any case, or on its id when the query starts it and holds the `_` of
 * one: every id starts with `t`, and a title search for "t" or "be" would otherwise match all, or hex digits.
 * Those in `waiting` (waitingOn: they would close a cycle) come after all the others, which can be picked.
 * Then ids pasted first, then titles that start with the query, then the rest, each by title.
 */
export function depCandidates(
  tasks: Iterable<TaskSummary>,
  taskId: string,
  deps: readonly string[],
  query: string,
  waiting: ReadonlySet<string> = new Set(),
): { shown: TaskSummary[]; more: number } {
  const q = query.trim().toLowerCase();
  const rank = (o: TaskSummary): number | null => {
    if (!q) return 2;
    if (q.includes('_') && o.id.toLowerCase().startsWith(q)) return 0;
    const titles = [o.title.toLowerCase(), visible(o.title).toLowerCase()];
    if (titles.some((s) => s.startsWith(q))) return 1;
    return titles.some((s) => s.includes(q)) ? 2 : null;
  };
  const matches: { o: TaskSummary; r: number }[] = [];
  for (const o of tasks) {
    if (o.id === taskId || deps.includes(o.id) || o.status === 'superseded' || o.status === 'cancelled') continue;
    const r = rank(o);
    if (r !== null) matches.push({ o, r });
  }
  const last = (o: TaskSummary) => (waiting.has(o.id) ? 1 : 0);
  matches.sort((a, b) => last(a.o) - last(b.o) || a.r - b.r || a.o.title.localeCompare(b.o.title) || a.o.id.localeCompare(b.o.id));
  return { shown: matches.slice(0, SHOWN_AT_MOST).map((m) => m.o), more: Math.max(0, matches.length - SHOWN_AT_MOST) };
}

/**
 * The combobox's state and keys: what is typed, whether the list is open, the option the arrow keys are on
 * (`active`, an index in `shown`; -1 for none), and adding a task, which empties the box and closes the list.
 */
function useDepCombobox(taskId: string, deps: string[], tasks: Record<string, TaskSummary>, optionId: (i: number) => string, onAdd: (id: string) => void) {
  const [query, setQuery] = useState('');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  // Walked again when the board's tasks change, not at each key typed.
  const waiting = useMemo(() => waitingOn(Object.values(tasks), taskId), [tasks, taskId]);
  const { shown, more } = useMemo(() => depCandidates(Object.values(tasks), taskId, deps, query, waiting), [tasks, taskId, deps, query, waiting]);
  const choosable = (i: number) => i >= 0 && i < shown.length && !waiting.has(shown[i]!.id);
  /** The first option past `from` the way `step` goes that can be picked; past none, -1 going up and `from` going down. */
  const next = (from: number, step: 1 | -1) => {
    for (let i = from + step; i >= 0 && i < shown.length; i += step) if (choosable(i)) return i;
    return step < 0 ? -1 : from;
  };

  const expanded = open && shown.length > 0;
  // A live update may shorten the list under the active option, or make it one that waits for this task.
  const activeId = expanded && choosable(active) ? optionId(active) : undefined;
  // The active option stays in sight in a list taller than its box (jsdom has no scrollIntoView).
  useEffect(() => {
    if (activeId) document.getElementById(activeId)?.scrollIntoView?.({ block: 'nearest' });
  }, [activeId]);

  const close = () => (setOpen(false), setActive(-1));
  const choose = (o: TaskSummary) => (onAdd(o.id), setQuery(''), close());
  const type = (text: string) => (setQuery(text), setOpen(true), setActive(-1));
  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    // An IME's Enter ends the composition (Japanese, Chinese), it does not choose.
    if (e.nativeEvent.isComposing) return;
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      setOpen(true);
      setActive(next(open ? active : -1, 1));
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      if (open) setActive(next(active, -1));
    } else if (e.key === 'Enter') {
      if (!open && !query) return;
      e.preventDefault();
      const o = activeId ? shown[active] : shown.length === 1 && query.trim() && choosable(0) ? shown[0] : undefined;
      if (o) choose(o);
    } else if (e.key === 'Escape') {
      if (!open && !query) return;
      e.preventDefault();
      e.stopPropagation();
      setQuery('');
      close();
    }
  };
  return { query, open, active, waiting, shown, more, expanded, activeId, close, choose, type, onKeyDown };
}

/** `inputId`: the box's id, for its label (the new-task form and a task's edit form may be open at once). */
export function DepPicker({ taskId, deps, tasks, onAdd, inputId = 'edit-dep' }: { taskId: string; deps: string[]; tasks: Record<string, TaskSummary>; onAdd(id: string): void; inputId?: string }) {
  const { t } = useTranslation();
  const base = useId();
  const listId = `${base}-options`;
  const noteId = `${base}-note`;
  const optionId = (i: number) => `${base}-option-${i}`;
  const { query, open, active, waiting, shown, more, expanded, activeId, close, choose, type, onKeyDown } = useDepCombobox(taskId, deps, tasks, optionId, onAdd);
  const note = !open ? null : !shown.length ? t('edit.noDepMatch') : more ? t('edit.moreDeps', { count: more }) : null;

  return (
    <div className={styles.picker}>
      <label htmlFor={inputId}>{t('edit.addDep')}</label>
      <input
        id={inputId}
        className={styles.wide}
        role="combobox"
        aria-autocomplete="list"
        aria-expanded={expanded}
        aria-controls={listId}
        aria-activedescendant={activeId}
        aria-describedby={note ? noteId : undefined}
        placeholder={t('edit.depPlaceholder')}
        autoComplete="off"
        spellCheck={false}
        value={query}
        onChange={(e) => type(e.target.value)}
        onKeyDown={onKeyDown}
        onBlur={close}
      />
      <ul id={listId} role="listbox" aria-label={t('edit.depCandidates')} className={styles.options} hidden={!expanded}>
        {expanded &&
          shown.map((o, i) => <DepOption key={o.id} id={optionId(i)} task={o} active={i === active} closesCycle={waiting.has(o.id)} onChoose={() => choose(o)} />)}
      </ul>
      {note && (
        <p id={noteId} className={styles.muted}>
          {note}
        </p>
      )}
    </div>
  );
}

/** One task the box lists: its title as the board draws it, short id and status; disabled, with the reason, when it would close a cycle. */
function DepOption({ id, task, active, closesCycle, onChoose }: { id: string; task: TaskSummary; active: boolean; closesCycle: boolean; onChoose(): void }) {
  const { t } = useTranslation();
  return (
    <li
      id={id}
      role="option"
      aria-selected={active && !closesCycle}
      aria-disabled={closesCycle || undefined}
      className={styles.option}
      // The box keeps the keyboard: a press on an option must not blur it (which closes the list).
      onMouseDown={(e) => e.preventDefault()}
      onClick={() => {
        if (!closesCycle) onChoose();
      }}
    >
      <span>{visible(task.title)}</span> <code className={styles.muted}>{shortId(task.id)}</code>{' '}
      <span className={styles.muted}>{t(`status.${task.status}`)}</span>
      {closesCycle && (
        <>
          {' '}
          <span className={styles.reason}>{t('edit.dependsOnThis')}</span>
        </>
      )}
    </li>
  );
}
