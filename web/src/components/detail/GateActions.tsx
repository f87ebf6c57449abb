/**
 * Approve, or reject with a reason, the gate the task waits at; the approvals
 * so far below. At exec_review a reject also sends the line comments made in
 * the diff. Keys (not while typing in a field): `a` approve, `r` reject, each
 * asking for a confirmation first, since one stray key must not merge a branch.
 * A click on Approve at exec_review asks too, naming what merges (the version,
 * its title, the commit, its branch and size, and the project's base branch): that
 * approval merges into it, which no later action takes back. A click at plan or
 * spec review does not ask: the button names the gate and version, and what it
 * starts (the plan's runs, each on a branch of its own) changes nothing shared
 * and can be cancelled; a question on every click would teach people to click
 * through the one that merges.
 * At exec_review an approval names the commit of the diff shown (the review
 * store's); when another commit waits at the gate now the daemon refuses it
 * (STALE_REVIEW), which is said, and the diff is fetched again to look at.
 * Until that diff has loaded there is nothing to approve: Approve waits (an
 * approval naming no commit would take whatever waits at the gate then), and
 * a diff fetched again that shows another commit says so.
 */
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { oneLine } from '../hiddenChars.js';
import { errorText } from '../reasons.js';
import { api, ApiError } from '../../api/client.js';
import type { Gate, LineComment, Task, TaskDetail } from '../../api/types.js';
import { navigate } from '../../stores/route.js';
import { useComments, useReview, type ShownChange } from '../../stores/review.js';
import { isShortcut } from '../keys.js';
import styles from './Detail.module.css';

type BaseMoved = NonNullable<TaskDetail['baseMoved']> | null;

const GATE_STATUSES: ReadonlySet<string> = new Set(['plan_review', 'spec_review', 'exec_review']);

/**
 * `baseBranch`: the branch the project merges into (the task detail's), named in the merge confirmation.
 * `baseMoved`: at exec_review, the commits the base branch gained since the task's branch was cut (the task detail's),
 * said on the gate; in the merge confirmation with what the merge then does (it depends on the merge strategy).
 * `mergeBlocked`: at exec_review, why an approval would not merge yet (the task detail's), said before approving.
 * `steeringFiles`: the change's files that steer later runs (hooks, checks, specs, knowhow), said before approving.
 * `runsElsewhere`: the change's files that run code outside Maestro once merged (CI, git hooks, package scripts), beside them.
 * `shownVersion`: the version whose changes the review panel shows (its picker may show an older one): a
 * decision is always on this task's own version, so any other is said beside the buttons and in the confirmation.
 */
