/** Approve, or reject with a reason, the gate the task waits at; the approvals so far below. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/client.js';
import type { Gate, Task } from '../../api/types.js';
import { navigate } from '../../stores/route.js';
import styles from './Detail.module.css';

const GATE_STATUSES: ReadonlySet<string> = new Set(['plan_review', 'spec_review', 'exec_review']);

export function GateActions({ task, onDone }: { task: Task; onDone(): void }) {
  const { t } = useTranslation();
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const gate = GATE_STATUSES.has(task.status) ? (task.status as Gate) : null;

  const act = async (kind: 'approve' | 'reject') => {
    if (!gate) return;
    if (kind === 'reject' && !reason.trim()) {
      setError(t('gate.needReason'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      if (kind === 'approve') {
        await api.approve(task.id, gate, reason.trim() || undefined);
        setReason('');
        onDone();
      } else {
        // A person's rejection supersedes this version: follow the task to its new version.
        const { next } = await api.reject(task.id, gate, reason.trim());
        setReason('');
        if (next?.id) navigate({ name: 'board', taskId: next.id });
        else onDone();
      }
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      {gate && (
        <section className={styles.gate} aria-labelledby="gate-h">
          <h3 id="gate-h">{t('gate.waiting', { gate: t(`status.${gate}`) })}</h3>
          <label htmlFor="gate-reason">{t('gate.reason')}</label>
          <textarea id="gate-reason" className={styles.textarea} value={reason} onChange={(e) => setReason(e.target.value)} maxLength={10_000} />
          <div className={styles.row}>
            <button disabled={busy} onClick={() => void act('approve')}>
              {t('gate.approve')}
            </button>
            <button disabled={busy} onClick={() => void act('reject')}>
              {t('gate.reject')}
            </button>
            {error && <span role="alert" className={styles.err}>{error}</span>}
          </div>
        </section>
      )}
      {task.approvals.length > 0 && (
        <section className={styles.section} aria-labelledby="approvals-h">
          <h3 id="approvals-h">{t('gate.history')}</h3>
          <ul>
            {task.approvals.map((a) => (
              <li key={a.id}>
                {t(`status.${a.gate}`)}: <span className={a.decision === 'approve' ? styles.ok : styles.err}>{t(`gate.${a.decision}d`)}</span> — {a.who}
                {a.reason ? `: ${a.reason}` : ''}
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}
