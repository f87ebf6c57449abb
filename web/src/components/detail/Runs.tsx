/** Runs with tokens and cost, and the scheduler's score breakdown for the last claim. */
import { useTranslation } from 'react-i18next';
import type { Run, SchedulerDecision } from '../../api/types.js';
import { severalDaemons, useDaemons } from '../../stores/daemons.js';
import { oneLine } from '../hiddenChars.js';
import { translateReason } from '../reasons.js';
import styles from './Detail.module.css';

/** The run's attempt as a person counts it: the first execute run is attempt 1, the first review too. */
export function attemptOf(runs: Run[], i: number): number {
  return runs.slice(0, i + 1).filter((r) => r.kind === runs[i]!.kind).length;
}

const fmtMs = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

export function Runs({ runs, decision }: { runs: Run[]; decision: SchedulerDecision | null }) {
  return (
    <>
      <RunTable runs={runs} />
      <ScoreBreakdown decision={decision} />
    </>
  );
}

/**
 * Each run (kind, attempt, status, model, tokens, cost, duration; its error on hover), then the totals. The daemon
 * that ran each, once another daemon shares the database or one of these runs was another's (`run show`'s
 * `daemon:` line): a single machine's board keeps its columns.
 */
function RunTable({ runs }: { runs: Run[] }) {
  const { t } = useTranslation();
  const daemons = useDaemons((s) => s.list);
  const withDaemon = severalDaemons(daemons) || (daemons !== null && runs.some((r) => r.owner !== null && r.owner !== daemons.self));
  const totals = runs.reduce((a, r) => ({ i: a.i + r.inputTokens, o: a.o + r.outputTokens, c: a.c + r.costUsd }), { i: 0, o: 0, c: 0 });
  return (
    <section className={styles.section} aria-labelledby="runs-h">
      <h3 id="runs-h">{t('runs.title')}</h3>
      {runs.length === 0 ? (
        <p className={styles.muted}>{t('runs.none')}</p>
      ) : (
        <table data-testid="runs">
          <thead>
            <tr>
              <th>{t('runs.kind')}</th>
              <th>{t('runs.attempt')}</th>
              <th>{t('runs.status')}</th>
              <th>{t('runs.model')}</th>
              <th>{t('runs.tokens')}</th>
              <th>{t('runs.cost')}</th>
              <th>{t('runs.duration')}</th>
              {withDaemon && <th>{t('runs.daemon')}</th>}
            </tr>
          </thead>
          <tbody>
            {runs.map((r, i) => (
              <tr key={r.id} title={r.error ? translateReason(t, r.error) : undefined}>
                <td>{t(`runKind.${r.kind}`)}</td>
                <td>{attemptOf(runs, i)}</td>
                <td className={r.status === 'failed' ? styles.err : undefined}>{t(`runStatus.${r.status}`)}</td>
                <td>{r.model ?? '—'}</td>
                <td>
                  {r.inputTokens.toLocaleString()} / {r.outputTokens.toLocaleString()}
                </td>
                <td>${r.costUsd.toFixed(4)}</td>
                <td>{r.endedAt ? fmtMs(r.endedAt - r.startedAt) : t('runs.running')}</td>
                {withDaemon && <td>{r.owner === null ? '—' : oneLine(r.owner)}</td>}
              </tr>
            ))}
            <tr>
              <th>{t('runs.total')}</th>
              <td />
              <td />
              <td />
              <td>
                {totals.i.toLocaleString()} / {totals.o.toLocaleString()}
              </td>
              <td>${totals.c.toFixed(4)}</td>
              <td />
              {withDaemon && <td />}
            </tr>
          </tbody>
        </table>
      )}
    </section>
  );
}

/** The scheduler's last claim of the task: its score, each term as a bar, and how many tasks it beat; or that it was taken over, from whom. */
function ScoreBreakdown({ decision }: { decision: SchedulerDecision | null }) {
  const { t, i18n } = useTranslation();
  const parts = decision ? (Object.entries(decision.breakdown) as [string, number][]) : [];
  const scale = Math.max(1e-9, ...parts.map(([, v]) => Math.abs(v)));
  const said = decision ? { score: decision.score.toFixed(3), owner: decision.owner, at: new Date(decision.at).toLocaleTimeString(i18n.language) } : {};
  return (
    <section className={styles.section} aria-labelledby="score-h">
      <h3 id="score-h">{t('score.title')}</h3>
      {!decision ? (
        <p className={styles.muted}>{t('score.none')}</p>
      ) : (
        <>
          <p>
            {decision.takenOver
              ? t('score.takenOver', { ...said, from: decision.takenOver.from, status: t(`status.${decision.takenOver.status}`) })
              : t('score.total', said)}
          </p>
          <table aria-label={t('score.title')}>
            <tbody>
              {parts.map(([k, v]) => (
                <tr key={k}>
                  <th>{t(`score.${k}`)}</th>
                  <td>{v.toFixed(3)}</td>
                  <td style={{ width: '50%' }}>
                    <span className={v < 0 ? styles.negBar : styles.bar} style={{ width: `${(Math.abs(v) / scale) * 100}%` }} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {decision.competitors.length > 0 && <p className={styles.muted}>{t('score.beat', { count: decision.competitors.length })}</p>}
        </>
      )}
    </section>
  );
}
