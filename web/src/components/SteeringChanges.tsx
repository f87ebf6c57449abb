/**
 * The settings screen's record of changes to what steers later runs (`project.settings_files` events, newest
 * first): a merge that changed `.maestro/` hooks or checks or the knowledge briefs quote, a push to the shared
 * remote's base branch that did so without a Maestro merge, and knowledge promoted into it. Runs from then on use
 * what changed, so a person should see it here as well as in `maestro serve`'s terminal. Read when the screen opens.
 * `baseBranch` is named as the branch: the events do not record one, so an event from before the project's base
 * branch was changed names the current one.
 */
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../api/client.js';
import type { MaestroEvent } from '../api/types.js';
import { oneLine } from './hiddenChars.js';
import styles from '../screens/Screens.module.css';

/** The newest ones shown; the events API has them all. */
const SHOWN = 20;

interface Change {
  id: number;
  at: number;
  kind: 'merged' | 'remote' | 'promotion';
  files: string[];
  sha: string | null;
  who: string;
  subject: string;
}

/** An event's payload as a change; what it lacks or holds wrongly is shown as not said, never thrown. */
function changeOf(e: MaestroEvent): Change {
  const p = e.payload;
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    id: e.id,
    at: e.at,
    kind: p.remote === true ? 'remote' : p.promotion === true ? 'promotion' : 'merged',
    files: Array.isArray(p.files) ? p.files.filter((f): f is string => typeof f === 'string') : [],
    sha: typeof p.sha === 'string' ? p.sha : null,
    who: text(p.who),
    subject: text(p.subject),
  };
}

export function SteeringChanges({ projectId, baseBranch }: { projectId: string; baseBranch: string }) {
  const { t } = useTranslation();
  const base = oneLine(baseBranch);
  const [changes, setChanges] = useState<Change[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setChanges(null);
    setError(null);
    api.events({ projectId, type: 'project.settings_files', order: 'newest', limit: SHOWN }).then(
      ({ events }) => live && setChanges(events.map(changeOf)),
      (err: Error) => live && setError(err.message),
    );
    return () => {
      live = false;
    };
  }, [projectId]);
  return (
    <div className={styles.card} data-testid="steering-changes">
      <h3>{t('steering.title')}</h3>
      <p className={styles.muted}>{t('steering.help', { base })}</p>
      {error && <p role="alert">{t('steering.loadFailed', { message: error })}</p>}
      {!changes && !error && <p className={styles.muted}>{t('steering.loading')}</p>}
      {changes && !changes.length && <p className={styles.muted}>{t('steering.none', { base })}</p>}
      {changes && changes.length > 0 && (
        <ul>
          {changes.map((c) => (
            <li key={c.id} data-kind={c.kind}>
              <strong>{t(`steering.${c.kind}`, { who: c.who || '?', subject: c.subject, base })}</strong> ({new Date(c.at).toLocaleString()}
              {c.sha && <>, {t('steering.commit', { sha: c.sha.slice(0, 12) })}</>})
              <div>{c.files.length ? c.files.map((f) => <code key={f}>{f} </code>) : t('steering.noFiles')}</div>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