export function GateActions({ task, baseBranch, baseMoved = null, mergeBlocked = null, steeringFiles = [], runsElsewhere = [], shownVersion = task.version, onDone }: { task: Task; baseBranch: string; baseMoved?: BaseMoved; mergeBlocked?: string | null; steeringFiles?: readonly string[]; runsElsewhere?: readonly string[]; shownVersion?: number; onDone(): void }) {
  const { t, i18n } = useTranslation();
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<'approve' | 'reject' | null>(null);
  const reasonBox = useRef<HTMLTextAreaElement>(null);
  const gate = GATE_STATUSES.has(task.status) ? (task.status as Gate) : null;
  const comments = useComments(task.id);
  const seen = useReview((s) => (gate === 'exec_review' ? s.shown[task.id] : undefined));
  const change = useReview((s) => (gate === 'exec_review' ? s.changes[task.id] : undefined));
  const changedFrom = useChangedFrom(task.id, seen);
  const unseen = gate === 'exec_review' && !seen;
  const sendsComments = gate === 'exec_review' ? comments : [];
  const named = gate ? { gate: t(`status.${gate}`), version: task.version } : null;
  const otherVersion = gate === 'exec_review' && shownVersion !== task.version ? t('gate.otherVersion', { shown: shownVersion, version: task.version }) : null;

  const act = async (kind: 'approve' | 'reject') => {
    setConfirming(null);
    if (!gate || (kind === 'approve' && unseen)) return;
    if (kind === 'reject' && !reason.trim()) {
      setError(t('gate.needReason'));
      reasonBox.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const next = await sendDecision(task.id, gate, kind, reason.trim(), sendsComments, seen);
      setReason('');
      // A person's rejection supersedes this version: follow the task to its new version.
      if (next) navigate({ name: 'board', taskId: next });
      else onDone();
    } catch (err) {
      const stale = err instanceof ApiError && err.code === 'STALE_REVIEW';
      setError(errorText(t, i18n.language, err) + (stale ? ` ${t('gate.diffReloaded')}` : ''));
      if (stale) useReview.getState().reload(task.id);
    } finally {
      setBusy(false);
    }
  };

  useGateKeys(gate !== null && !busy, () => !unseen && setConfirming('approve'), () => {
    // A rejection needs its reason first: go to the box instead of asking to confirm nothing.
    if (!reason.trim()) {
      setError(t('gate.needReason'));
      reasonBox.current?.focus();
    } else setConfirming('reject');
  });

  return (
    <>
      {gate && (
        <section className={styles.gate} aria-labelledby="gate-h">
          <h3 id="gate-h">{t('gate.waiting', { gate: t(`status.${gate}`) })}</h3>
          <label htmlFor="gate-reason">{t('gate.reason')}</label>
          <textarea id="gate-reason" ref={reasonBox} className={styles.textarea} value={reason} onChange={(e) => setReason(e.target.value)} maxLength={10_000} />
          <GateNotices gate={gate} baseMoved={baseMoved} comments={sendsComments} otherVersion={otherVersion} steeringFiles={steeringFiles} runsElsewhere={runsElsewhere} mergeBlocked={mergeBlocked} seen={seen} changedFrom={changedFrom} />
          {/* An approval at exec_review merges: a click asks first, as the key does. */}
          <DecisionButtons busy={busy} unseen={unseen} named={named!} error={error} onDecide={(kind) => (kind === 'approve' && gate === 'exec_review' ? setConfirming('approve') : void act(kind))} />
          {confirming && (
            <ConfirmDecision
              text={(confirming === 'approve' ? t('gate.confirmApprove', named!) : t('gate.confirmReject', { count: sendsComments.length })) + (otherVersion ? ` ${otherVersion}` : '')}
              detail={confirming === 'approve' && gate === 'exec_review' && seen ? mergeText(t, task, baseBranch, seen, change, mergeBlocked, baseMoved) : null}
              yes={confirming === 'reject' ? t('gate.yesReject') : gate === 'exec_review' ? t('gate.yesMerge') : t('gate.yesApprove')}
              no={confirming === 'reject' ? t('gate.notYetReject') : gate === 'exec_review' ? t('gate.notYetMerge') : t('gate.notYetApprove')}
              busy={busy}
              onYes={() => void act(confirming)}
              onCancel={() => setConfirming(null)}
            />
          )}
        </section>
      )}
      <ApprovalHistory task={task} />
    </>
  );
}

/**
 * Sends the decision, then forgets the line comments: only a rejection carries them, an approved version leaves
 * them behind. An approval names `seen`, the commit of the diff shown, when there is one. Returns the new
 * version a rejection made, if any.
 */
async function sendDecision(taskId: string, gate: Gate, kind: 'approve' | 'reject', reason: string, comments: LineComment[], seen: string | undefined): Promise<string | null> {
  let next: string | null = null;
  if (kind === 'approve') await api.approve(taskId, gate, reason || undefined, seen);
  else next = (await api.reject(taskId, gate, reason, comments)).next?.id ?? null;
  useReview.getState().clear(taskId);
  return next;
}

/**
 * What an approval at exec_review merges, and into what, for its confirmation; what the merge does when the base moved
 * since the branch was cut (mergeTrain.ts: `merge`/`no-ff` merge onto it as it is, without running the checks again;
 * `ff-only` cannot fast-forward, so a conflict run brings the base in and the result comes back to this gate); and that
 * it waits, when it would.
 */
