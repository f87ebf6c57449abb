/** The trace of the latest run: its chain of runs across task versions, with their events. */
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/client.js';
import type { TraceChain } from '../../api/types.js';
import styles from './Detail.module.css';

export function Trace({ traceId }: { traceId: string }) {
  const { t, i18n } = useTranslation();
  const [open, setOpen] = useState(false);
  const [trace, setTrace] = useState<TraceChain | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!open) return;
    api.trace(traceId).then(setTrace, (err: Error) => setError(err.message));
  }, [open, traceId]);
  return (
    <section className={styles.section} aria-labelledby="trace-h">
      <h3 id="trace-h">{t('trace.title')}</h3>
      <button aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? t('trace.hide') : t('trace.show')} <code>{traceId.slice(0, 12)}</code>
      </button>
      {open && error && <p role="alert" className={styles.err}>{error}</p>}
      {open && trace && (
        <ol className={styles.events}>
          {trace.chain.map((c) => (
            <li key={c.run.id}>
              <strong>
                v{c.taskVersion} {t(`runKind.${c.run.kind}`)}
              </strong>{' '}
              {t(`runStatus.${c.run.status}`)}
              <ul>
                {c.events.map((e) => (
                  <li key={e.id}>
                    <span className={styles.muted}>{new Date(e.at).toLocaleTimeString(i18n.language)}</span> {t(`eventType.${e.type}`, { defaultValue: e.type })}{' '}
                    {typeof e.payload.stage === 'string' ? `${e.payload.stage} ${String(e.payload.state ?? '')}` : typeof e.payload.to === 'string' ? `→ ${t(`status.${e.payload.to}`, { defaultValue: e.payload.to })}` : typeof e.payload.reason === 'string' ? e.payload.reason : ''}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
