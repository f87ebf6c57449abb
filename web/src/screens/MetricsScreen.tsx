/** Throughput (tasks done per hour), run durations and cost, as plain SVG charts. */
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../api/client.js';
import type { Metrics } from '../api/types.js';
import { BarChart } from '../components/BarChart.js';
import { useProjects } from '../stores/projects.js';
import { useTasks } from '../stores/tasks.js';
import styles from './Screens.module.css';

export function MetricsScreen() {
  const { t } = useTranslation();
  const projectId = useProjects((s) => s.selectedId);
  const projects = useProjects((s) => s.projects);
  // How many tasks have moved since load: a number, so other events do not re-render the charts.
  const moved = useTasks((s) => Object.keys(s.touched).length);
  const [m, setM] = useState<Metrics | null>(null);
  const [done, setDone] = useState<{ label: string; value: number }[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!projectId) return;
    api.metrics(projectId).then(setM, (e: Error) => setError(e.message));
    // Throughput: transitions to done in the last 1,000 status events (the newest, asked for newest first),
    // by hour, oldest hour first; each hour its own bar, so one day's 10:00 does not add to another's.
    api.events({ projectId, type: 'task.status', order: 'newest', limit: 1000 }).then(({ events }) => {
      const buckets = new Map<number, number>();
      for (const e of events) {
        if (e.payload.to !== 'done') continue;
        const hour = new Date(e.at);
        hour.setMinutes(0, 0, 0);
        buckets.set(hour.getTime(), (buckets.get(hour.getTime()) ?? 0) + 1);
      }
      setDone([...buckets].sort(([a], [b]) => a - b).map(([at, value]) => ({ label: hourLabel(at), value })));
    }, (e: Error) => setError(e.message));
  }, [projectId, moved]);
  if (!projectId) return <p className={styles.pad}>{t('board.pickProject')}</p>;
  const name = (id: string) => projects.find((p) => p.id === id)?.name ?? id;
  return (
    <div className={styles.page}>
      <h2>{t('metrics.title')}</h2>
      {error && <p role="alert" className={styles.error}>{error}</p>}
      {m && (
        <div className={styles.grid}>
          <div className={styles.card}>
            <h3>{t('metrics.byStatus')}</h3>
            <BarChart label={t('metrics.byStatus')} data={Object.entries(m.tasksByStatus).map(([s, n]) => ({ label: t(`status.${s}`), value: n }))} />
          </div>
          <div className={styles.card}>
            <h3>{t('metrics.throughput')}</h3>
            {done.length ? <BarChart label={t('metrics.throughput')} data={done} /> : <p className={styles.muted}>{t('metrics.noData')}</p>}
          </div>
          <div className={styles.card}>
            <h3>{t('metrics.durations')}</h3>
            {m.runDurations.length ? (
              <BarChart label={t('metrics.durations')} unit="s" data={m.runDurations.flatMap((d) => [
                { label: `${t(`runKind.${d.kind}`, { defaultValue: d.kind })} p50`, value: d.p50Ms / 1000 },
                { label: `${t(`runKind.${d.kind}`, { defaultValue: d.kind })} p95`, value: d.p95Ms / 1000 },
              ])} />
            ) : (
              <p className={styles.muted}>{t('metrics.noData')}</p>
            )}
          </div>
          <div className={styles.card}>
            <h3>{t('metrics.cost')}</h3>
            {m.usage.length ? (
              <>
                <BarChart label={t('metrics.cost')} unit="$" data={m.usage.map((u) => ({ label: name(u.projectId), value: u.costUsd }))} />
                <table>
                  <tbody>
                    {m.usage.map((u) => (
                      <tr key={u.projectId}>
                        <td className={styles.nameBesideFigures}>{name(u.projectId)}</td>
                        <td className={styles.figures}>{t('metrics.runs', { count: u.runs })}</td>
                        <td className={styles.figures}>{t('metrics.tokens', { input: u.inputTokens.toLocaleString(), output: u.outputTokens.toLocaleString() })}</td>
                        <td className={styles.figure} data-testid="project-cost">${u.costUsd.toFixed(4)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </>
            ) : (
              <p className={styles.muted}>{t('metrics.noData')}</p>
            )}
          </div>
        </div>
      )}
    </div>
  );
}

/** `10:00`, or `12-02 10:00` for an hour before today. */
function hourLabel(at: number): string {
  const d = new Date(at);
  const hh = `${String(d.getHours()).padStart(2, '0')}:00`;
  if (d.toDateString() === new Date().toDateString()) return hh;
  return `${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')} ${hh}`;
}