function mergeText(t: TFunction, task: Task, baseBranch: string, commit: string, change: ShownChange | undefined, mergeBlocked: string | null, baseMoved: BaseMoved): string {
  const named = { version: task.version, title: oneLine(task.title), base: oneLine(baseBranch), commit: commit.slice(0, 12) };
  const text = change
    ? t('gate.confirmMergeChange', { ...named, branch: oneLine(change.branch), count: change.files, additions: change.additions, deletions: change.deletions })
    : t('gate.confirmMerge', named);
  const onto = baseMoved?.state === 'counted' && baseMoved.checks > 0 ? 'gate.mergeOntoMovedChecked' : 'gate.mergeOntoMoved';
  const moved = baseMoved?.state === 'counted' && baseMoved.commits > 0 && baseMoved.mergeStrategy !== null ? t(baseMoved.mergeStrategy === 'ff-only' ? 'gate.mergeFfOnlyMoved' : onto, { base: oneLine(baseMoved.base) }) : null;
  return [text, moved, mergeBlocked ? t('gate.mergeBlocked', { reason: mergeBlocked }) : null].filter(Boolean).join(' ');
}

/** The commit shown before `seen`, once this task's diff fetched again shows another one (null until then). */
function useChangedFrom(taskId: string, seen: string | undefined): string | null {
  const [from, setFrom] = useState<{ taskId: string; was: string; now: string } | null>(null);
  const last = useRef<{ taskId: string; commit: string } | null>(null);
  useEffect(() => {
    if (!seen) return;
    if (last.current?.taskId === taskId && last.current.commit !== seen) setFrom({ taskId, was: last.current.commit, now: seen });
    last.current = { taskId, commit: seen };
  }, [taskId, seen]);
  return from && from.taskId === taskId && from.now === seen ? from.was : null;
}

/**
 * What to know before deciding: the commit an approval names (or that an approval waits for the diff), the
 * comments a rejection sends, another version shown, steering files, files that run code elsewhere once merged, a
 * merge that would wait. File names as the diff shows them (oneLine: a control or bidirectional character, a line break shown).
 */
function GateNotices({ gate, baseMoved, comments, otherVersion, steeringFiles, runsElsewhere, mergeBlocked, seen, changedFrom }: { gate: Gate; baseMoved: BaseMoved; comments: readonly LineComment[]; otherVersion: string | null; steeringFiles: readonly string[]; runsElsewhere: readonly string[]; mergeBlocked: string | null; seen: string | undefined; changedFrom: string | null }) {
  const { t } = useTranslation();
  return (
    <>
      {seen && !changedFrom && (
        <p className={styles.muted} data-testid="approves-commit">
          {t('gate.approvesCommit', { commit: seen.slice(0, 12) })}
        </p>
      )}
      {seen && changedFrom && (
        <p role="status" className={styles.err} data-testid="approves-commit">
          {t('gate.commitChanged', { was: changedFrom.slice(0, 12), commit: seen.slice(0, 12) })}
        </p>
      )}
      {gate === 'exec_review' && baseMoved && <BaseMovedLine moved={baseMoved} />}
      {gate === 'exec_review' && !seen && (
        <p role="status" className={styles.muted} data-testid="approve-waits">
          {t('gate.approveWaits')}
        </p>
      )}
      {comments.length > 0 && (
        <p className={styles.muted} data-testid="comments-to-send">
          {t('gate.commentsToSend', { count: comments.length })} {comments.map((c) => `${c.file}:${c.line}`).join(', ')}
        </p>
      )}
      {otherVersion && (
        <p role="status" className={styles.err} data-testid="other-version">
          {otherVersion}
        </p>
      )}
      {gate === 'exec_review' && steeringFiles.length > 0 && (
        <p role="status" className={styles.err} data-testid="steering-files">
          {t('gate.steering', { files: steeringFiles.map(oneLine).join(', ') })}
        </p>
      )}
      {gate === 'exec_review' && runsElsewhere.length > 0 && (
        <p role="status" className={styles.err} data-testid="runs-elsewhere">
          {t('gate.runsElsewhere', { files: runsElsewhere.map(oneLine).join(', ') })}
        </p>
      )}
      {gate === 'exec_review' && mergeBlocked && (
        <p role="status" className={styles.err} data-testid="merge-blocked">
          {t('gate.mergeBlocked', { reason: mergeBlocked })}
        </p>
      )}
    </>
  );
}

