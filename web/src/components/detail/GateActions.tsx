/**
 * Approve, or reject with a reason, the gate the task waits at; the approvals
 * so far below. At exec_review a reject also sends the line comments made in
 * the diff. Keys (not while typing in a field): `a` approve, `r` reject, each
 * asking for a confirmation first, since one stray key must not merge a branch.
 */
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorText } from '../reasons.js';
import { api } from '../../api/client.js';
import type { Gate, Task } from '../../api/types.js';
import { navigate } from '../../stores/route.js';
import { useComments, useReview } from '../../stores/review.js';
import { isShortcut } from '../keys.js';
import styles from './Detail.module.css';

const GATE_STATUSES: ReadonlySet<string> = new Set(['plan_review', 'spec_review', 'exec_review']);

/**
 * `mergeBlocked`: at exec_review, why an approval would not merge yet (the task detail's), said before approving.
 * `steeringFiles`: the change's files that steer later runs (hooks, checks, specs, knowhow), said before approving.
 * `shownVersion`: the version whose changes the review panel shows (its picker may show an older one): a
 * decision is always on this task's own version, so any other is said beside the buttons and in the confirmation.
 */
export function GateActions({ task, mergeBlocked = null, steeringFiles = [], shownVersion = task.version, onDone }: { task: Task; mergeBlocked?: string | null; steeringFiles?: readonly string[]; shownVersion?: number; onDone(): void }) {
  const { t, i18n } = useTranslation();
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<'approve' | 'reject' | null>(null);
  const reasonBox = useRef<HTMLTextAreaElement>(null);
  const confirmButton = useRef<HTMLButtonElement>(null);
  const gate = GATE_STATUSES.has(task.status) ? (task.status as Gate) : null;
  const comments = useComments(task.id);
  const sendsComments = gate === 'exec_review' ? comments : [];
  const named = gate ? { gate: t(`status.${gate}`), version: task.version } : null;
  const otherVersion = gate === 'exec_review' && shownVersion !== task.version ? t('gate.otherVersion', { shown: shownVersion, version: task.version }) : null;

  const act = async (kind: 'approve' | 'reject') => {
    setConfirming(null);
    if (!gate) return;
    if (kind === 'reject' && !reason.trim()) {
      setError(t('gate.needReason'));
      reasonBox.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      if (kind === 'approve') {
        await api.approve(task.id, gate, reason.trim() || undefined);
        // Comments only travel with a rejection; an approved version leaves them behind.
        useReview.getState().clear(task.id);
        setReason('');
        onDone();
      } else {
        // A person's rejection supersedes this version: follow the task to its new version.
        const { next } = await api.reject(task.id, gate, reason.trim(), sendsComments);
        useReview.getState().clear(task.id);
        setReason('');
        if (next?.id) navigate({ name: 'board', taskId: next.id });
        else onDone();
      }
    } catch (err) {
      setError(errorText(t, i18n.language, err));
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    if (!gate) return;
    const onKey = (e: KeyboardEvent) => {
      if (!isShortcut(e) || busy) return;
      if (e.key === 'a') setConfirming('approve');
      else if (e.key === 'r') {
        // A rejection needs its reason first: go to the box instead of asking to confirm nothing.
        if (!reason.trim()) {
          setError(t('gate.needReason'));
          reasonBox.current?.focus();
        } else setConfirming('reject');
      } else return;
      e.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [gate, busy, reason, t]);

  useEffect(() => {
    if (confirming) confirmButton.current?.focus();
  }, [confirming]);

  return (
    <>
      {gate && (
        <section className={styles.gate} aria-labelledby="gate-h">
          <h3 id="gate-h">{t('gate.waiting', { gate: t(`status.${gate}`) })}</h3>
          <label htmlFor="gate-reason">{t('gate.reason')}</label>
          <textarea id="gate-reason" ref={reasonBox} className={styles.textarea} value={reason} onChange={(e) => setReason(e.target.value)} maxLength={10_000} />
          {sendsComments.length > 0 && (
            <p className={styles.muted} data-testid="comments-to-send">
              {t('gate.commentsToSend', { count: sendsComments.length })} {sendsComments.map((c) => `${c.file}:${c.line}`).join(', ')}
            </p>
          )}
          {otherVersion && (
            <p role="status" className={styles.err} data-testid="other-version">
              {otherVersion}
            </p>
          )}
          {gate === 'exec_review' && steeringFiles.length > 0 && (
            <p role="status" className={styles.err} data-testid="steering-files">
              {t('gate.steering', { files: steeringFiles.join(', ') })}
            </p>
          )}
          {gate === 'exec_review' && mergeBlocked && (
            <p role="status" className={styles.err} data-testid="merge-blocked">
              {t('gate.mergeBlocked', { reason: mergeBlocked })}
            </p>
          )}
          <div className={styles.row}>
            <button disabled={busy} onClick={() => void act('approve')} aria-label={t('gate.approveNamed', named!)}>
              {t('gate.approve')}
            </button>
            <button disabled={busy} onClick={() => void act('reject')} aria-label={t('gate.rejectNamed', named!)}>
              {t('gate.reject')}
            </button>
            <span className={styles.muted}>{t('gate.keys')}</span>
            {error && <span role="alert" className={styles.err}>{error}</span>}
          </div>
          {confirming && (
            <div
              role="alertdialog"
              aria-labelledby="gate-confirm"
              className={styles.confirm}
              onKeyDown={(e) => {
                if (e.key !== 'Escape') return;
                e.stopPropagation();
                setConfirming(null);
              }}
            >
              <p id="gate-confirm">
                {confirming === 'approve' ? t('gate.confirmApprove', named!) : t('gate.confirmReject', { count: sendsComments.length })}
                {otherVersion ? ` ${otherVersion}` : ''}
              </p>
              <div className={styles.row}>
                <button ref={confirmButton} disabled={busy} onClick={() => void act(confirming)}>
                  {confirming === 'approve' ? t('gate.yesApprove') : t('gate.yesReject')}
                </button>
                <button onClick={() => setConfirming(null)}>{t('review.cancel')}</button>
              </div>
            </div>
          )}
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
