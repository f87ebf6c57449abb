/**
 * The settings screen's list of agent tools (claude, codex, gemini, cursor,
 * opencode): installed on the daemon's machine or not, logged in or not, and
 * how to use one. Asked once when the screen opens; the check runs the tools'
 * status commands, so it is not polled.
 */
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { agents, type AgentToolStatus } from '../api/agents.js';
import styles from '../screens/Screens.module.css';

export function AgentTools() {
  const { t } = useTranslation();
  const [list, setList] = useState<AgentToolStatus[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    agents.list().then((l) => live && setList(l), (err: Error) => live && setError(err.message));
    return () => {
      live = false;
    };
  }, []);
  const login = (a: AgentToolStatus) => (a.loggedIn ? t('agents.loggedIn') : a.loggedIn === false ? t('agents.loggedOut') : t('agents.unknown'));
  return (
    <div className={styles.card} data-testid="agent-tools">
      <h3>{t('agents.title')}</h3>
      {error && <p role="alert">{t('agents.loadFailed', { message: error })}</p>}
      {!list && !error && <p className={styles.muted}>{t('agents.checking')}</p>}
      {list && (
        <ul>
          {list.map((a) => (
            <li key={a.kind} data-kind={a.kind}>
              <strong>{a.name}</strong> ({a.kind}): {a.installed ? t('agents.installed') : t('agents.missing')}
              {a.installed && <>, {login(a)}</>}
              <div className={styles.muted}>{a.detail}</div>
            </li>
          ))}
        </ul>
      )}
      <p className={styles.muted}>{t('agents.hint')}</p>
    </div>
  );
}
