/**
 * Says when the daemon is unreachable, and when it came back; what the daemon reports wrong with its disk (no new tasks
 * start meanwhile), a project's shared remote or its folder; and whether its agents run sandboxed (a warning when they run as the
 * user without anyone having chosen it).
 */
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { LANGUAGES, setLanguage, type Language } from '../i18n/index.js';
import { useConnection } from '../stores/connection.js';
import { useHealth, type AgentSandbox } from '../stores/health.js';
import styles from './Banner.module.css';

/** Conditions the board words in the chosen language (the daemon's message stays in the tooltip); any other shows its message. */
const KNOWN = new Set(['DISK_FULL', 'HOME_READ_ONLY', 'REMOTE_UNREACHABLE', 'PROJECT_FOLDER_MISSING', 'SCHEMA_NEWER']);

export function Banner() {
  const { t, i18n } = useTranslation();
  const state = useConnection((s) => s.state);
  const reconnectedAt = useConnection((s) => s.reconnectedAt);
  const unauthorized = useConnection((s) => s.unauthorized);
  const conditions = useHealth((s) => s.conditions);
  const sandbox = useHealth((s) => s.agentSandbox);
  return (
    <header className={styles.bar}>
      <span className={styles.brand}>Maestro</span>
      <span role="status" aria-live="polite" className={state === 'open' ? styles.ok : styles.bad} data-testid="connection">
        {unauthorized ? t('conn.unauthorized') : state === 'open' ? (reconnectedAt ? t('conn.reconnected') : t('conn.live')) : state === 'connecting' ? t('conn.connecting') : t('conn.lost')}
      </span>
      {conditions.map((c) => (
        <span key={`${c.code}:${c.path}`} role="alert" className={styles.bad} data-testid="health" title={c.message}>
          {KNOWN.has(c.code) ? t(`health.${c.code}`, { path: c.path }) : c.message}
        </span>
      ))}
      {sandbox && (
        <span data-testid="agent-sandbox" className={sandbox.kind === 'bwrap' ? (sandbox.sockets ? styles.muted : styles.ok) : sandbox.unintended ? styles.bad : styles.muted} title={sandboxTitle(sandbox, t)}>
          {t(`sandbox.${sandbox.kind}`)}{sandbox.kind === 'bwrap' && sandbox.sockets ? ' (!)' : ''}
        </span>
      )}
      <label className={styles.lang}>
        <span>{t('app.language')}</span>
        <select aria-label={t('app.language')} value={i18n.language} onChange={(e) => setLanguage(e.target.value as Language)}>
          {Object.entries(LANGUAGES).map(([code, name]) => (
            <option key={code} value={code}>
              {name}
            </option>
          ))}
        </select>
      </label>
    </header>
  );
}

/** The sandbox's tooltip: what it keeps from agents, what it leaves open (abstract sockets this kernel cannot scope), its network, or why there is none. */
function sandboxTitle(sandbox: AgentSandbox, t: TFunction): string {
  if (sandbox.kind === 'off') return t('sandbox.offTitle', { reason: sandbox.reason ?? '' });
  const kept = sandbox.sockets ? t('sandbox.socketsTitle', { reason: sandbox.sockets }) : t('sandbox.bwrapTitle');
  const network = { shared: 'sandbox.networkShared', proxied: 'sandbox.networkProxied', none: 'sandbox.networkNone' } as const;
  return sandbox.network ? `${kept} ${t(network[sandbox.network])}` : kept;
}
