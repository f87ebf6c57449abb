/**
 * The evidence at exec_review: the checks, the reviewers' verdicts and
 * findings, and the diff. Loaded as its own chunk (the diff component and the
 * grammars are most of its weight), only when a task is opened at a point
 * where it has changes.
 *
 * Diff component: react-diff-view 3.3.3 (pinned), with refractor 5.0.0 for
 * highlighting. Chosen over @git-diff-view/react 0.1.7 because it takes
 * structured hunks (the daemon already parses the diff), draws unified and
 * split views from the same data, pins arbitrary React "widgets" under any
 * line (comments, findings), lets the gutter be our own button (line
 * comments by keyboard), works with React 19 (peer react >= 16.14, no legacy
 * APIs) and brings no highlighter of its own: refractor with 14 grammars
 * keeps this chunk small, where @git-diff-view ships highlight.js + lowlight.
 * Maintained: 3.3.3 released 2026-04.
 */
import 'react-diff-view/style/index.css';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { oneLine, visible } from '../hiddenChars.js';
import { errorText } from '../reasons.js';
import { api } from '../../api/client.js';
import type { CheckResult, FindingsResponse, Task, TaskDetail } from '../../api/types.js';
import { DiffViewer } from './DiffViewer.js';
import styles from './Review.module.css';

const fmtMs = (ms: number | null) => (ms === null ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

function Checks({ checks }: { checks: CheckResult[] }) {
  const { t } = useTranslation();
  if (!checks.length) return <p className={styles.muted}>{t('review.noChecks')}</p>;
  return (
    <ul className={styles.checks} aria-label={t('review.checks')}>
      {checks.map((c) => (
        <li key={c.name} data-testid="check">
          <details>
            <summary>
              <span className={styles[`check_${c.status}`]}>{t(`checkStatus.${c.status}`)}</span> <strong>{c.name}</strong> <code>{c.command}</code> <span className={styles.muted}>{fmtMs(c.durationMs)}{c.exitCode !== null ? ` · ${t('review.exitCode', { code: c.exitCode })}` : ''}</span>
            </summary>
            {c.outputTail ? <pre className={styles.tail}>{c.outputTail}</pre> : <p className={styles.muted}>{t('review.noOutput')}</p>}
          </details>
        </li>
      ))}
    </ul>
  );
}

/** The reviews before the latest, folded: each verdict with the findings the agent was asked to fix. */
function EarlierReviews({ review, latest }: { review: FindingsResponse; latest: number }) {
  const { t } = useTranslation();
  const findingsOf = (v: FindingsResponse['verdicts'][number]) => review.findings.filter((f) => f.runId === v.runId && f.reviewer === v.reviewer);
  return (
    <details data-testid="earlier-rounds">
      <summary>{t('review.earlier', { count: latest - 1 })}</summary>
      <ul className={styles.checks}>
        {review.verdicts.filter((v) => v.round < latest).map((v) => (
          <li key={v.runId + v.reviewer}>
            {t('review.roundShort', { round: v.round })} <strong>{t(`reviewer.${v.reviewer}`, { defaultValue: v.reviewer })}</strong>: {t(`verdict.${v.verdict}`)}
            {v.summary ? ` — ${visible(v.summary)}` : ''}
            <ul>
              {findingsOf(v).map((f, i) => (
                <li key={i} className={styles.finding}>
                  <span className={styles.severity}>{t(`severity.${f.severity}`, { defaultValue: f.severity })}</span> {f.file ? `${oneLine(f.file)}${f.line ? `:${f.line}` : ''}: ` : ''}
                  {visible(f.message)}
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
    </details>
  );
}

/** `onShow`: told which version the picker shows (the gate says so when it is not the task's own). */
export default function ReviewPanel({ task, versions, onShow }: { task: Task; versions: NonNullable<TaskDetail['versions']>; onShow?(version: number): void }) {
  const { t, i18n } = useTranslation();
  const [version, setVersion] = useState(task.version);
  const [checks, setChecks] = useState<CheckResult[] | null>(null);
  const [review, setReview] = useState<FindingsResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const other = version !== task.version ? version : undefined;

  useEffect(() => {
    let live = true;
    setError(null);
    Promise.all([api.checks(task.id, other), api.findings(task.id, other)]).then(
      ([c, f]) => {
        if (!live) return;
        setChecks(c.checks);
        setReview(f);
      },
      (err: Error) => live && setError(errorText(t, i18n.language, err)),
    );
    return () => {
      live = false;
    };
  }, [task.id, other, task.updatedAt]);

  // The gate decides on the newest round; earlier rounds are what the agent was asked to fix, shown folded.
  const latest = Math.max(0, ...(review?.verdicts ?? []).map((v) => v.round));
  const findings = (review?.findings ?? []).filter((f) => f.round === latest);
  const general = findings.filter((f) => !f.file);
  return (
    <section className={styles.review} aria-labelledby="review-h">
      <h3 id="review-h">{t('review.title')}</h3>
      {versions.length > 1 && (
        <label className={styles.row}>
          {t('review.version')}
          <select
            value={version}
            onChange={(e) => {
              setVersion(Number(e.target.value));
              onShow?.(Number(e.target.value));
            }}
          >
            {versions.map((v) => (
              <option key={v.id} value={v.version}>
                v{v.version} · {t(`status.${v.status}`)}
              </option>
            ))}
          </select>
        </label>
      )}
      {error && <p role="alert" className={styles.err}>{error}</p>}
      <h4>{t('review.checks')}</h4>
      {checks ? <Checks checks={checks} /> : !error && <p className={styles.muted}>{t('app.loading')}</p>}
      <h4>{t('review.verdicts')}</h4>
      {review && review.verdicts.length === 0 && <p className={styles.muted}>{t('review.noVerdicts')}</p>}
      {latest > 1 && <p className={styles.muted}>{t('review.round', { round: latest })}</p>}
      <ul className={styles.checks}>
        {review?.verdicts.filter((v) => v.round === latest).map((v) => (
          <li key={v.runId + v.reviewer} data-testid="verdict">
            <strong>{t(`reviewer.${v.reviewer}`, { defaultValue: v.reviewer })}</strong>: <span className={v.verdict === 'approve' ? styles.ok : styles.err}>{t(`verdict.${v.verdict}`)}</span>
            {v.summary ? ` — ${visible(v.summary)}` : ''}
          </li>
        ))}
        {general.map((f, i) => (
          <li key={`g${i}`} className={styles.finding}>
            <span className={styles.severity}>{t(`severity.${f.severity}`, { defaultValue: f.severity })}</span> {t('review.byReviewer', { reviewer: t(`reviewer.${f.reviewer}`, { defaultValue: f.reviewer }) })}: {visible(f.message)}
          </li>
        ))}
      </ul>
      {review && latest > 1 && <EarlierReviews review={review} latest={latest} />}
      <h4>{t('review.changes')}</h4>
      <DiffViewer taskId={task.id} version={other} readOnly={other !== undefined} findings={findings} refreshKey={task.status} />
    </section>
  );
}
