/**
 * The board: tasks in five lanes, live. Filters (status, text) narrow it;
 * counts per status show what the filters hide. Cards are buttons; arrow keys
 * move between them (up/down in a lane, left/right across lanes).
 *
 * Built for a thousand tasks: each lane renders LANE_PAGE cards until asked
 * for more; cards are memoised on (task, labels, family lines, selected) with
 * the labels translated once per render of the board and the family lines once
 * per change of the tasks (no i18n subscription per card), so a live status
 * change re-renders the cards whose text changed: the task's, and its parent's
 * when the count of subtasks done moves.
 *
 * Subtasks stay in the lane of their own status; their cards carry the
 * relation (family.ts).
 */
import { useMemo, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { fitPlaceholder } from './fit.js';
import type { CardMergeCheck, CardMergeTurn, TaskStatus, TaskSummary } from '../api/types.js';
import { visible } from './hiddenChars.js';
import { TASK_STATUSES } from '../api/types.js';
import { Card } from './BoardCard.js';
import { useFamilyLines, type FamilyLines } from './family.js';
import { LANES } from './statuses.js';
import { NewTask } from './NewTask.js';
import styles from './Board.module.css';

/** A lane shows this many cards at first; more on request, so 1,000 tasks still render at once. */
export const LANE_PAGE = 150;

function moveFocus(e: KeyboardEvent<HTMLElement>): void {
  const target = e.target as HTMLElement;
  if (!target.dataset.card) return;
  const lane = target.closest('[data-lane]') as HTMLElement | null;
  if (!lane) return;
  const cards = [...lane.querySelectorAll<HTMLElement>('[data-card]')];
  const i = cards.indexOf(target);
  let next: HTMLElement | undefined;
  if (e.key === 'ArrowDown') next = cards[i + 1];
  else if (e.key === 'ArrowUp') next = cards[i - 1];
  else if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
    const lanes = [...(lane.parentElement?.querySelectorAll<HTMLElement>('[data-lane]') ?? [])];
    const j = lanes.indexOf(lane) + (e.key === 'ArrowRight' ? 1 : -1);
    const other = lanes[j]?.querySelectorAll<HTMLElement>('[data-card]');
    next = other?.[Math.min(i, other.length - 1)];
  } else return;
  if (next) {
    e.preventDefault();
    next.focus();
  }
}

type Labels = { status: Record<TaskStatus, string>; complexity: Record<string, string>; checkingMerge(check: CardMergeCheck): string; mergeTurn(turn: CardMergeTurn): string };

/**
 * What a card says of its status: a task in merging whose merge check runs says so, with its round (or, with no run
 * yet, why: checkingMergeLabel); one waiting behind
 * another task's merge check names that task, or that it is checked together with it (the detail says more).
 */
function statusLabelOf(task: TaskSummary, labels: Labels): string {
  if (task.status !== 'merging') return labels.status[task.status];
  if (task.mergeCheck) return labels.checkingMerge(task.mergeCheck);
  return task.mergeTurn ? labels.mergeTurn(task.mergeTurn) : labels.status.merging;
}

/** A card's words for its merge check: its round while it runs; with no run yet, why not (starting, waiting, its daemon gone). */
function checkingMergeLabel(t: (key: string, values?: Record<string, unknown>) => string, c: CardMergeCheck): string {
  switch (c.state) {
    case 'starting':
      return t('board.checkingMergeStarting');
    case 'waiting':
      return t('board.checkingMergeWaiting');
    case 'ownerGone':
      return t('board.checkingMergeOwnerGone');
    default:
      return c.round !== null && c.maxRounds !== null ? t('board.checkingMergeRound', { round: c.round, maxRounds: c.maxRounds }) : t('board.checkingMerge');
  }
}

