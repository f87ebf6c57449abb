/**
 * One card of the board: a button that opens its task. A subtask's card also names its parent with a second
 * button (one button may not hold another), drawn over the card's last line so the two read as one card.
 */
import { memo } from 'react';
import type { TaskSummary } from '../api/types.js';
import type { FamilyLines } from './family.js';
import { NEEDS_PERSON } from './statuses.js';
import { visible } from './hiddenChars.js';
import styles from './Board.module.css';

const PRIORITY = ['P0', 'P1', 'P2'];

interface CardProps extends FamilyLines {
  task: TaskSummary;
  selected: boolean;
  statusLabel: string;
  complexityLabel: string;
  onOpen(id: string): void;
}

/** Memoised on its props: the labels and family lines are strings, so a live change re-renders only the cards it changes. */
export const Card = memo(function Card({ task, selected, statusLabel, complexityLabel, parent, progress, onOpen }: CardProps) {
  const classes = [styles.card, selected && styles.selected, NEEDS_PERSON.has(task.status) && styles.attention, parent && styles.hasParent];
  return (
    <li className={styles.item}>
      <button className={classes.filter(Boolean).join(' ')} data-card={task.id} aria-current={selected ? 'true' : undefined} onClick={() => onOpen(task.id)}>
        <span className={styles.titleRow}>
          <span className={styles.title}>{visible(task.title)}</span>
          {task.version > 1 && <span className={styles.version} data-testid="card-version">v{task.version}</span>}
        </span>
        <span className={styles.meta}>
          <span className={styles.status}>{statusLabel}</span>
          <span>{PRIORITY[task.priority]}</span>
          <span>{complexityLabel}</span>
        </span>
        {progress && <span className={styles.progress} data-testid="subtask-progress">{progress}</span>}
      </button>
      {parent && task.parentId && (
        <button className={styles.parentLink} data-parent-of={task.id} title={parent} onClick={() => onOpen(task.parentId!)}>
          {parent}
        </button>
      )}
    </li>
  );
});
