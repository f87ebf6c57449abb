/**
 * Cancel a task that is not finished (after a confirmation: its unfinished subtasks go with it), or retry one that
 * needs attention or was cancelled. What the daemon did is said: the subtasks it cancelled, the status a retry left.
 */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/client.js';
import type { Task } from '../../api/types.js';
import { visible } from '../hiddenChars.js';
import { useAction } from './useAction.js';
import styles from './Detail.module.css';

const FINISHED: ReadonlySet<string> = new Set(['done', 'cancelled', 'superseded']);
const RETRYABLE: ReadonlySet<string> = new Set(['needs_attention', 'cancelled']);

/** `plainRetry` false: a retry here would meet the same trouble (a merge conflict left to a person: MergeConflictPanel has the retries that end it). */
export function TaskActions({ task, plainRetry = true, onDone }: { task: Task; plainRetry?: boolean; onDone(): void }) {
  const { t } = useTranslation();
  const [asking, setAsking] = useState(false);
  const { busy, note, run } = useAction(onDone);
  const act = (what: () => Promise<string>) =>
    run(async () => {
      const text = await what();
      setAsking(false);
      return { text };
    });
  const cancel = () =>
    act(async () => {
      const { subtasksCancelled: with_ } = await api.cancel(task.id);
      return with_.length ? t('actions.cancelledWith', { count: with_.length, titles: with_.map((s) => `“${visible(s.title)}”`).join(', ') }) : t('actions.cancelled');
    });
  const retry = () => act(async () => t('actions.retried', { status: t(`status.${(await api.retry(task.id)).task.status}`) }));
  const canCancel = !FINISHED.has(task.status);
  const canRetry = plainRetry && RETRYABLE.has(task.status);
  if (!canCancel && !canRetry && !note) return null;
  return (
    <div className={styles.row} data-testid="task-actions">
      {canRetry && (
        <button disabled={busy} onClick={() => void retry()}>
          {t('actions.retry')}
        </button>
      )}
      {canCancel && !asking && (
        <button disabled={busy} onClick={() => setAsking(true)}>
          {t('actions.cancel')}
        </button>
      )}
      {canCancel && asking && (
        <>
          <span>{t('actions.cancelConfirm')}</span>
          <button disabled={busy} onClick={() => void cancel()}>
            {t('actions.confirmCancel')}
          </button>
          <button disabled={busy} onClick={() => setAsking(false)}>
            {t('actions.keep')}
          </button>
        </>
      )}
      {note && <span role={note.ok ? 'status' : 'alert'} className={note.ok ? styles.ok : styles.err}>{note.text}</span>}
    </div>
  );
}