/** One lane: its title and count, the statuses it holds, and its first LANE_PAGE cards until asked for all. */
function Lane({ lane, counts, expanded, onExpand, labels, family, selectedId, onOpen }: {
  lane: { key: string; statuses: TaskStatus[]; tasks: TaskSummary[] }; counts: Partial<Record<TaskStatus, number>>; expanded: boolean; onExpand(): void;
  labels: Labels; family: Map<string, FamilyLines>; selectedId?: string; onOpen(id: string): void;
}) {
  const { t } = useTranslation();
  const shown = expanded ? lane.tasks : lane.tasks.slice(0, LANE_PAGE);
  return (
    <section className={styles.lane} data-lane={lane.key} aria-labelledby={`${lane.key}-h`}>
      <h2 id={`${lane.key}-h`} className={styles.laneTitle}>
        {t(lane.key)} <span className={styles.count}>{lane.tasks.length}</span>
      </h2>
      <p className={styles.breakdown}>
        {lane.statuses
          .filter((s) => counts[s])
          .map((s) => `${t(`status.${s}`)} ${counts[s]}`)
          .join(' · ')}
      </p>
      <ul className={styles.cards}>
        {shown.map((task) => (
          <Card key={task.id} task={task} selected={task.id === selectedId} statusLabel={statusLabelOf(task, labels)} complexityLabel={labels.complexity[task.complexity] ?? task.complexity}
            parent={family.get(task.id)?.parent} progress={family.get(task.id)?.progress} onOpen={onOpen} />
        ))}
      </ul>
      {shown.length < lane.tasks.length && (
        <button className={styles.more} onClick={onExpand}>
          {t('board.showMore', { count: lane.tasks.length - shown.length })}
        </button>
      )}
    </section>
  );
}

export function Board({ tasks, selectedId, onOpen }: { tasks: TaskSummary[]; selectedId?: string; onOpen(id: string): void }) {
  const { t, i18n } = useTranslation();
  // One translation pass per language, shared by every card.
  const labels: Labels = useMemo(
    () => ({
      status: Object.fromEntries(TASK_STATUSES.map((s) => [s, t(`status.${s}`)])) as Record<TaskStatus, string>,
      complexity: { easy: t('complexity.easy'), medium: t('complexity.medium'), hard: t('complexity.hard') } as Record<string, string>,
      checkingMerge: (c: CardMergeCheck) => checkingMergeLabel(t, c),
      mergeTurn: (m: CardMergeTurn) => (m.together ? t('board.mergeTogether', { title: visible(m.behind.title), count: m.together }) : t('board.mergeTurn', { title: visible(m.behind.title) })),
    }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, i18n.language],
  );
  const family = useFamilyLines(tasks);
  const [text, setText] = useState('');
  const [status, setStatus] = useState<TaskStatus | ''>('');
  const [showSuperseded, setShowSuperseded] = useState(false);
  const [expanded, setExpanded] = useState<Record<string, boolean>>({});

  const counts = useMemo(() => {
    const c: Partial<Record<TaskStatus, number>> = {};
    for (const task of tasks) c[task.status] = (c[task.status] ?? 0) + 1;
    return c;
  }, [tasks]);

  const lanes = useMemo(() => {
    const needle = text.trim().toLowerCase();
    const visible = tasks.filter(
      (task) => (status ? task.status === status : showSuperseded || task.status !== 'superseded') && (!needle || task.title.toLowerCase().includes(needle) || task.id.toLowerCase() === needle),
    );
    // Most urgent first, then oldest.
    visible.sort((a, b) => a.priority - b.priority || a.createdAt - b.createdAt);
    return LANES.map((lane) => ({ ...lane, tasks: visible.filter((task) => lane.statuses.includes(task.status)) }));
  }, [tasks, text, status, showSuperseded]);

  return (
    <section className={styles.board} aria-label={t('board.label')}>
      <div className={styles.filters}>
        <NewTask />
        <input type="search" aria-label={t('board.search')} placeholder={t('board.search')} style={fitPlaceholder(t('board.search'))} value={text} onChange={(e) => setText(e.target.value)} />
        <select aria-label={t('board.statusFilter')} value={status} onChange={(e) => setStatus(e.target.value as TaskStatus | '')}>
          <option value="">{t('board.allStatuses')}</option>
          {TASK_STATUSES.map((s) => (
            <option key={s} value={s}>
              {t(`status.${s}`)} ({counts[s] ?? 0})
            </option>
          ))}
        </select>
        <label className={styles.check}>
          <input type="checkbox" checked={showSuperseded} onChange={(e) => setShowSuperseded(e.target.checked)} />
          {t('board.showSuperseded')}
        </label>
        <span className={styles.total} data-testid="task-count">
          {t('board.total', { count: tasks.length })}
        </span>
      </div>
      <div className={styles.lanes} onKeyDown={moveFocus}>
        {lanes.map((lane) => (
          <Lane key={lane.key} lane={lane} counts={counts} expanded={!!expanded[lane.key]} onExpand={() => setExpanded({ ...expanded, [lane.key]: true })}
            labels={labels} family={family} selectedId={selectedId} onOpen={onOpen} />
        ))}
      </div>
    </section>
  );
}