/** How far the base branch moved since the task's branch was cut: up to date, N new commits, or which of the two is missing. */
function BaseMovedLine({ moved }: { moved: NonNullable<BaseMoved> }) {
  const { t } = useTranslation();
  const named = { base: oneLine(moved.base), branch: oneLine(moved.branch) };
  if (moved.state === 'missing') {
    const key = moved.missing === 'branch' ? 'gate.baseMissingBranch' : moved.missing === 'base' ? 'gate.baseMissingBase' : 'gate.baseMissingBoth';
    return <p role="status" className={styles.err} data-testid="base-moved">{t(key, named)}</p>;
  }
  return (
    <p className={moved.commits > 0 ? styles.reason : styles.muted} data-testid="base-moved">
      {moved.commits > 0 ? t('gate.baseMoved', { ...named, count: moved.commits }) : t('gate.baseUpToDate', named)}
    </p>
  );
}

/** `a` asks to approve, `r` to reject, while `on` (at a gate, nothing in flight) and the person is not typing. */
function useGateKeys(on: boolean, approve: () => void, reject: () => void): void {
  const keys = useRef({ approve, reject });
  keys.current = { approve, reject };
  useEffect(() => {
    if (!on) return;
    const onKey = (e: KeyboardEvent) => {
      if (!isShortcut(e)) return;
      if (e.key === 'a') keys.current.approve();
      else if (e.key === 'r') keys.current.reject();
      else return;
      e.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [on]);
}

/** Approve (waiting for the diff at exec_review) and Reject, named with the gate and version, the keys, and why the last try failed. */
function DecisionButtons({ busy, unseen, named, error, onDecide }: { busy: boolean; unseen: boolean; named: { gate: string; version: number }; error: string | null; onDecide(kind: 'approve' | 'reject'): void }) {
  const { t } = useTranslation();
  return (
    <div className={styles.row}>
      <button disabled={busy || unseen} onClick={() => onDecide('approve')} aria-label={t('gate.approveNamed', named)}>
        {t('gate.approve')}
      </button>
      <button disabled={busy} onClick={() => onDecide('reject')} aria-label={t('gate.rejectNamed', named)}>
        {t('gate.reject')}
      </button>
      <span className={styles.muted}>{t('gate.keys')}</span>
      {error && <span role="alert" className={styles.err}>{error}</span>}
    </div>
  );
}

/**
 * The confirmation a decision asks first (focused, so Enter decides and Escape closes it); `detail`, what it merges.
 * `no` closes it without deciding, and says so ("Don't merge yet"): a plain "Cancel" here sat just above "Cancel this
 * task", which cancels the task.
 */
function ConfirmDecision({ text, detail, yes, no, busy, onYes, onCancel }: { text: string; detail: string | null; yes: string; no: string; busy: boolean; onYes(): void; onCancel(): void }) {
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => button.current?.focus(), []);
  return (
    <div
      role="alertdialog"
      aria-labelledby="gate-confirm"
      aria-describedby={detail ? 'gate-confirm-merge' : undefined}
      className={styles.confirm}
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.stopPropagation();
        onCancel();
      }}
    >
      <p id="gate-confirm">{text}</p>
      {detail && (
        <p id="gate-confirm-merge" data-testid="confirm-merge">
          {detail}
        </p>
      )}
      <div className={styles.row}>
        <button ref={button} disabled={busy} onClick={onYes}>
          {yes}
        </button>
        <button onClick={onCancel}>{no}</button>
      </div>
    </div>
  );
}

/** The decisions made on this version so far. */
function ApprovalHistory({ task }: { task: Task }) {
  const { t } = useTranslation();
  if (!task.approvals.length) return null;
  return (
    <section className={styles.section} aria-labelledby="approvals-h">
      <h3 id="approvals-h">{t('gate.history')}</h3>
      <ul>
        {task.approvals.map((a) => (
          <li key={a.id}>
            {/* A conflict run's resolution is approved at exec_review again, often in the same words: which was which. */}
            {t(`status.${a.gate}`)}: <span className={a.decision === 'approve' ? styles.ok : styles.err}>{t(`gate.${a.decision}d`)}</span>
            {a.conflictResolution ? t('gate.ofConflictResolution') : ''} — {a.who}
            {a.reason ? `: ${a.reason}` : ''}
          </li>
        ))}
      </ul>
    </section>
  );
}
