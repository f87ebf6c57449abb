/**
 * The ways out of a merge conflict left to a person (the task detail's `mergeConflict`), as `maestro task show`
 * gives them: the git commands that resolve it by hand on the task's branch, then a retry naming the commit made
 * (the train merges it, with no conflict run); the task run again from the current base branch, named (a new
 * version, its plan kept); or cancelling it (TaskActions). A plain retry would merge again and meet the same conflict. The commands
 * are core/mergeConflictWays.ts's, the CLI's own; file and branch names are drawn with oneLine().
 */
import { useState, type FormEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { api } from '../../api/client.js';
import { freshRetryCommand, resolveByHandCommands, resolvedRetryCommand, type MergeConflictParkWire, type Task } from '../../api/types.js';
import { href } from '../../stores/route.js';
import { oneLine } from '../hiddenChars.js';
import { Command } from './Command.js';
import { useAction } from './useAction.js';
import styles from './Detail.module.css';

const SHA = /^[0-9a-f]{40}$/;

export function MergeConflictPanel({ task, park, onDone }: { task: Task; park: MergeConflictParkWire | null; onDone(): void }) {
  const { t } = useTranslation();
  const [commit, setCommit] = useState('');
  const { busy, note, run } = useAction(onDone);
  if (!park) return null;
  const base = oneLine(park.baseBranch);
  const act = (body: { commit: string } | { fresh: true }) =>
    run(async () => {
      const { task: after } = await api.retry(task.id, body);
      return 'fresh' in body ? { text: t('mergeConflict.freshDone', { version: after.version, base, status: t(`status.${after.status}`) }), next: after } : { text: t('actions.retried', { status: t(`status.${after.status}`) }) };
    });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (SHA.test(commit.trim())) void act({ commit: commit.trim() });
  };
  const files = park.files.map(oneLine).join(', ');
  const byHand = resolveByHandCommands(task.id, park);
  return (
    <section className={`${styles.section} ${styles.refusal}`} aria-labelledby="merge-conflict-h" data-testid="merge-conflict">
      <h3 id="merge-conflict-h" className={styles.refusalHead}>
        <Trans i18nKey={files ? 'mergeConflict.title' : 'mergeConflict.titleNoFiles'} components={{ main: <code>{base}</code>, branch: <code>{oneLine(park.branch)}</code>, files: <code>{files}</code> }} />
      </h3>
      <ul className={styles.refusals}>
        <li data-testid="merge-conflict-by-hand">
          <p>
            <Trans i18nKey={park.worktree ? 'mergeConflict.byHandWorktree' : 'mergeConflict.byHand'} components={{ branch: <code>{oneLine(park.branch)}</code> }} />
          </p>
          <Command text={byHand.merge.join('\n')} />
          <p>
            <Trans i18nKey="mergeConflict.thenCommit" components={{ files: <code>{files || '—'}</code> }} />
          </p>
          <Command text={byHand.commit.join('\n')} />
          <form onSubmit={submit} className={styles.row}>
            <label>
              {t('mergeConflict.commitLabel')} <input value={commit} onChange={(e) => setCommit(e.target.value)} spellCheck={false} size={42} placeholder="git rev-parse HEAD" />
            </label>
            <button type="submit" disabled={busy || !SHA.test(commit.trim())}>
              {t('mergeConflict.mergeCommit')}
            </button>
          </form>
          <p className={styles.muted}>
            <Trans i18nKey="mergeConflict.orCli" components={{ cmd: <code>{resolvedRetryCommand(task.id)}</code> }} />
          </p>
        </li>
        <li data-testid="merge-conflict-fresh">
          <p>
            <Trans i18nKey="mergeConflict.fresh" components={{ main: <code>{base}</code>, branch: <code>{oneLine(park.branch)}</code> }} />
          </p>
          <button disabled={busy} onClick={() => void act({ fresh: true })}>
            {t('mergeConflict.freshButton', { base })}
          </button>{' '}
          <span className={styles.muted}>
            <Trans i18nKey="mergeConflict.orCli" components={{ cmd: <code>{freshRetryCommand(task.id)}</code> }} />
          </span>
        </li>
        <li>
          <p>{t('mergeConflict.cancel', { cancel: t('actions.cancel') })}</p>
        </li>
      </ul>
      {note && (
        <p role={note.ok ? 'status' : 'alert'} className={note.ok ? styles.ok : styles.err}>
          {note.text} {note.next && <a href={href({ name: 'board', taskId: note.next.id })}>{note.next.id}</a>}
        </p>
      )}
    </section>
  );
}
