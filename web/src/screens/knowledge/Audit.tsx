/** The audit report: a summary, the findings, and the prune plan on request. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { knowledge, type AuditResult } from '../../api/knowledge.js';
import styles from '../Screens.module.css';
import { Unavailable, useLoad } from './common.js';

export function Audit({ projectId }: { projectId: string }) {
  const { t } = useTranslation();
  const [prune, setPrune] = useState(false);
  const { result, error } = useLoad(() => knowledge.audit(projectId, prune), [projectId, prune]);
  if (error) return <p role="alert" className={styles.error}>{error}</p>;
  if (!result) return <p>{t('app.loading')}</p>;
  if (!result.available) return <Unavailable />;
  const r: AuditResult = result.data;
  return (
    <div className={styles.card} data-testid="audit-report">
      <p>
        {t('knowledge.auditSummary', {
          specActive: r.spec_health.active,
          specTotal: r.spec_health.total,
          khActive: r.knowhow.active,
          khTotal: r.knowhow.total,
          sessions: r.pipeline.sessions,
          pending: r.pipeline.pending_observed + r.pipeline.pending_corroborated,
          promoted: r.pipeline.promoted,
        })}
      </p>
      <p className={styles.muted}>{t('knowledge.generated', { at: new Date(r.generated_at).toLocaleString() })}</p>
      {r.spec_health.total === 0 && r.knowhow.total === 0 && <p className={styles.muted} data-testid="audit-empty">{t('knowledge.auditEmpty')}</p>}
      {r.findings.length === 0 ? (
        <p className={styles.muted}>{t('knowledge.auditClean')}</p>
      ) : (
        <table aria-label={t('knowledge.tab.audit')}>
          <thead>
            <tr><th>{t('knowledge.severity')}</th><th>{t('knowledge.store')}</th><th>{t('knowledge.where')}</th><th>{t('knowledge.message')}</th><th>{t('knowledge.action')}</th></tr>
          </thead>
          <tbody>
            {r.findings.map((f) => (
              <tr key={f.id}>
                <td>{f.priority}</td>
                <td>{f.store}</td>
                <td><code>{f.target}</code></td>
                <td>{f.subtype}: {f.evidence}</td>
                <td>{t(`knowledge.actionName.${f.recommended_action}`)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <label className={styles.row}>
        <input type="checkbox" checked={prune} onChange={(e) => setPrune(e.target.checked)} /> {t('knowledge.showPlan')}
      </label>
      {prune && r.prune_plan && (
        <>
          <h3>{t('knowledge.prunePlan')}</h3>
          {r.prune_plan.length === 0 ? <p className={styles.muted}>{t('knowledge.planEmpty')}</p> : (
            <ul>{r.prune_plan.map((p) => <li key={p.id}>{p.action} <code>{p.target_id}</code> → <code>{p.successor_id}</code> ({p.reason})</li>)}</ul>
          )}
          <p className={styles.muted}>{t('knowledge.planHint')}</p>
        </>
      )}
    </div>
  );
}
